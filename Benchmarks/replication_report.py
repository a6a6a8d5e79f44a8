#!/usr/bin/python3
"""The report of Benchmarks/replication-bench.sh: reads the runs it wrote to OUT and the facts it
gathered, and writes OUT/replication.json, OUT/replication.md and OUT/replication-failover.svg
(the fail-over timeline); prints the Markdown.

    replication_report.py FACTS.json OUT

The fail-over of one kill is the longest gap between two consecutive acknowledgements (of all
writers together) from the last acknowledgement before the kill to the first one after the
killed host's restart: no writer got an acknowledgement for that long.
"""
import csv
import json
import os
import statistics
import sys


def load(directory, name):
    with open(os.path.join(directory, name)) as file:
        return json.load(file)


def acknowledgements(path):
    """(time in s, writer) of every acknowledgement, in time order."""
    with open(path) as file:
        return [(int(at) / 1e9, int(writer)) for at, writer in (line.split() for line in file if line.strip())]


def kills(directory, name):
    with open(os.path.join(directory, name)) as file:
        return [{"round": int(row["round"]), "host": row["host"], "killed_at": float(row["killed_at"]),
                 "restarted_at": float(row["restarted_at"])} for row in csv.DictReader(file)]


def longest_gap(times, killed_at, restarted_at):
    """The longest gap between consecutive `times` from the last one before `killed_at` to the
    first one from `restarted_at` on, and when it began; None without a time before the kill."""
    before = [i for i, at in enumerate(times) if at < killed_at]
    if not before:
        return None
    after = [i for i, at in enumerate(times) if at >= restarted_at]
    first, last = before[-1], (after[0] if after else len(times) - 1)
    longest, began = 0.0, times[first]
    for i in range(first, last):
        if times[i + 1] - times[i] > longest:
            longest, began = times[i + 1] - times[i], times[i]
    return longest, began


def gaps(acks, rounds):
    """Each kill's fail-over (the longest gap in every writer's acknowledgements together), where
    it began after the kill, and the longest any one writer went without an acknowledgement."""
    merged = [at for at, _ in acks]
    writers = {}
    for at, writer in acks:
        writers.setdefault(writer, []).append(at)
    found = []
    for kill in rounds:
        gap = longest_gap(merged, kill["killed_at"], kill["restarted_at"])
        if gap is None:
            found.append(None)
            continue
        waits = [longest_gap(times, kill["killed_at"], kill["restarted_at"]) for times in writers.values()]
        # A gap that began well before the kill is the previous kill's, still open: the writers had
        # not been acknowledged again when this kill came. Shown, not counted twice.
        found.append({"round": kill["round"], "host": kill["host"], "seconds": gap[0], "began_after_kill": gap[1] - kill["killed_at"],
                      "longest_writer_wait": max(w[0] for w in waits if w), "unrecovered": gap[1] < kill["killed_at"] - 1.0})
    return found


def summary(found):
    """p50 and max over the kills that found the writers served (see gaps)."""
    counted = [g for g in found if g and not g["unrecovered"]]
    values = [g["seconds"] for g in counted]
    waits = [g["longest_writer_wait"] for g in counted]
    return {"p50": statistics.median(values) if values else None, "max": max(values) if values else None, "count": len(values),
            "longest_writer_wait": max(waits) if waits else None, "unrecovered": sum(1 for g in found if g and g["unrecovered"])}


def cpu_per_write(run, pids):
    spent = (run.get("server_cpu") or {}).get("processes_us", {})
    requests = run.get("requests") or 0
    return sum(spent.get(str(pid), 0.0) for pid in pids) / requests if requests else None


def ratio(value, base):
    return "n/a" if value is None or not base else "%.2f" % (value / base)


def number(value, decimals=0):
    return "n/a" if value is None else ("{:,.%df}" % decimals).format(value)


def escaped(text):
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def timeline(panels):
    """Acknowledgements per second (250 ms bins) over each fail-over phase, one panel per system,
    kills as red lines, restarts as dashed green ones, each kill's fail-over written above it."""
    width, panel_h, left, right, top, gap = 900, 190, 70, 20, 40, 60
    height = top + len(panels) * (panel_h + gap)
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="11">'
           % (width, height, width, height), '<rect width="100%" height="100%" fill="white"/>',
           '<text x="%d" y="24" font-size="14" font-weight="bold">Fail-over: acknowledgements/s of the retrying writers; '
           'leader\'s host killed (red), restarted (green)</text>' % left]
    for index, (title, acks, rounds, found) in enumerate(panels):
        y0 = top + index * (panel_h + gap) + 20
        if not acks:
            continue
        times = [at for at, _ in acks]
        start, end = times[0], times[-1]
        span = max(end - start, 1.0)
        bins = [0] * (int(span / 0.25) + 1)
        for at in times:
            bins[int((at - start) / 0.25)] += 4
        highest = max(bins) or 1
        plot_w = width - left - right

        def x(at):
            return left + plot_w * (at - start) / span

        def y(rate):
            return y0 + panel_h * (1 - rate / highest)

        out.append('<text x="%d" y="%d" font-size="13" font-weight="bold">%s</text>' % (left, y0 - 6, escaped(title)))
        out.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#444"/>' % (left, y0, plot_w, panel_h))
        for fraction in (0, 0.5, 1):
            out.append('<text x="%d" y="%.1f" text-anchor="end">%s</text>' % (left - 4, y(highest * fraction) + 4, "{:,.0f}".format(highest * fraction)))
        points = " ".join("%.1f,%.1f" % (x(start + i * 0.25), y(rate)) for i, rate in enumerate(bins))
        out.append('<polyline fill="none" stroke="#1f77b4" stroke-width="1" points="%s"/>' % points)
        for kill, gap_found in zip(rounds, found):
            out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#d62728" stroke-width="1.5"/>'
                       % (x(kill["killed_at"]), y0, x(kill["killed_at"]), y0 + panel_h))
            out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#2ca02c" stroke-dasharray="4 3"/>'
                       % (x(kill["restarted_at"]), y0, x(kill["restarted_at"]), y0 + panel_h))
            if gap_found:
                out.append('<text x="%.1f" y="%d" text-anchor="middle" fill="#d62728">%.2f s</text>'
                           % (x(kill["killed_at"]), y0 + 12, gap_found["seconds"]))
        for second in range(0, int(span) + 1, 10):
            out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#444"/>' % (x(start + second), y0 + panel_h, x(start + second), y0 + panel_h + 4))
            out.append('<text x="%.1f" y="%d" text-anchor="middle">%d</text>' % (x(start + second), y0 + panel_h + 15, second))
        out.append('<text x="%.1f" y="%d" text-anchor="middle">seconds</text>' % (left + plot_w / 2, y0 + panel_h + 30))
        out.append('<text transform="translate(16 %.1f) rotate(-90)" text-anchor="middle">acks/s</text>' % (y0 + panel_h / 2))
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main(facts_path, directory):
    with open(facts_path) as file:
        facts = json.load(file)
    settings = facts["settings"]
    points = {}
    for point in facts["lyceum"]:
        run = load(directory, point["file"])
        workers, brokers = cpu_per_write(run, point["workers"]), cpu_per_write(run, point["brokers"])
        points[point["replicas"]] = {
            "file": point["file"], "writes_per_second": run["requests_per_second"], "requests": run["requests"],
            "errors": run["error_count"], "p50_us": run["latency_us"]["p50"], "p99_us": run["latency_us"]["p99"],
            "workers_cpu_us_per_write": workers, "brokers_cpu_us_per_write": brokers,
            "server_cpu_us_per_write": None if workers is None else workers + (brokers or 0.0), "load_average": point["load"]}
    nats_run = load(directory, facts["jetstream"]["file"])
    nats = {"publishes_per_second": nats_run["requests_per_second"], "requests": nats_run["requests"], "errors": nats_run["error_count"],
            "p50_us": nats_run["latency_us"]["p50"], "p99_us": nats_run["latency_us"]["p99"],
            "server_cpu_us_per_publish": (nats_run.get("server_cpu") or {}).get("us_per_request"), "load_average": settings["nats_load"]}
    lyceum_acks = acknowledgements(facts["acknowledgements"]["lyceum"])
    nats_acks = acknowledgements(facts["acknowledgements"]["jetstream"])
    lyceum_rounds = kills(directory, "replication-lyceum-kills.csv")
    nats_rounds = kills(directory, "replication-jetstream-kills.csv")
    lyceum_gaps, nats_gaps = gaps(lyceum_acks, lyceum_rounds), gaps(nats_acks, nats_rounds)
    lyceum_failover = load(directory, "replication-lyceum-failover.json") | {"gaps": lyceum_gaps, "summary": summary(lyceum_gaps)}
    nats_failover = load(directory, "replication-jetstream-failover.json") | {"gaps": nats_gaps, "summary": summary(nats_gaps)}
    result = {"machine": facts["machine"], "settings": settings, "lyceum": {"throughput": points, "failover": lyceum_failover},
              "jetstream": {"throughput": nats, "failover": nats_failover}}
    with open(os.path.join(directory, "replication.json"), "w") as file:
        json.dump(result, file, indent=2)
        file.write("\n")
    with open(os.path.join(directory, "replication-failover.svg"), "w") as file:
        file.write(timeline([("Lyceum R=3: %d writers on books.p0, its leader's host killed" % settings["writers"], lyceum_acks, lyceum_rounds, lyceum_gaps),
                             ("JetStream R3: %d publishers, the stream leader's server killed" % settings["writers"], nats_acks, nats_rounds, nats_gaps)]))

    one, three = points.get(1, {}), points.get(3, {})
    ls, ns = lyceum_failover["summary"], nats_failover["summary"]
    lines = [
        "| Measurement | Lyceum | JetStream R3 | Lyceum ÷ JetStream |",
        "|---|---:|---:|---:|",
        "| durable writes/s, R=3 (%d in flight) vs publishes/s with acks | %s | %s | %s |" % (
            settings["in_flight"], number(three.get("writes_per_second")), number(nats["publishes_per_second"]),
            ratio(three.get("writes_per_second"), nats["publishes_per_second"])),
        "| durable writes/s, R=1 | %s | | |" % number(one.get("writes_per_second")),
        "| R=3 ÷ R=1 writes/s (the cost of replication) | %s | | |" % ratio(three.get("writes_per_second"), one.get("writes_per_second")),
        "| server CPU per write, µs, R=3 (workers + brokers) vs nats-server ×3 per publish | %s | %s | %s |" % (
            number(three.get("server_cpu_us_per_write"), 1), number(nats["server_cpu_us_per_publish"], 1),
            ratio(three.get("server_cpu_us_per_write"), nats["server_cpu_us_per_publish"])),
        "| server CPU per write, µs, R=1 (workers + brokers) | %s | | |" % number(one.get("server_cpu_us_per_write"), 1),
        "| workers' CPU per write, µs: R=3 / R=1 | %s / %s | | |" % (
            number(three.get("workers_cpu_us_per_write"), 1), number(one.get("workers_cpu_us_per_write"), 1)),
        "| p50 / p99 of a write, ms, R=3 vs publish | %s / %s | %s / %s | |" % (
            number((three.get("p50_us") or 0) / 1000, 2), number((three.get("p99_us") or 0) / 1000, 2),
            number(nats["p50_us"] / 1000, 2), number(nats["p99_us"] / 1000, 2)),
        "| fail-over p50, s (kills of the leader's host counted, of %d) | %s (%d) | %s (%d) | %s |" % (
            settings["kills"], number(ls["p50"], 2), ls["count"], number(ns["p50"], 2), ns["count"], ratio(ls["p50"], ns["p50"])),
        "| fail-over max, s | %s | %s | %s |" % (number(ls["max"], 2), number(ns["max"], 2), ratio(ls["max"], ns["max"])),
        "| longest any one writer went without an acknowledgement over a kill, s | %s | %s | %s |" % (
            number(ls["longest_writer_wait"], 2), number(ns["longest_writer_wait"], 2), ratio(ls["longest_writer_wait"], ns["longest_writer_wait"])),
        "| acknowledged writes lost (read back at the end) | %d of %d | %d of %d | |" % (
            lyceum_failover["lost"], lyceum_failover["acknowledged"], nats_failover["lost"], nats_failover["acknowledged"]),
        "| applied twice (Lyceum: a title listed twice; JetStream: a message id stored twice) | %d | %d | |" % (
            lyceum_failover["doubled"], nats_failover["duplicated"]),
        "| errors in the throughput runs | R=1 %s, R=3 %s | %d | |" % (one.get("errors", "n/a"), three.get("errors", "n/a"), nats["errors"]),
        "",
        "| kill | Lyceum: host killed | fail-over s (gap began s after the kill) | JetStream: server killed | fail-over s (began after) |",
        "|---:|---|---:|---|---:|",
    ]
    for index in range(max(len(lyceum_gaps), len(nats_gaps))):
        cells = []
        for found in (lyceum_gaps, nats_gaps):
            g = found[index] if index < len(found) else None
            cells += [g["host"], "%.2f (%.2f)%s" % (g["seconds"], g["began_after_kill"], " †" if g["unrecovered"] else "")] if g else ["n/a", "n/a"]
        lines.append("| %d | %s | %s | %s | %s |" % (index + 1, *cells))
    if ls["unrecovered"] or ns["unrecovered"]:
        lines += ["", "† not counted: the writers had had no acknowledgement since before this kill (the gap began over 1 s "
                  "before it), so it is the previous kill's gap, still open after that host's restart."]
    lines += ["", "Load average: JetStream run %s; Lyceum R=1 %s; R=3 %s." % (
        nats["load_average"], one.get("load_average", "n/a"), three.get("load_average", "n/a"))]
    print("\n".join(lines))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])

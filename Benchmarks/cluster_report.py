#!/usr/bin/python3
"""The report of Benchmarks/cluster-bench.sh: reads the `lyceum bench --json` results it wrote and
the facts it gathered (a JSON file of points, each with its run's file, the pids it measured and
the load average around it), and writes OUT/cluster.json, OUT/cluster.md and OUT/cluster.svg.

    cluster_report.py FACTS.json OUT

A broker's routing ceiling is one core's second divided by the broker's CPU time per request
(1 s / µs per request): what one broker forwards when its thread has a core to itself.
"""
import json
import os
import sys


def per_request(run, pids):
    """Microseconds of CPU the processes `pids` spent per measured request of `run`."""
    cpu = run.get("server_cpu") or {}
    spent = cpu.get("processes_us", {})
    requests = run.get("requests") or 0
    if not requests:
        return None
    return sum(spent.get(str(pid), 0.0) for pid in pids) / requests


def measured(directory, point):
    """One point's figures from its run's JSON."""
    with open(os.path.join(directory, point["file"])) as file:
        run = json.load(file)
    broker = per_request(run, [point["broker_pid"]])
    workers = per_request(run, point["worker_pids"]) if point["worker_pids"] else None
    return {
        "label": run["label"], "workers": point["workers"], "file": point["file"],
        "requests": run["requests"], "errors": run["error_count"], "seconds": run["seconds"],
        "requests_per_second": run["requests_per_second"],
        "p50_us": run["latency_us"]["p50"], "p99_us": run["latency_us"]["p99"],
        "broker_cpu_us_per_request": broker, "workers_cpu_us_per_request": workers,
        "appends_per_sync": point.get("appends_per_sync"),
        "load_average": {"before": point["load_before"], "after": point["load_after"]},
    }


def ratio(value, base):
    return "n/a" if not base or value is None else "%.2f" % (value / base)


def number(value, decimals=0):
    return "n/a" if value is None else ("{:,.%df}" % decimals).format(value)


def ceiling(point):
    cpu = point["broker_cpu_us_per_request"]
    return 1e6 / cpu if cpu else None


def svg_chart(points, reference, title, partitions):
    """writes/s (bars) and, on the same scale, the 1-worker figure times the workers (the dashed line
    that perfect scaling would follow) and the unpartitioned reference (dotted), against the number
    of worker processes."""
    width, height, left, right, top, bottom = 640, 400, 80, 30, 50, 60
    plot_w, plot_h = width - left - right, height - top - bottom
    base = points[0]["requests_per_second"] / points[0]["workers"]
    highest = max([p["requests_per_second"] for p in points] + [base * p["workers"] for p in points] + [reference["requests_per_second"]])
    step = 1
    while highest / step > 8:
        for factor in (2, 2.5, 2):
            if highest / step > 8:
                step *= factor
    top_value = step * -(-highest // step)

    def y(value):
        return top + plot_h * (1 - value / top_value)

    slot = plot_w / len(points)
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" '
           'font-family="sans-serif" font-size="12">' % (width, height, width, height),
           '<rect width="100%" height="100%" fill="white"/>',
           '<text x="%d" y="26" font-size="16" font-weight="bold">%s</text>' % (left, escaped(title))]
    value = 0
    while value <= top_value + step / 2:
        out.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>' % (left, y(value), left + plot_w, y(value)))
        out.append('<text x="%d" y="%.1f" text-anchor="end">%s</text>' % (left - 6, y(value) + 4, "{:,.0f}".format(value)))
        value += step
    ideal = []
    for index, point in enumerate(points):
        centre = left + slot * (index + 0.5)
        rate = point["requests_per_second"]
        out.append('<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#1f77b4"/>'
                   % (centre - slot * 0.3, y(rate), slot * 0.6, top + plot_h - y(rate)))
        out.append('<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>' % (centre, y(rate) - 6, "{:,.0f}".format(rate)))
        out.append('<text x="%.1f" y="%d" text-anchor="middle">%d</text>' % (centre, top + plot_h + 18, point["workers"]))
        ideal.append("%.1f,%.1f" % (centre, y(base * point["workers"])))
    out.append('<polyline fill="none" stroke="#d62728" stroke-width="2" stroke-dasharray="6 4" points="%s"/>' % " ".join(ideal))
    out.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#444"/>' % (left, top, plot_w, plot_h))
    out.append('<text x="%.1f" y="%d" text-anchor="middle">worker processes (%d partitions shared evenly)</text>'
               % (left + plot_w / 2, height - 22, partitions))
    out.append('<text transform="translate(18 %.1f) rotate(-90)" text-anchor="middle">durable writes/s</text>' % (top + plot_h / 2))
    out.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#d62728" stroke-width="2" stroke-dasharray="6 4"/>'
               % (left + 10, top + 12, left + 40, top + 12))
    out.append('<text x="%d" y="%d">1 worker × N (linear scaling)</text>' % (left + 46, top + 16))
    level = y(reference["requests_per_second"])
    out.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#555" stroke-width="2" stroke-dasharray="2 3"/>'
               % (left, level, left + plot_w, level))
    out.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#555" stroke-width="2" stroke-dasharray="2 3"/>'
               % (left + 10, top + 30, left + 40, top + 30))
    out.append('<text x="%d" y="%d">1 unpartitioned worker, one journal: %s/s</text>'
               % (left + 46, top + 34, "{:,.0f}".format(reference["requests_per_second"])))
    out.append("</svg>")
    return "\n".join(out) + "\n"


def escaped(text):
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def setup(point):
    """How a point's cluster was made, as its table row names it."""
    if point["partitions"] == 0:
        return "1, unpartitioned (one journal)"
    return "%d, %d partitions" % (point["workers"], point["partitions"])


def main(facts_path, directory):
    with open(facts_path) as file:
        facts = json.load(file)
    points = [measured(directory, point) | {"partitions": point["partitions"]} for point in facts["writes"]]
    reference = next(point for point in points if point["partitions"] == 0)
    writes = [point for point in points if point["partitions"] > 0]
    reads = [measured(directory, point) | {"partitions": point["partitions"]} for point in facts["reads"]]
    routing = {name: measured(directory, point) for name, point in facts["routing"].items()}
    for point in routing.values():
        point["ceiling_requests_per_second"] = ceiling(point)
    summary = {"machine": facts["machine"], "settings": facts["settings"], "fsyncs_per_second": facts["fsyncs_per_second"],
               "writes": writes, "unpartitioned_writes": reference, "reads": reads, "routing": routing}
    with open(os.path.join(directory, "cluster.json"), "w") as file:
        json.dump(summary, file, indent=2)
        file.write("\n")
    with open(os.path.join(directory, "cluster.svg"), "w") as file:
        file.write(svg_chart(writes, reference, "Durable book creates through one broker, %d in flight" % facts["settings"]["in_flight"],
                             facts["settings"]["partitions"]))

    base = writes[0]
    lines = [
        "| worker processes | writes/s | × 1 partitioned worker | p50 ms | p99 ms | broker CPU µs/write | workers CPU µs/write | writes per fdatasync | errors | load average before → after |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for point in [reference] + writes:
        lines.append("| %s | %s | %s | %.3f | %.3f | %s | %s | %s | %d | %s → %s |" % (
            setup(point), number(point["requests_per_second"]), ratio(point["requests_per_second"], base["requests_per_second"]),
            point["p50_us"] / 1000, point["p99_us"] / 1000, number(point["broker_cpu_us_per_request"], 1),
            number(point["workers_cpu_us_per_request"], 1), number(point["appends_per_sync"], 2), point["errors"],
            point["load_average"]["before"], point["load_average"]["after"]))
    lines += [
        "",
        "| book reads: worker processes | reads/s | p50 ms | p99 ms | broker CPU µs/read | workers CPU µs/read | errors | load average before → after |",
        "|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for point in reads:
        lines.append("| %s | %s | %.3f | %.3f | %s | %s | %d | %s → %s |" % (
            setup(point), number(point["requests_per_second"]), point["p50_us"] / 1000, point["p99_us"] / 1000,
            number(point["broker_cpu_us_per_request"], 1), number(point["workers_cpu_us_per_request"], 1), point["errors"],
            point["load_average"]["before"], point["load_average"]["after"]))
    lines += [
        "",
        "| broker routing | forwarded req/s (measured) | broker CPU µs/request | ceiling req/s (1 s ÷ CPU) | ceiling vs unpartitioned | errors | load average before → after |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    plain = routing["unpartitioned"]
    for name, point in routing.items():
        lines.append("| %s | %s | %s | %s | %s | %d | %s → %s |" % (
            point["label"], number(point["requests_per_second"]), number(point["broker_cpu_us_per_request"], 1),
            number(point["ceiling_requests_per_second"]), ratio(point["ceiling_requests_per_second"], plain["ceiling_requests_per_second"]),
            point["errors"], point["load_average"]["before"], point["load_average"]["after"]))
    lines += ["", "fdatasync of a 200-byte append in the data directory's file system: %s/s, one writer."
              % number(facts["fsyncs_per_second"])]
    print("\n".join(lines))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])

#!/usr/bin/python3
"""What a replicated write costs in records and syncs, host by host, from the workers' own
counters (their /metrics endpoints): fdatasyncs per write on each replica, records appended per
write on each, and the records each replication message carried (issue 34, "Like for like").

    replication_counts.py snap FILE HOST=URL…          scrape each worker's /metrics into FILE
                                                       (METRICS_TOKEN_FILE: the bearer token's file)
    replication_counts.py diff BEFORE AFTER WRITES     JSON of the differences per write
    replication_counts.py table OUT NAME…              a markdown table of the runs NAME (r1, r3,
                                                       r3-interval…) in OUT beside JetStream R3

The counters read: lyceum_journal_syncs_total and lyceum_journal_appends_total (every journal of
the process, summed), lyceum_replication_appends_sent_total and lyceum_replication_records_sent_total
(appends with records that the process's leaders sent, and their records).
"""
import json
import os
import sys
import urllib.request

COUNTERS = (
    "lyceum_journal_syncs_total",
    "lyceum_journal_appends_total",
    "lyceum_replication_appends_sent_total",
    "lyceum_replication_records_sent_total",
)


def scrape(url):
    """{counter: sum over its series} of one /metrics page."""
    request = urllib.request.Request(url)
    token_file = os.environ.get("METRICS_TOKEN_FILE")
    if token_file:
        with open(token_file) as token:
            request.add_header("Authorization", "Bearer " + token.readline().strip())
    text = urllib.request.urlopen(request, timeout=10).read().decode()
    sums = dict.fromkeys(COUNTERS, 0.0)
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        name = line.split("{", 1)[0].split(" ", 1)[0]
        if name in sums:
            sums[name] += float(line.rsplit(" ", 1)[1])
    return sums


def snap(path, pairs):
    hosts = {}
    for pair in pairs:
        host, url = pair.split("=", 1)
        hosts[host] = scrape(url)
    with open(path, "w") as out:
        json.dump(hosts, out)


def diff(before_path, after_path, writes):
    before, after = json.load(open(before_path)), json.load(open(after_path))
    writes = max(1, int(writes))
    hosts = {}
    appends = records = 0.0
    for host in sorted(after):
        delta = {name: after[host][name] - before.get(host, {}).get(name, 0.0) for name in COUNTERS}
        hosts[host] = {
            "fdatasyncs_per_write": delta["lyceum_journal_syncs_total"] / writes,
            "records_appended_per_write": delta["lyceum_journal_appends_total"] / writes,
        }
        appends += delta["lyceum_replication_appends_sent_total"]
        records += delta["lyceum_replication_records_sent_total"]
    return {
        "writes": writes,
        "hosts": hosts,
        "replication_messages": appends,
        "records_per_message": records / appends if appends else None,
    }


def table(directory, names):
    """The runs' writes/s, CPU and switches per write (their `lyceum bench` JSON), syncs and records
    per write on each replica and records per replication message (their counts), and JetStream
    R3's publishes/s and CPU per publish from the same run, with the ratios."""
    def load(name):
        try:
            with open(os.path.join(directory, name)) as source:
                return json.load(source)
        except (OSError, ValueError):
            return None

    def figures(run):
        cpu = (run or {}).get("server_cpu") or {}
        return (run or {}).get("requests_per_second"), cpu.get("us_per_request"), (cpu.get("context_switches_per_request") or {}).get("voluntary")

    def shown(value, decimals=0):
        return "—" if value is None else f"{value:,.{decimals}f}"

    jetstream = load("replication-jetstream.json")
    js_rate, js_cpu, _ = figures(jetstream)
    rows = ["| run | writes/s | × JetStream R3 | server CPU per write | × JetStream | voluntary switches per write "
            "| fdatasyncs per write, each replica | records appended per write, each replica | records per replication message |",
            "|---|---:|---:|---:|---:|---:|---|---|---:|"]
    for name in names:
        run, counts = load(f"replication-lyceum-{name}.json"), load(f"replication-counts-{name}.json") or {}
        rate, cpu, switches = figures(run)
        hosts = counts.get("hosts") or {}
        syncs = ", ".join(f"{host} {values['fdatasyncs_per_write']:.2f}" for host, values in hosts.items()) or "—"
        appended = ", ".join(f"{host} {values['records_appended_per_write']:.2f}" for host, values in hosts.items()) or "—"
        rows.append(f"| Lyceum {name} | {shown(rate)} | {shown(rate / js_rate if rate and js_rate else None, 2)} | {shown(cpu)} µs "
                    f"| {shown(cpu / js_cpu if cpu and js_cpu else None, 2)} | {shown(switches, 1)} | {syncs} | {appended} "
                    f"| {shown(counts.get('records_per_message'), 2)} |")
    rows.append(f"| JetStream R3 | {shown(js_rate)} | 1.00 | {shown(js_cpu)} µs | 1.00 | — | — | — | — |")
    return "\n".join(rows)


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "snap":
        snap(sys.argv[2], sys.argv[3:])
    elif len(sys.argv) >= 4 and sys.argv[1] == "table":
        print(table(sys.argv[2], sys.argv[3:]))
    elif len(sys.argv) == 5 and sys.argv[1] == "diff":
        json.dump(diff(sys.argv[2], sys.argv[3], sys.argv[4]), sys.stdout)
        print()
    else:
        sys.exit(__doc__)

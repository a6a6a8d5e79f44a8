#!/usr/bin/python3
"""Where a benchmark's context switches and CPU go, thread by thread: snapshots of every thread
of the given processes (/proc/PID/task/TID: its kernel name, voluntary switches, utime+stime),
then the difference of two snapshots per process and per thread name, divided by the requests
served between them.

    thread_switches.py snap FILE LABEL=PID…     write a snapshot (LABEL names the process: w1, broker)
    thread_switches.py diff BEFORE AFTER REQUESTS [--json]
                                                 a table (or JSON) of switches and CPU µs per request

Threads with the same kernel name in one process are summed, digits made `N` (follower-books.pN),
so that a table stays short however many partitions a process holds. A thread that ended between
the snapshots is missing from the second and left out: say so beside the figures.
"""
import json
import os
import re
import sys

TICKS = os.sysconf("SC_CLK_TCK")


def snapshot(processes):
    """{label/tid: [name, voluntary switches, CPU ticks]} of every thread of every process."""
    threads = {}
    for label, pid in processes:
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tids:
            base = f"/proc/{pid}/task/{tid}"
            try:
                with open(base + "/comm") as file:
                    name = file.read().strip()
                with open(base + "/status") as file:
                    voluntary = int(re.search(r"^voluntary_ctxt_switches:\s+(\d+)", file.read(), re.M).group(1))
                with open(base + "/stat") as file:
                    fields = file.read().rsplit(")", 1)[1].split()
            except (OSError, AttributeError):
                continue
            threads[f"{label}/{tid}"] = [name, voluntary, int(fields[11]) + int(fields[12])]
    return threads


def difference(before, after, requests):
    """Rows (process, thread name, switches per request, CPU µs per request), busiest first."""
    totals = {}
    for key, (name, voluntary, ticks) in after.items():
        label = key.split("/")[0]
        _, voluntary_before, ticks_before = before.get(key, [name, 0, 0])
        row = totals.setdefault((label, re.sub(r"\d+", "N", name)), [0, 0])
        row[0] += voluntary - voluntary_before
        row[1] += ticks - ticks_before
    rows = [
        {"process": label, "thread": name, "switches_per_request": switches / requests,
         "cpu_us_per_request": ticks * 1e6 / TICKS / requests}
        for (label, name), (switches, ticks) in totals.items() if switches or ticks
    ]
    return sorted(rows, key=lambda row: -row["switches_per_request"])


def main(arguments):
    if len(arguments) >= 2 and arguments[0] == "snap":
        processes = [item.split("=", 1) for item in arguments[2:]]
        with open(arguments[1], "w") as file:
            json.dump(snapshot(processes), file)
        return 0
    if len(arguments) >= 4 and arguments[0] == "diff":
        with open(arguments[1]) as file:
            before = json.load(file)
        with open(arguments[2]) as file:
            after = json.load(file)
        requests = float(arguments[3])
        if requests <= 0:
            print("thread_switches.py: no requests between the snapshots", file=sys.stderr)
            return 1
        rows = difference(before, after, requests)
        if "--json" in arguments[4:]:
            json.dump(rows, sys.stdout)
            print()
            return 0
        print("| process | thread | voluntary switches per request | CPU µs per request |")
        print("|---|---|---:|---:|")
        for row in rows:
            print(f"| {row['process']} | {row['thread']} | {row['switches_per_request']:.2f} | {row['cpu_us_per_request']:.1f} |")
        print(f"| all | | {sum(row['switches_per_request'] for row in rows):.2f} | {sum(row['cpu_us_per_request'] for row in rows):.1f} |")
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

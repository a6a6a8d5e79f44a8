"""Figures of the benchmark scripts' JSON results (`lyceum bench --json` and the runs shaped like
it), for Benchmarks/common.sh and Benchmarks/suite/: one program instead of inline one-liners.

    results.py member FILE PATH       a member: requests_per_second | latency_us/p99 | list/0/...
    results.py cpu FILE               server CPU per request, µs, one decimal ("n/a" when not measured)
    results.py switches FILE          context switches per request, "VOLUNTARY/INVOLUNTARY" (or "n/a")
    results.py redis-run NAME P50 P95 P99 MAX RPS PID TICKS HZ REQUESTS VOLUNTARY INVOLUNTARY FILE
                                      writes a redis-benchmark run (its CSV figures, ms) as FILE,
                                      shaped like lyceum bench's JSON, with the server's CPU
"""
import json
import sys


def member(path, keys):
    value = json.load(open(path))
    for key in keys.split("/"):
        value = value[int(key)] if isinstance(value, list) else value[key]
    return value


def cpu(path):
    measured = json.load(open(path)).get("server_cpu")
    return "%.1f" % measured["us_per_request"] if measured else "n/a"


def switches(path):
    measured = (json.load(open(path)).get("server_cpu") or {}).get("context_switches_per_request")
    return "%.2f/%.2f" % (measured["voluntary"], measured["involuntary"]) if measured else "n/a"


def redis_run(name, p50, p95, p99, maximum, rps, pid, ticks, hz, requests, voluntary, involuntary, path):
    def us(milliseconds):
        return int(float(milliseconds) * 1000)
    cpu_us = int(ticks) * 1e6 / int(hz)
    requests = int(requests)
    run = {
        "label": name,
        "requests_per_second": float(rps),
        "latency_us": {"p50": us(p50), "p99": us(p99), "max": us(maximum)},
        "curve": {"label": name, "points": [[50, us(p50)], [95, us(p95)], [99, us(p99)], [100, us(maximum)]]},
        "server_cpu": {
            "us_per_request": cpu_us / requests,
            "processes_us": {pid: cpu_us},
            "context_switches_per_request": {"voluntary": int(voluntary) / requests, "involuntary": int(involuntary) / requests},
        },
    }
    with open(path, "w") as file:
        json.dump(run, file)


if __name__ == "__main__":
    command, arguments = sys.argv[1], sys.argv[2:]
    if command == "member":
        print(member(*arguments))
    elif command == "cpu":
        print(cpu(*arguments))
    elif command == "switches":
        print(switches(*arguments))
    elif command == "redis-run":
        redis_run(*arguments)
    else:
        sys.exit(f"results.py: unknown command {command!r} (member, cpu, switches, redis-run)")

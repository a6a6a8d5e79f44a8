#!/usr/bin/python3
"""Where a fail-over's time went, from deploy/netns-cluster.sh's logs (Benchmarks/failover-netns.sh):
for the partitions PARTITIONS (comma-separated, `books.p3`: those the faulty host led), the
seconds from FAULT (an RFC 3339 UTC instant) to each one's first new leader elected
("leadership" … state=leader) and serving ("partition led", then registering with the brokers):
the first and the last over the partitions. Later elections (the leadership balance's hand-offs)
are not counted. The brokers' "worker registered" lines are not used: one per session, they
exceed the log's rate limit in a fail-over.

    failover_timeline.py STATE FAULT PARTITIONS
"""
import glob
import re
import sys
from datetime import datetime

TIME = re.compile(r"^ts=(\S+)")


def instant(text):
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def events(pattern, field, paths):
    """(seconds, value of `field`) of every line after the fault matching `pattern`."""
    found = []
    for path in paths:
        with open(path, errors="replace") as log:
            for line in log:
                if pattern not in line:
                    continue
                stamp, value = TIME.match(line), re.search(field + r"=\"?([^\s\"]+)", line)
                if stamp and value:
                    found.append((instant(stamp.group(1)), value.group(1)))
    return found


def main():
    state, fault, partitions = sys.argv[1], instant(sys.argv[2]), set(sys.argv[3].split(","))
    workers = glob.glob(f"{state}/w*/logs/node.log")

    def firsts(found):
        """Each partition's first instant after the fault."""
        first = {}
        for at, name in sorted(found):
            if at >= fault and name in partitions:
                first.setdefault(name, at)
        return sorted(first.values())

    elected = firsts((t, key.removeprefix("lyceum/leader/")) for t, key in events('state="leader(', "key", workers))
    led = firsts(events("partition led", "partition", workers))
    shown = [f"{what} +{times[0] - fault:.2f}–{times[-1] - fault:.2f} s" for what, times in (("elected", elected), ("serving", led)) if times]
    print(f"of the {len(partitions)} partitions it led, {len(led)} served elsewhere: " + ", ".join(shown))
    return 0


if __name__ == "__main__":
    sys.exit(main())

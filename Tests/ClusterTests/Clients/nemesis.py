#!/usr/bin/python3
"""Randomized fault schedules against a netns cluster, checked by Jepsen's total-queue rules.

    nemesis.py --lyceum PATH [--runs N] [--seconds S] [--seed SEED] [--durability D] [--state DIR]

Brings up a replicated cluster (deploy/netns-cluster.sh up --replicas 3 --partitions 3
--power-loss-fs --durability D), then for each run: a retried write load through both brokers
(ledger.py write on c1: creates with their request_id, each retried until answered) while a random
schedule, seeded, hits random worker hosts at random times with one fault at a time, each healed
after a random hold:

- kill: kill -9 every process of a host, then `start` it;
- pause: SIGSTOP every process of a host, then SIGCONT;
- link: the host's link down, then up;
- power: `power-cut` a host, or all three at once (a third of them --torn, a third --partial), then
  `start` them.

After the load ends and every fault is healed, every replica's journals must hold the same records
(waited for, within a bound), and every learner's books are read back (ledger.py verify): an
acknowledged create not read is lost, a book read but never sent is unexpected, a request_id applied
twice is duplicated; a create that failed for good is unknown (counted, never a success). Each run
prints one line, then a total. Exits 1 when any run lost an acknowledged write (under `always`),
duplicated or made up one, left journals different, or left a partition not serving; the seed
printed replays a run's schedule. Needs root, /dev/fuse and what the cluster needs.
"""

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPOSITORY = os.path.normpath(os.path.join(HERE, "../../.."))
SCRIPT = os.path.join(REPOSITORY, "deploy/netns-cluster.sh")
LEDGER = os.path.join(HERE, "ledger.py")
WORKERS = ["w1", "w2", "w3"]
PARTITIONS = 3
CONVERGENCE_BOUND = 180  # seconds: a hang limit, never a figure


class Cluster:
    def __init__(self, arguments):
        self.lyceum = os.path.abspath(arguments.lyceum)
        self.state = arguments.state
        self.durability = arguments.durability
        tag = "%06x" % random.randrange(1 << 24)
        self.prefix = "nm%s-" % tag[:5]
        self.subnet = "10.%d.%d" % (random.randrange(200, 250), random.randrange(256))

    def script(self, *words, check=True, timeout=300):
        result = subprocess.run([SCRIPT, words[0], "--state", self.state, *words[1:]], capture_output=True, text=True,
                                env=dict(os.environ, LYCEUM=self.lyceum), timeout=timeout)
        if check and result.returncode != 0:
            raise RuntimeError("netns-cluster.sh %s failed (%d):\n%s%s" % (" ".join(words), result.returncode,
                                                                           result.stdout, result.stderr[-4000:]))
        return result

    def up(self):
        self.script("up", "--prefix", self.prefix, "--subnet", self.subnet, "--partitions", str(PARTITIONS),
                    "--replicas", "3", "--lease-ttl", "3", "--heartbeat", "1000", "--timeout", "180",
                    "--power-loss-fs", "--durability", self.durability, timeout=400)

    def down(self):
        self.script("down", check=False, timeout=300)

    def pids(self, host):
        listed = subprocess.run(["ip", "netns", "pids", self.prefix + host], capture_output=True, text=True)
        return [int(pid) for pid in listed.stdout.split()]

    def signal(self, host, number):
        for pid in self.pids(host):
            try:
                os.kill(pid, number)
            except ProcessLookupError:
                pass  # it ended between the listing and the signal: nothing left to pause or resume

    def ledger(self, command, *words, timeout):
        brokers = "tcp://%s.11:5555,tcp://%s.12:5555" % (self.subnet, self.subnet)
        keys = os.path.join(self.state, "c1/keys")
        return subprocess.run([SCRIPT, "exec", "--state", self.state, "c1", "/usr/bin/env",
                               "PYTHONPATH=" + os.path.join(REPOSITORY, "clients/python"), "/usr/bin/python3", LEDGER, command,
                               "--brokers", brokers, "--key", keys + "/app_secret", "--server-key", keys + "/broker", *words],
                              capture_output=True, text=True, env=dict(os.environ, LYCEUM=self.lyceum), timeout=timeout)

    def records(self, host, service, partition):
        path = os.path.join(self.state, host, "data", service, "p%d" % partition, "journal.jsonl")
        try:
            with open(path, encoding="utf-8", errors="replace") as journal:
                return [line for line in journal.read().split("\n") if '"seq":' in line]
        except FileNotFoundError:
            return []

    def differences(self):
        found = []
        for service in ("books", "progress"):
            for partition in range(PARTITIONS):
                journals = [self.records(host, service, partition) for host in WORKERS]
                if len({"\n".join(journal) for journal in journals}) != 1:
                    found.append("%s.p%d: %s records" % (service, partition, [len(journal) for journal in journals]))
        return found


class Schedule:
    """One run's faults, one at a time, each healed before the next (the seed decides them all)."""

    def __init__(self, cluster, rng, seconds):
        self.cluster, self.rng, self.seconds = cluster, rng, seconds
        self.done = []
        self.dropped = 0
        self.broken = None  # the heal still owed: (kind, hosts)

    def run(self, started):
        moment = self.rng.uniform(0.5, 2.0)
        while moment < self.seconds - 2:
            kind = self.rng.choice(["kill", "pause", "link", "power", "power"])
            hosts = [self.rng.choice(WORKERS)]
            if kind == "power" and self.rng.random() < 0.3:
                hosts = list(WORKERS)
            hold = self.rng.uniform(1.0, 4.0)
            how = self.rng.choice(["", "--torn", "--partial"]) if kind == "power" else ""
            wait = started + moment - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            self.hit(kind, hosts, how)
            time.sleep(hold)
            self.heal()
            self.done.append("%s%s %s %.1fs@%.1f" % (kind, "(%s)" % how.strip("-") if how else "", "+".join(hosts), hold, moment))
            moment = time.monotonic() - started + self.rng.uniform(0.5, 3.0)

    def hit(self, kind, hosts, how):
        self.broken = (kind, hosts)
        if kind == "kill":
            self.cluster.script("kill", *hosts)
        elif kind == "pause":
            for host in hosts:
                self.cluster.signal(host, signal.SIGSTOP)
        elif kind == "link":
            for host in hosts:
                self.cluster.script("link", host, "down")
        else:
            result = self.cluster.script("power-cut", *([how] if how else []), *hosts)
            for line in result.stdout.splitlines():
                if line.startswith("power cut ") and "{" in line:
                    self.dropped += json.loads(line[line.index("{"):]).get("unsynced_bytes", 0)

    def heal(self):
        if self.broken is None:
            return
        kind, hosts = self.broken
        if kind in ("kill", "power"):
            self.cluster.script("start", *hosts)
        elif kind == "pause":
            for host in hosts:
                self.cluster.signal(host, signal.SIGCONT)
        else:
            for host in hosts:
                self.cluster.script("link", host, "up")
        self.broken = None


def one_run(cluster, number, seed, seconds):
    rng = random.Random(seed)
    name = "n%d" % number
    learners = ",".join("%s-%d" % (name, index) for index in range(12))
    ledger = os.path.join(cluster.state, name + ".jsonl")
    unknown = os.path.join(cluster.state, name + ".unknown.jsonl")
    started = time.monotonic()
    writer = subprocess.Popen([SCRIPT, "exec", "--state", cluster.state, "c1", "/usr/bin/env",
                               "PYTHONPATH=" + os.path.join(REPOSITORY, "clients/python"), "/usr/bin/python3", LEDGER, "write",
                               "--brokers", "tcp://%s.11:5555,tcp://%s.12:5555" % (cluster.subnet, cluster.subnet),
                               "--key", os.path.join(cluster.state, "c1/keys/app_secret"),
                               "--server-key", os.path.join(cluster.state, "c1/keys/broker"),
                               "--out", ledger, "--unknown", unknown, "--run", name, "--learners", learners,
                               "--seconds", str(seconds), "--timeout", "2", "--attempts", "12", "--in-flight", "4"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(os.environ, LYCEUM=cluster.lyceum))
    schedule = Schedule(cluster, rng, seconds)
    faulted = None
    try:
        schedule.run(started)
        schedule.heal()
    except RuntimeError as error:
        # A host that did not come back (every partition not served within `start`'s bound) is
        # this run's failure; the next run starts from whatever state the cluster is in.
        faulted = str(error)[-3000:]
    output, errors = writer.communicate(timeout=seconds + 400)
    outcome = {"run": number, "seed": seed, "faults": schedule.done, "dropped_bytes": schedule.dropped}
    if faulted is not None:
        outcome["failure"] = "a fault or its heal failed: " + faulted
        for host in WORKERS:
            cluster.signal(host, signal.SIGCONT)
            cluster.script("link", host, "up", check=False)
        cluster.script("start", *WORKERS, check=False)
        return outcome
    if writer.returncode != 0:
        outcome["failure"] = "the writer failed: " + errors[-2000:]
        return outcome
    written = json.loads(output)
    outcome.update(sent=written["sent"], acknowledged=written["acknowledged"], wrong=written["wrong"],
                   unknown=sum(written["errors"].values()), errors=written["errors"])
    healed = time.monotonic()
    differences = cluster.differences()
    while differences and time.monotonic() - healed < CONVERGENCE_BOUND:
        time.sleep(0.5)
        differences = cluster.differences()
    outcome["converged_after"] = round(time.monotonic() - healed, 1)
    outcome["journal_differences"] = differences
    verified = cluster.ledger("verify", "--ledger", ledger, "--unknown", unknown, "--timeout", "3", "--attempts", "20",
                              timeout=600)
    if verified.returncode != 0:
        outcome["failure"] = "not every partition serves: verify failed: " + verified.stderr[-2000:]
        return outcome
    checked = json.loads(verified.stdout)
    outcome.update(lost=checked["missing"], duplicated=checked["duplicates"], unexpected=checked["unexpected"],
                   unknown_applied=checked["unknown_applied"], examples=checked["examples"])
    return outcome


def passed(outcome, durability):
    return ("failure" not in outcome and outcome["wrong"] == 0 and outcome["duplicated"] == 0 and outcome["unexpected"] == 0
            and not outcome["journal_differences"] and (durability != "always" or outcome["lost"] == 0))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lyceum", required=True)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--seconds", type=int, default=20)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--durability", default="always")
    parser.add_argument("--state", default=None)
    arguments = parser.parse_args()
    if not 1 <= arguments.runs <= 10000 or not 5 <= arguments.seconds <= 120:
        parser.error("--runs must be 1-10000 and --seconds 5-120")
    seed = arguments.seed if arguments.seed is not None else random.randrange(1 << 31)
    arguments.state = arguments.state or "/tmp/lyceum-nemesis-%d" % os.getpid()
    print("nemesis: seed %d, %d run(s) of %d s, durability %s, state %s" % (seed, arguments.runs, arguments.seconds,
                                                                            arguments.durability, arguments.state), flush=True)
    cluster = Cluster(arguments)
    totals = {"runs": 0, "failed": 0, "sent": 0, "acknowledged": 0, "unknown": 0, "lost": 0, "duplicated": 0, "unexpected": 0,
              "journal_differences": 0, "dropped_bytes": 0}
    begun = time.monotonic()
    try:
        cluster.up()
        print("nemesis: cluster up after %.0f s" % (time.monotonic() - begun), flush=True)
        for number in range(arguments.runs):
            outcome = one_run(cluster, number, seed + number, arguments.seconds)
            ok = passed(outcome, arguments.durability)
            totals["runs"] += 1
            totals["failed"] += 0 if ok else 1
            for key in ("sent", "acknowledged", "unknown", "lost", "duplicated", "unexpected", "dropped_bytes"):
                totals[key] += outcome.get(key, 0)
            totals["journal_differences"] += len(outcome.get("journal_differences", []))
            print("nemesis run %d %s: %s" % (number, "ok" if ok else "FAILED", json.dumps(outcome)), flush=True)
    finally:
        cluster.down()
    print("nemesis total (durability %s, seed %d, %.0f s): %s" % (arguments.durability, seed, time.monotonic() - begun,
                                                                  json.dumps(totals)), flush=True)
    return 0 if totals["failed"] == 0 and totals["runs"] == arguments.runs else 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""Retrying writers for Benchmarks/replication-bench.sh's fail-over measure (issue 25), the way
LyceumServerTests.ReplicatedPartitionEndToEndTests writes: each writer creates books for one
learner of the measured partition, one at a time, each with its `request_id` and retried (2 s
per attempt, 50 ms apart, the next broker after a timeout) until acknowledged.

    failover_writers.py --broker EP [--broker EP…] --partitions N --partition P --writers W
                        --acks FILE [--progress FILE] [--curve-certificate SECRET --server-certificate PUBLIC]

"writing" goes to stderr after the first acknowledgement. On SIGTERM or SIGINT the writers stop
after the write in hand; every acknowledgement, "UNIX_NS WRITER" a line, goes to FILE;
every learner's books are listed back and a JSON summary printed on stdout: acknowledged, lost
(acknowledged titles not listed), doubled (titles listed more than once). Needs pyzmq.
"""
import argparse
import itertools
import json
import os
import signal
import sys
import threading
import time

import zmq
import zmq.auth

MDP_CLIENT = b"MDPC01"
ATTEMPT_MS = 2000
PAUSE_S = 0.05


def partition_of(learner, count):
    """FNV-1a 64-bit of the learner id's UTF-8 bytes, modulo the count (protocol/partitions.md)."""
    value = 0xCBF29CE484222325
    for byte in learner.encode():
        value = ((value ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return value % count


def learners_in(partition, count, how_many):
    """The first `how_many` ids fo-0, fo-1, … whose partition is `partition`."""
    found = (name for name in ("fo-%d" % n for n in itertools.count()) if partition_of(name, count) == partition)
    return list(itertools.islice(found, how_many))


class Caller:
    """One DEALER at a time to the brokers in turn: a timed-out request closes it and the next
    attempt goes to the next broker (as Lyceum's clients fail over)."""

    def __init__(self, context, brokers, curve):
        self.context, self.brokers, self.curve = context, brokers, curve
        self.socket, self.turn, self.tags = None, 0, itertools.count()

    def _open(self):
        socket = self.context.socket(zmq.DEALER)
        socket.setsockopt(zmq.LINGER, 0)
        if self.curve:
            socket.curve_publickey, socket.curve_secretkey, socket.curve_serverkey = self.curve
        socket.connect(self.brokers[self.turn % len(self.brokers)])
        self.turn += 1
        return socket

    def close(self):
        if self.socket is not None:
            self.socket.close()
            self.socket = None

    def call(self, service, body):
        """The reply's JSON, or None after ATTEMPT_MS without it."""
        if self.socket is None:
            self.socket = self._open()
        tag = b"%d" % next(self.tags)
        self.socket.send_multipart([tag, b"", MDP_CLIENT, service, json.dumps(body).encode()])
        deadline = time.monotonic() + ATTEMPT_MS / 1000
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not self.socket.poll(int(left * 1000) + 1):
                self.close()
                return None
            frames = self.socket.recv_multipart()
            if len(frames) >= 5 and frames[0] == tag and frames[2] == MDP_CLIENT:
                try:
                    return json.loads(frames[4])
                except ValueError:
                    return None


def write(context, brokers, curve, learner, index, stopping, acks, lock, started):
    caller = Caller(context, brokers, curve)
    for number in itertools.count(1):
        if stopping.is_set():
            break
        title = "w%d-%d" % (index, number)
        body = {"op": "create", "learner": learner, "title": title, "author": "A", "genre": "Mystery",
                "rating": 3, "request_id": title}
        while not stopping.is_set():
            reply = caller.call(b"books", body)
            if reply is not None and reply.get("ok"):
                with lock:
                    acks.append((time.time_ns(), index, learner, title))
                started.set()
                break
            time.sleep(PAUSE_S)
    caller.close()


def read_back(context, brokers, curve, learners):
    """Every title listed for each learner, with its count."""
    caller = Caller(context, brokers, curve)
    titles = {}
    for learner in learners:
        cursor = None
        while True:
            body = {"op": "list", "learner": learner, "limit": 100}
            if cursor:
                body["cursor"] = cursor
            reply = None
            for _ in range(60):
                reply = caller.call(b"books", body)
                if reply is not None and reply.get("ok"):
                    break
                time.sleep(0.5)
            if reply is None or not reply.get("ok"):
                sys.exit("failover_writers: cannot list %s's books: %r" % (learner, reply))
            for book in reply["result"].get("books", []):
                key = (learner, book.get("title"))
                titles[key] = titles.get(key, 0) + 1
            cursor = reply["result"].get("next_cursor")
            if not cursor:
                break
    caller.close()
    return titles


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--broker", action="append", required=True)
    parser.add_argument("--partitions", type=int, required=True)
    parser.add_argument("--partition", type=int, default=0)
    parser.add_argument("--writers", type=int, default=8)
    parser.add_argument("--acks", required=True)
    parser.add_argument("--progress", help="file holding the count of acknowledgements so far, rewritten every 200 ms")
    parser.add_argument("--curve-certificate")
    parser.add_argument("--server-certificate")
    options = parser.parse_args()
    curve = None
    if options.curve_certificate:
        public, secret = zmq.auth.load_certificate(options.curve_certificate)
        server, _ = zmq.auth.load_certificate(options.server_certificate)
        curve = (public, secret, server)

    stopping, started, lock, acks = threading.Event(), threading.Event(), threading.Lock(), []
    for number in (signal.SIGTERM, signal.SIGINT):
        signal.signal(number, lambda *_: stopping.set())
    # A parent may start us with SIGTERM blocked (the mask is inherited).
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    context = zmq.Context()
    learners = learners_in(options.partition, options.partitions, options.writers)
    threads = [threading.Thread(target=write, args=(context, options.broker, curve, learner, index, stopping, acks, lock, started))
               for index, learner in enumerate(learners)]
    for thread in threads:
        thread.start()
    while not started.wait(0.2):
        if stopping.is_set():
            break
    print("failover_writers: writing", file=sys.stderr, flush=True)
    while not stopping.wait(0.2):
        if options.progress:
            with lock:
                count = len(acks)
            with open(options.progress + ".new", "w") as file:
                file.write("%d\n" % count)
            os.replace(options.progress + ".new", options.progress)
    for thread in threads:
        thread.join()

    acks.sort()
    with open(options.acks, "w") as file:
        file.writelines("%d %d\n" % (at, index) for at, index, _, _ in acks)
    titles = read_back(context, options.broker, curve, learners)
    lost = sum(1 for _, _, learner, title in acks if (learner, title) not in titles)
    doubled = sum(1 for count in titles.values() if count > 1)
    context.term()
    print(json.dumps({"acknowledged": len(acks), "lost": lost, "doubled": doubled, "listed": len(titles),
                      "writers": options.writers, "partition": options.partition, "partitions": options.partitions}))
    print("failover_writers: %d acknowledged, %d listed, %d lost, %d doubled" % (len(acks), len(titles), lost, doubled),
          file=sys.stderr)


if __name__ == "__main__":
    main()

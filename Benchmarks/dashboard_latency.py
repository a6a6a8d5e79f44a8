#!/usr/bin/python3
"""`books get` round trips against a running `lyceum serve` while progress writes flow, for
Benchmarks/dashboard-bench.sh. Standard library and pyzmq only.

    dashboard_latency.py BROKER REQUESTS WRITES_PER_SECOND

Creates one book, then times REQUESTS `books get` requests one after another on a REQ socket,
while a thread writes progress at WRITES_PER_SECOND (so the dashboard's streams carry events).
Prints `p50_us p99_us mean_us`.
"""
import json
import statistics
import sys
import threading
import time

import zmq


def call(socket, service, body):
    socket.send_multipart([b"MDPC01", service, json.dumps(body).encode()])
    if not socket.poll(5000):
        raise RuntimeError("no reply from %s" % service)
    return json.loads(socket.recv_multipart()[2])


def writer(context, broker, rate, stop):
    socket = context.socket(zmq.REQ)
    socket.connect(broker)
    lessons = ["1", "2", "3", "4"]
    count = 0
    while not stop.is_set():
        learner = "bench-%d" % (count // 8)
        op = {"op": "mark_watched" if count % 8 < 4 else "mark_unwatched", "learner": learner, "course": "1",
              "lesson": lessons[count % 4]}
        call(socket, b"progress", op)
        count += 1
        time.sleep(1.0 / rate)
    socket.close(0)


def main(broker, requests, rate):
    context = zmq.Context()
    socket = context.socket(zmq.REQ)
    socket.connect(broker)
    created = call(socket, b"books", {"op": "create", "learner": "bench", "title": "Dune", "author": "Frank Herbert",
                                      "genre": "Fantasy", "rating": 5})
    book = created["result"]["book"]["id"]
    stop = threading.Event()
    thread = threading.Thread(target=writer, args=(context, broker, int(rate), stop))
    thread.start()
    samples = []
    for _ in range(int(requests)):
        started = time.perf_counter_ns()
        reply = call(socket, b"books", {"op": "get", "learner": "bench", "id": book})
        samples.append((time.perf_counter_ns() - started) / 1000)
        if not reply["ok"]:
            raise RuntimeError(reply)
    stop.set()
    thread.join()
    samples.sort()
    print("%.0f %.0f %.0f" % (samples[len(samples) // 2], samples[len(samples) * 99 // 100], statistics.mean(samples)))
    socket.close(0)
    context.term()


if __name__ == "__main__":
    main(*sys.argv[1:])

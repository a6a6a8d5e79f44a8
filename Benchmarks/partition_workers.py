#!/usr/bin/python3
"""Minimal 7/MDP workers for Benchmarks/partition-routing.sh: one DEALER per service named on the
command line, each answering every request {"ok":true,"result":{}} at once, so the broker is what
the benchmark measures. Heartbeats every 2.5 s (the broker's default). Stops on SIGTERM.

    partition_workers.py ENDPOINT SERVICE...
"""
import signal
import sys
import time

import zmq

WORKER = b"MDPW01"
READY, REQUEST, REPLY, HEARTBEAT = b"\x01", b"\x02", b"\x03", b"\x04"
OK = b'{"ok":true,"result":{}}'


def main(endpoint, services):
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    # A parent such as the test runner may start us with SIGTERM blocked (the mask is inherited),
    # and a blocked SIGTERM would never stop us.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
    context = zmq.Context()
    poller = zmq.Poller()
    sockets = []
    for service in services:
        socket = context.socket(zmq.DEALER)
        socket.setsockopt(zmq.LINGER, 0)
        socket.connect(endpoint)
        socket.send_multipart([b"", WORKER, READY, service.encode()])
        poller.register(socket, zmq.POLLIN)
        sockets.append(socket)
    print("ready", flush=True)
    next_heartbeat = time.monotonic() + 2.5
    while True:
        for socket, _ in poller.poll(500):
            while True:
                try:
                    frames = socket.recv_multipart(zmq.NOBLOCK)
                except zmq.Again:
                    break
                if len(frames) >= 6 and frames[2] == REQUEST:
                    socket.send_multipart([b"", WORKER, REPLY, frames[3], b"", OK])
        if time.monotonic() >= next_heartbeat:
            for socket in sockets:
                socket.send_multipart([b"", WORKER, HEARTBEAT])
            next_heartbeat = time.monotonic() + 2.5


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])

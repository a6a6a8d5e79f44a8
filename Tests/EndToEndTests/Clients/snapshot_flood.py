#!/usr/bin/python3
"""A snapshot peer that asks and never reads (issue 14, finding 3d), with pyzmq alone.

    snapshot_flood.py SNAPSHOT_ENDPOINT COUNT

Connects a DEALER that lets libzmq keep at most one reply for it and a small kernel receive
buffer, so that replies back up into the server; sends COUNT snapshot requests for `progress/`
(protocol/events.md, "Snapshots"), prints "sent COUNT", then holds the connection without
reading until its standard input closes or it is killed.
"""
import sys

import zmq


def main(endpoint, count):
    context = zmq.Context()
    dealer = context.socket(zmq.DEALER)
    dealer.setsockopt(zmq.RCVHWM, 1)
    dealer.setsockopt(zmq.RCVBUF, 4096)
    dealer.setsockopt(zmq.LINGER, 0)
    dealer.connect(endpoint)
    for _ in range(count):
        dealer.send_multipart([b"SNAPSHOT", b"progress/"])
    print("sent %d" % count, flush=True)
    sys.stdin.read()
    dealer.close()
    context.term()


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))

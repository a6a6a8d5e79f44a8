#!/usr/bin/python3
"""An independent 7/MDP client for Lyceum, written from https://rfc.zeromq.org/spec/7/ and
protocol/README.md with pyzmq alone.

    mdp_client.py ENDPOINT SERVICE JSON [SERVICE JSON ...]

Sends each JSON body to its service, one request at a time, and prints each reply's single body
frame on a line of its own. Exit status 0 on success, 1 on a reply that is not one frame of
JSON, 2 on a timeout.
"""
import json
import sys

import zmq

CLIENT = b"MDPC01"


def main(arguments):
    endpoint, pairs = arguments[0], arguments[1:]
    context = zmq.Context()
    socket = context.socket(zmq.REQ)
    socket.setsockopt(zmq.LINGER, 0)
    socket.connect(endpoint)
    for service, body in zip(pairs[0::2], pairs[1::2]):
        # A REQ socket adds the empty frame 0 itself.
        socket.send_multipart([CLIENT, service.encode(), body.encode()])
        if not socket.poll(5000):
            print("no reply from %s within 5 s" % service, file=sys.stderr, flush=True)
            return 2
        reply = socket.recv_multipart()
        if reply[:2] != [CLIENT, service.encode()] or len(reply) != 3:
            print("unexpected reply %r" % reply, file=sys.stderr, flush=True)
            return 1
        json.loads(reply[2].decode("utf-8"))
        print(reply[2].decode("utf-8"), flush=True)
    socket.close()
    context.term()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

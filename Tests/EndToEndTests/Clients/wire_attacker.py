#!/usr/bin/python3
"""Hostile peers for Lyceum's per-connection budgets, written from RFC 23 (ZMTP 3.0) and
protocol/majordomo.md with the standard library and pyzmq alone.

    wire_attacker.py partial HOST PORT MEGABYTES
        A raw ZMTP 3.0 connection (NULL greeting and READY by hand, as a DEALER) that sends
        4 MiB frames, each flagged MORE, of a message it never finishes, until the server cuts
        it or MEGABYTES are sent. Prints "cut SENT" or "sent SENT" (bytes).
    wire_attacker.py unread ENDPOINT COUNT JSON
        A DEALER that reads as little as it can (receive high-water mark 1, small kernel buffer)
        sends COUNT `books` requests with body JSON, prints "sent" and never reads a reply; it
        exits at the end of standard input. (Not reading, it cannot see the server end the
        connection either: libzmq stops reading a socket whose queue is full.)
    wire_attacker.py idle HOST PORT COUNT
        Opens COUNT plain TCP connections that never send a byte and prints "open COUNT"; then,
        for each line on standard input, "closed N": how many the server has closed. Exits at
        the end of standard input.
"""
import select
import socket
import struct
import sys
import time

import zmq

FRAME = 4 << 20


def greeting():
    # Signature, version 3.0, mechanism NULL, as-server 0, filler.
    return b"\xff" + b"\x00" * 8 + b"\x7f" + b"\x03\x00" + b"NULL".ljust(20, b"\x00") + b"\x00" + b"\x00" * 31


def ready(socket_type):
    name = b"Socket-Type"
    body = b"\x05READY" + bytes([len(name)]) + name + struct.pack(">I", len(socket_type)) + socket_type
    return b"\x04" + bytes([len(body)]) + body


def partial(host, port, megabytes):
    connection = socket.create_connection((host, int(port)))
    connection.sendall(greeting() + ready(b"DEALER"))
    payload = b"\x00" * FRAME
    header = b"\x03" + struct.pack(">Q", FRAME)  # MORE | LONG
    sent, limit = 0, int(megabytes) << 20
    try:
        while sent < limit:
            connection.sendall(header + payload)
            sent += len(header) + FRAME
    except (BrokenPipeError, ConnectionResetError):
        print("cut %d" % sent, flush=True)
        return
    print("sent %d" % sent, flush=True)


def unread(endpoint, count, body):
    context = zmq.Context()
    dealer = context.socket(zmq.DEALER)
    dealer.setsockopt(zmq.RCVHWM, 1)
    dealer.setsockopt(zmq.RCVBUF, 4096)
    dealer.setsockopt(zmq.LINGER, 0)
    dealer.connect(endpoint)
    for _ in range(int(count)):
        dealer.send_multipart([b"", b"MDPC01", b"books", body.encode()])
    print("sent", flush=True)
    sys.stdin.read()
    dealer.close()
    context.term()


def idle(host, port, count):
    connections = {}
    for _ in range(int(count)):
        connection = socket.create_connection((host, int(port)))
        connections[connection.fileno()] = connection
    print("open %d" % len(connections), flush=True)
    poller = select.poll()
    for descriptor in connections:
        poller.register(descriptor, select.POLLIN)
    closed = 0
    for _ in sys.stdin:
        # The server's greeting may come first; a connection is closed when a read finds the end.
        for descriptor, _ in poller.poll(200):
            try:
                ended = connections[descriptor].recv(65536) == b""
            except ConnectionResetError:
                ended = True
            if ended:
                poller.unregister(descriptor)
                closed += 1
        print("closed %d" % closed, flush=True)


if __name__ == "__main__":
    {"partial": partial, "unread": unread, "idle": idle}[sys.argv[1]](*sys.argv[2:])

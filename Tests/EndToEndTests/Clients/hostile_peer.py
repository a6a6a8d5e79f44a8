#!/usr/bin/python3
"""Hostile peers for the log, echo and /metrics tests (issue 14, findings 6 and 7), with pyzmq
and plain sockets alone.

    hostile_peer.py flood ENDPOINT SECONDS
        Sends one-frame messages that are not MDP to the broker for SECONDS, as fast as a DEALER
        can; prints the number sent once every one has left.
    hostile_peer.py service ENDPOINT BYTES
        Sends a request for a service whose name is BYTES bytes that are not printable; prints
        the reply as JSON: {"service_bytes": n, "service_is_echoed": bool, "body": [hex...]}.
    hostile_peer.py hold PORT IDLE
        Opens IDLE TCP connections to PORT that never send, and one that sends a request a byte
        every 0.9 s; prints "ready" and holds them until its standard input closes.
"""
import json
import socket
import sys
import threading
import time

import zmq


def flood(endpoint, seconds):
    context = zmq.Context()
    dealer = context.socket(zmq.DEALER)
    dealer.setsockopt(zmq.LINGER, -1)
    dealer.connect(endpoint)
    sent = 0
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for _ in range(1000):
            dealer.send(b"not majordomo")
        sent += 1000
    dealer.close()
    context.term()
    print(sent, flush=True)


def service(endpoint, size):
    context = zmq.Context()
    client = context.socket(zmq.DEALER)
    client.setsockopt(zmq.LINGER, 0)
    client.connect(endpoint)
    name = bytes((0x01, 0x1B, 0x7F, 0x9B, 0xFF)[i % 5] for i in range(size))
    client.send_multipart([b"", b"MDPC01", name, b"{}"])
    if not client.poll(15000):
        print("no reply within 15 s", file=sys.stderr, flush=True)
        return 2
    frames = client.recv_multipart()
    json.dump({"service_bytes": len(frames[2]), "service_is_echoed": frames[2] == name,
               "body": [frame.hex() for frame in frames[3:]]}, sys.stdout)
    return 0


def hold(port, idle):
    held = []
    for _ in range(idle):
        # Not waiting for each connection to be accepted: a server that accepts one at a time
        # would keep the peer from ever saying it is ready.
        connection = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        connection.setblocking(False)
        connection.connect_ex(("127.0.0.1", port))
        held.append(connection)
    stop = threading.Event()

    def slow_loris():
        request = b"GET /metrics HTTP/1.0\r\nX-Slow: " + b"a" * 10000
        while not stop.is_set():
            try:
                connection = socket.create_connection(("127.0.0.1", port))
                for byte in request:
                    connection.send(bytes([byte]))
                    if stop.wait(0.9):
                        break
            except OSError:
                pass  # dropped by the server: come back
    thread = threading.Thread(target=slow_loris, daemon=True)
    thread.start()
    print("ready", flush=True)
    sys.stdin.read()
    stop.set()
    for connection in held:
        connection.close()
    return 0


if __name__ == "__main__":
    command = sys.argv[1]
    if command == "flood":
        flood(sys.argv[2], float(sys.argv[3]))
    elif command == "service":
        sys.exit(service(sys.argv[2], int(sys.argv[3])))
    elif command == "hold":
        sys.exit(hold(int(sys.argv[2]), int(sys.argv[3])))

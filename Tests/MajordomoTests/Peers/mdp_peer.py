#!/usr/bin/python3
"""An independent 7/MDP peer written from https://rfc.zeromq.org/spec/7/ with pyzmq alone.

    mdp_peer.py client ENDPOINT SERVICE COUNT   REQ client; checks every echo; prints "ok COUNT"
    mdp_peer.py worker ENDPOINT SERVICE         DEALER worker; replies [b"py", *body]; prints "ready"

Exit status 0 on success, 1 on a protocol mismatch, 2 on a timeout.
"""
import sys
import time

import zmq

CLIENT = b"MDPC01"
WORKER = b"MDPW01"
READY, REQUEST, REPLY, HEARTBEAT, DISCONNECT = b"\x01", b"\x02", b"\x03", b"\x04", b"\x05"
HEARTBEAT_INTERVAL_MS = 100
LIVENESS = 3


def fail(status, text):
    print(text, file=sys.stderr, flush=True)
    sys.exit(status)


def client(endpoint, service, count):
    context = zmq.Context()
    socket = context.socket(zmq.REQ)
    socket.setsockopt(zmq.LINGER, 0)
    socket.connect(endpoint)
    for index in range(count):
        body = [b"python request %d" % index, bytes([0, index % 256])]
        # A REQ socket adds the empty frame 0 itself.
        socket.send_multipart([CLIENT, service] + body)
        if not socket.poll(5000):
            fail(2, "no reply to request %d" % index)
        reply = socket.recv_multipart()
        if reply[:2] != [CLIENT, service]:
            fail(1, "bad reply header %r" % reply[:2])
        if reply[2:] != body:
            fail(1, "reply %r does not echo %r" % (reply[2:], body))
    print("ok %d" % count, flush=True)


def worker(endpoint, service):
    context = zmq.Context()
    while True:
        socket = context.socket(zmq.DEALER)
        socket.setsockopt(zmq.LINGER, 0)
        socket.connect(endpoint)
        socket.send_multipart([b"", WORKER, READY, service])
        print("ready", flush=True)
        expiry = time.monotonic() + LIVENESS * HEARTBEAT_INTERVAL_MS / 1000
        next_heartbeat = time.monotonic() + HEARTBEAT_INTERVAL_MS / 1000
        while True:
            if socket.poll(HEARTBEAT_INTERVAL_MS):
                frames = socket.recv_multipart()
                if len(frames) < 3 or frames[0] != b"" or frames[1] != WORKER:
                    fail(1, "invalid message from the broker %r" % frames)
                command = frames[2]
                expiry = time.monotonic() + LIVENESS * HEARTBEAT_INTERVAL_MS / 1000
                if command == REQUEST:
                    if len(frames) < 6 or frames[4] != b"":
                        fail(1, "malformed REQUEST %r" % frames)
                    client_address, body = frames[3], frames[5:]
                    socket.send_multipart([b"", WORKER, REPLY, client_address, b"", b"py"] + body)
                    next_heartbeat = time.monotonic() + HEARTBEAT_INTERVAL_MS / 1000
                elif command == DISCONNECT:
                    break
                elif command != HEARTBEAT:
                    fail(1, "unexpected command %r" % command)
            if time.monotonic() > expiry:
                break
            if time.monotonic() >= next_heartbeat:
                socket.send_multipart([b"", WORKER, HEARTBEAT])
                next_heartbeat = time.monotonic() + HEARTBEAT_INTERVAL_MS / 1000
        socket.close()
        time.sleep(0.05)


if __name__ == "__main__":
    role, endpoint, service = sys.argv[1], sys.argv[2], sys.argv[3].encode()
    if role == "client":
        client(endpoint, service, int(sys.argv[4]))
    elif role == "worker":
        worker(endpoint, service)
    else:
        fail(2, "unknown role %s" % role)

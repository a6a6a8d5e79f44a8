#!/usr/bin/python3
"""An independent CURVE (or plaintext) peer of Lyceum, with pyzmq alone.

    curve_peer.py MODE ENDPOINT SERVER_CERT CLIENT_CERT ARGS...

SERVER_CERT is the server's public certificate (or "z85:KEY", a key a heartbeat advertised) and
CLIENT_CERT this peer's secret certificate (zcert files, read with zmq.auth.load_certificate);
"-" for both connects in plaintext.
Modes (each prints one line):
    call SERVICE JSON             one 7/MDP request: the reply frame, or "noreply" after 3 s
    many SERVICE JSON COUNT       COUNT requests in turn on one connection: "replies N"
    bigmessage FRAMES BYTES       one 7/MDP request of FRAMES extra frames of BYTES: "sent"
    subscribe SECONDS             a SUB of everything: "message TOPIC" per message as it comes,
                                  then "messages N topics T1,T2,…" (first topic levels) after SECONDS
    snapshot                      one snapshot request for progress/: "reply N frames" or "noreply"
    publish TOPIC SECONDS         a PUB sending TOPIC messages for SECONDS: "published N"
    heartbeat                     a SUB of hb/: "heartbeat SNAPSHOT SNAPSHOT_KEY" of the first one
                                  that advertises a snapshot endpoint, or "noheartbeat" after 10 s
    worker SERVICE SECONDS        a would-be worker: READY for SERVICE every 100 ms for SECONDS,
                                  counting what the broker sends: "requests N disconnects D"
"""
import json
import sys
import time

import zmq
import zmq.auth


def secure(socket, server_cert, client_cert):
    if server_cert == "-" and client_cert == "-":
        return
    if server_cert.startswith("z85:"):
        server_public = server_cert[4:].encode()
    else:
        server_public, _ = zmq.auth.load_certificate(server_cert)
    public, secret = zmq.auth.load_certificate(client_cert)
    socket.curve_serverkey = server_public
    socket.curve_publickey = public
    socket.curve_secretkey = secret


def main(mode, endpoint, server_cert, client_cert, args):
    context = zmq.Context()
    kind = {"subscribe": zmq.SUB, "heartbeat": zmq.SUB, "publish": zmq.PUB}.get(mode, zmq.DEALER)
    socket = context.socket(kind)
    socket.linger = 0
    secure(socket, server_cert, client_cert)
    socket.connect(endpoint)
    poller = zmq.Poller()
    poller.register(socket, zmq.POLLIN)

    def request(service, body, timeout=3000):
        socket.send_multipart([b"", b"MDPC01", service.encode(), body.encode()])
        if not poller.poll(timeout):
            return None
        return socket.recv_multipart()[-1]

    if mode == "call":
        reply = request(args[0], args[1])
        print("noreply" if reply is None else reply.decode())
    elif mode == "many":
        replies = 0
        for _ in range(int(args[2])):
            if request(args[0], args[1], 5000) is None:
                break
            replies += 1
        print("replies %d" % replies)
    elif mode == "bigmessage":
        frame = b"x" * int(args[1])
        socket.send_multipart([b"", b"MDPC01", b"books"] + [frame] * int(args[0]))
        poller.poll(3000)
        print("sent")
    elif mode == "subscribe":
        socket.setsockopt(zmq.SUBSCRIBE, b"")
        deadline = time.monotonic() + float(args[0])
        count, topics = 0, set()
        while time.monotonic() < deadline:
            if poller.poll(100):
                frames = socket.recv_multipart()
                print("message " + frames[0].decode(errors="replace"), flush=True)
                count += 1
                topics.add(frames[0].decode(errors="replace").split("/")[0])
        print("messages %d topics %s" % (count, ",".join(sorted(topics))))
    elif mode == "snapshot":
        socket.send_multipart([b"SNAPSHOT", b"progress/"])
        if poller.poll(3000):
            print("reply %d frames" % len(socket.recv_multipart()))
        else:
            print("noreply")
    elif mode == "publish":
        deadline = time.monotonic() + float(args[1])
        count = 0
        while time.monotonic() < deadline:
            socket.send_multipart([args[0].encode(), b'{"forged":true}'])
            count += 1
            time.sleep(0.01)
        print("published %d" % count)
    elif mode == "heartbeat":
        socket.setsockopt(zmq.SUBSCRIBE, b"hb/")
        deadline = time.monotonic() + 10
        line = "noheartbeat"
        while time.monotonic() < deadline:
            if poller.poll(100):
                body = json.loads(socket.recv_multipart()[1])
                if body.get("snapshot"):
                    line = "heartbeat %s %s" % (body["snapshot"], body.get("snapshot_key"))
                    break
        print(line)
    elif mode == "worker":
        deadline = time.monotonic() + float(args[1])
        requests = disconnects = 0
        while time.monotonic() < deadline:
            socket.send_multipart([b"", b"MDPW01", b"\x01", args[0].encode()])
            while poller.poll(100):
                frames = socket.recv_multipart()
                if len(frames) >= 3 and frames[1] == b"MDPW01" and frames[2] == b"\x02":
                    requests += 1
                elif len(frames) >= 3 and frames[1] == b"MDPW01" and frames[2] == b"\x05":
                    disconnects += 1
        print("requests %d disconnects %d" % (requests, disconnects))
    sys.stdout.flush()
    socket.close()
    context.term()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:])

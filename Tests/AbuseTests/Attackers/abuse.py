"""What every attacker shares: arguments, a 7/MDP client over pyzmq, a sampler of the target's
resident memory, a writer that makes acknowledged book writes while the attack runs, raw ZMTP 3.0
over a plain TCP socket, and the one RESULT line the Swift test reads.

Written from the 7/MDP RFC and ZMTP 3.0 (rfc.zeromq.org/spec/23); nothing here imports Lyceum.
"""

import argparse
import json
import os
import resource
import select
import socket
import struct
import sys
import threading
import time
import uuid

import zmq

MDP_CLIENT = b"MDPC01"
MDP_WORKER = b"MDPW01"


def arguments(extra=None):
    """The options every attacker takes; `extra(parser)` adds its own."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--endpoint", required=True, help="the broker's client endpoint")
    parser.add_argument("--pid", type=int, required=True, help="the process whose RSS is sampled")
    parser.add_argument("--events", help="the XPUB subscribers connect to")
    parser.add_argument("--snapshot", help="the snapshot ROUTER")
    parser.add_argument("--metrics-port", type=int)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--seed", type=int, default=0)
    if extra:
        extra(parser)
    return parser.parse_args()


def log(*parts):
    """A progress line on stderr, which the Swift test shows when it fails."""
    print(*parts, file=sys.stderr, flush=True)


def report(**values):
    """The attacker's findings: one `RESULT {json}` line on stdout, read by the Swift test."""
    print("RESULT " + json.dumps(values), flush=True)


def raise_descriptor_limit(wanted):
    """Lifts this process's soft descriptor limit towards `wanted` (the hard limit caps it)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if soft < target:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))


def rss_kib(pid):
    """VmRSS of `pid` in KiB, or None once it is gone."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def cpu_seconds(pid):
    """User + system CPU time `pid` has used, in seconds (fields 14 and 15 of /proc/PID/stat)."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class RssSampler:
    """Samples the target's VmRSS every 20 ms on a thread, keeping the peak, so that memory an
    attack holds only while its connection is open is seen too."""

    def __init__(self, pid):
        self.pid = pid
        self.peak_kib = rss_kib(pid) or 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        while not self._stop.wait(0.02):
            value = rss_kib(self.pid)
            if value is None:
                return
            self.peak_kib = max(self.peak_kib, value)

    def stop(self):
        self._stop.set()
        self._thread.join()
        return self.peak_kib


class Client:
    """One DEALER speaking MDP/Client; `call` waits for the reply to its own request."""

    def __init__(self, context, endpoint, routing_id=None):
        self.socket = context.socket(zmq.DEALER)
        self.socket.setsockopt(zmq.LINGER, 0)
        if routing_id is not None:
            self.socket.setsockopt(zmq.ROUTING_ID, routing_id)
        self.socket.connect(endpoint)

    def send(self, service, body):
        """Sends one request without waiting (body: bytes, str or a JSON-able object)."""
        if isinstance(body, str):
            body = body.encode()
        elif not isinstance(body, bytes):
            body = json.dumps(body, ensure_ascii=False).encode()
        service = service if isinstance(service, bytes) else service.encode()
        self.socket.send_multipart([b"", MDP_CLIENT, service, body])

    def receive(self, timeout):
        """The next reply's frames after the service name, or None after `timeout` seconds."""
        if not self.socket.poll(int(timeout * 1000)):
            return None
        frames = self.socket.recv_multipart()
        return frames[3:]

    def call(self, service, body, timeout=5.0):
        """Sends a request and returns (reply body frames or None, seconds waited)."""
        started = time.monotonic()
        self.send(service, body)
        reply = self.receive(timeout)
        return reply, time.monotonic() - started

    def call_json(self, service, body, timeout=5.0):
        """Like `call` for a one-frame JSON reply: (parsed reply or None, seconds waited)."""
        reply, waited = self.call(service, body, timeout)
        if reply is None or len(reply) != 1:
            return None, waited
        try:
            return json.loads(reply[0]), waited
        except ValueError:
            return None, waited

    def close(self):
        self.socket.close(0)


def book(learner, title, review=""):
    """A valid `books create` request."""
    return {"op": "create", "learner": learner, "title": title, "author": "Abuse Suite",
            "genre": "Mystery", "rating": 3, "review": review}


class AcknowledgedWriter:
    """Creates a book every `interval` seconds on its own connection while an attack runs and
    remembers each one the server acknowledged, for the Swift test to read back afterwards."""

    def __init__(self, context, endpoint, learner="abuse-writer", interval=0.1, limit=40):
        self.context = context
        self.endpoint = endpoint
        self.client = Client(context, endpoint)
        self.learner = learner
        self.interval = interval
        self.limit = limit
        self.acknowledged = []
        self.unanswered = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        count = 0
        while not self._stop.is_set() and len(self.acknowledged) < self.limit:
            count += 1
            title = f"written during the attack {count} {uuid.uuid4().hex[:8]}"
            reply, _ = self.client.call_json("books", book(self.learner, title), timeout=2.0)
            if reply is None:
                # No reply: the write may or may not have happened, so it is not "acknowledged".
                # A fresh socket keeps a late reply from being taken for the next request's.
                self.unanswered += 1
                self.client.close()
                self.client = Client(self.context, self.endpoint)
            elif reply.get("ok"):
                self.acknowledged.append({"learner": self.learner, "id": reply["result"]["book"]["id"], "title": title})
            self._stop.wait(self.interval)

    def stop(self):
        """Stops writing; returns the acknowledged writes."""
        self._stop.set()
        self._thread.join(timeout=10)
        self.client.close()
        return self.acknowledged


class Attack:
    """The frame around one attack: a context, the RSS sampler and the acknowledged writer are
    started on entry; `finish(**findings)` stops them and prints the RESULT line."""

    def __init__(self, options, writer=True):
        self.options = options
        self.context = zmq.Context()
        self.sampler = RssSampler(options.pid)
        self.writer = AcknowledgedWriter(self.context, options.endpoint) if writer else None

    def finish(self, **findings):
        acknowledged = self.writer.stop() if self.writer else []
        findings.setdefault("acknowledged", [])
        findings["acknowledged"] = findings["acknowledged"] + acknowledged
        findings["unanswered_writes"] = self.writer.unanswered if self.writer else 0
        findings["peak_rss_kib"] = self.sampler.stop()
        findings["alive"] = rss_kib(self.options.pid) is not None
        report(**findings)
        self.context.destroy(linger=0)


def tcp_address(endpoint):
    """("127.0.0.1", port) of a tcp:// endpoint."""
    host, port = endpoint[len("tcp://"):].rsplit(":", 1)
    return host, int(port)


def open_idle_connections(addresses, count):
    """Opens `count` TCP connections spread over `addresses` and sends nothing on them.
    Non-blocking: once a server stops accepting, connects wait in its backlog or in SYN
    retries, and must not cost a timeout each. Returns (the sockets, how many connected)."""
    held = []
    for index in range(count):
        connection = socket.socket()
        connection.setblocking(False)
        connection.connect_ex(addresses[index % len(addresses)])
        held.append(connection)
    time.sleep(1.0)
    poller = select.poll()
    for connection in held:
        poller.register(connection, select.POLLOUT)
    connected = sum(1 for _, events in poller.poll(0) if events & select.POLLOUT and not events & (select.POLLERR | select.POLLHUP))
    return held, connected


def pipelined(client, service, requests, window=200, timeout=30.0):
    """Sends `requests` with at most `window` in flight (below the broker's queue limits);
    returns each reply parsed as JSON, or None for a reply that is not (a broker error)."""
    replies = []
    pending = 0
    for request in requests:
        if pending == window:
            replies.append(_parsed(client.receive(timeout)))
            pending -= 1
        client.send(service, request)
        pending += 1
    for _ in range(pending):
        replies.append(_parsed(client.receive(timeout)))
    return replies


def _parsed(frames):
    if not frames or len(frames) != 1:
        return None
    try:
        return json.loads(frames[0])
    except ValueError:
        return None


def acknowledged_books(learner, replies):
    """The books that `create` replies for `learner` acknowledged, as the Swift test reads them back."""
    return [{"learner": learner, "id": reply["result"]["book"]["id"], "title": reply["result"]["book"]["title"]}
            for reply in replies if reply and reply.get("ok")]


class RawZMTP:
    """A ZMTP 3.0 peer spoken by hand over a plain TCP socket: the greeting, the NULL
    mechanism's READY, then frames of any size and flags — including a message never finished,
    which no ZeroMQ library will send."""

    def __init__(self, endpoint, socket_type=b"DEALER", timeout=5.0, receive_buffer=None):
        self.socket = socket.socket()
        if receive_buffer:
            # Set before connecting, so the window the peer may fill stays this small.
            self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
        self.socket.settimeout(timeout)
        self.socket.connect(tcp_address(endpoint))
        signature = b"\xff" + b"\x00" * 8 + b"\x7f"
        mechanism = b"NULL".ljust(20, b"\x00")
        self.socket.sendall(signature + bytes([3, 0]) + mechanism + b"\x00" + b"\x00" * 31)
        self._read_exactly(64)  # the peer's greeting
        name = b"Socket-Type"
        ready = b"\x05READY" + bytes([len(name)]) + name + struct.pack(">I", len(socket_type)) + socket_type
        self._send_command(ready)
        self._read_command()  # the peer's READY

    def _read_exactly(self, count):
        data = b""
        while len(data) < count:
            chunk = self.socket.recv(count - len(data))
            if not chunk:
                raise ConnectionError("the peer closed the connection")
            data += chunk
        return data

    def _send_command(self, body):
        if len(body) < 256:
            self.socket.sendall(bytes([0x04, len(body)]) + body)
        else:
            self.socket.sendall(bytes([0x06]) + struct.pack(">Q", len(body)) + body)

    def _read_command(self):
        flags = self._read_exactly(1)[0]
        size = struct.unpack(">Q", self._read_exactly(8))[0] if flags & 0x02 else self._read_exactly(1)[0]
        return self._read_exactly(size)

    def send_frame(self, data, more):
        """Sends one frame; `more` marks that another frame of the same message follows."""
        flags = 0x01 if more else 0x00
        if len(data) < 256:
            header = bytes([flags, len(data)])
        else:
            header = bytes([flags | 0x02]) + struct.pack(">Q", len(data))
        self.socket.sendall(header)
        self.socket.sendall(data)

    def send_message(self, frames):
        """Sends a whole message, e.g. an MDP request `[b"", MDP_CLIENT, service, body]`."""
        for index, frame in enumerate(frames):
            self.send_frame(frame, more=index < len(frames) - 1)

    def close(self):
        self.socket.close()

"""What the client tests run against: a real ``lyceum serve`` on free loopback ports with a
temporary data directory, and small ZeroMQ peers (a lossy proxy, a scripted broker, an event
forwarder that drops events) run on threads. Everything started is stopped by the test's cleanups.

The binary is ``$LYCEUM_BIN``, else ``.build/debug/lyceum`` in the repository.
"""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import tempfile
import threading
import time
import unittest
from pathlib import Path
from typing import Any, Callable, Optional

import zmq
import zmq.auth

import lyceum_client

REPOSITORY = Path(__file__).resolve().parents[3]
PACKAGE = REPOSITORY / "clients" / "python"
PYTHON = "/usr/bin/python3"


def lyceum_binary() -> str:
    """The ``lyceum`` executable the tests start."""
    path = os.environ.get("LYCEUM_BIN") or str(REPOSITORY / ".build" / "debug" / "lyceum")
    if not os.access(path, os.X_OK):
        raise RuntimeError(f"no lyceum executable at {path}: run `swift build` or set LYCEUM_BIN")
    return path


def free_port() -> int:
    """A loopback TCP port nobody listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def eventually(condition: Callable[[], bool], timeout: float = 20.0) -> bool:
    """Whether ``condition`` holds within ``timeout`` seconds (a liveness bound, not a timing)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def mdp_ready(endpoint: str, curve: Optional[Key] = None, service: bytes = b"books") -> bool:
    """Whether the broker at ``endpoint`` has ``service`` registered (8/MMI ``mmi.service``),
    asked as ``curve`` (an ``admin`` key: the broker keeps ``mmi.*`` for them) when it needs CURVE."""
    context = zmq.Context.instance()
    request = context.socket(zmq.REQ)
    request.setsockopt(zmq.LINGER, 0)
    try:
        if curve is not None:
            curve.apply(request)
        request.connect(endpoint)
        request.send_multipart([b"MDPC01", b"mmi.service", service])
        return bool(request.poll(500)) and request.recv_multipart()[-1] == b"200"
    finally:
        request.close()


def run_example(test: unittest.TestCase, python: str, name: str, environment: dict[str, str],
                cwd: Optional[str] = None) -> list[str]:
    """The lines ``clients/python/examples/<name>`` printed, run by ``python``; it must exit 0."""
    example = subprocess.run([python, str(PACKAGE / "examples" / name)], cwd=cwd, env=environment,
                             capture_output=True, text=True, timeout=120)
    test.assertEqual(example.returncode, 0, example.stderr)
    return example.stdout.splitlines()


def assert_guide_shows(test: unittest.TestCase, heading: str, name: str) -> None:
    """docs/clients.md shows example ``name`` (after its docstring) as the first Python block
    under ``heading``, exactly."""
    section = (REPOSITORY / "docs" / "clients.md").read_text().split(heading, 1)[1]
    shown = section.split("```python\n", 1)[1].split("```", 1)[0]
    example = (PACKAGE / "examples" / name).read_text()
    test.assertEqual(shown, example.split('"""', 2)[2].lstrip("\n"))


class Key:
    """A client's CURVE key pair made by ``lyceum keys generate``: the paths of its secret
    certificate and of the server's public one, as ``curve_certificate=`` and
    ``server_certificate=`` take them."""

    def __init__(self, secret: str, server: str) -> None:
        self.secret, self.server = secret, server

    def options(self) -> dict[str, str]:
        """The client options that make a client speak CURVE with this key."""
        return {"curve_certificate": self.secret, "server_certificate": self.server}

    def arguments(self) -> list[str]:
        """What makes a ``lyceum`` process (``worker``, ``call``) a CURVE client with this key."""
        return ["--curve-secret-key", self.secret, "--curve-server-key", self.server]

    def apply(self, socket: zmq.Socket[Any]) -> None:
        """Makes ``socket`` a CURVE client of the server with this key."""
        socket.curve_publickey, socket.curve_secretkey = zmq.auth.load_certificate(self.secret)
        socket.curve_serverkey, _ = zmq.auth.load_certificate(self.server)


class Keys:
    """A server key and a directory of client keys (serve's ``authorized-keys``), made by
    ``lyceum keys generate`` in a temporary directory."""

    def __init__(self, test: unittest.TestCase) -> None:
        directory = tempfile.TemporaryDirectory(prefix="lyceum-pyclient-keys-")
        test.addCleanup(directory.cleanup)
        self.clients = os.path.join(directory.name, "clients")
        server = os.path.join(directory.name, "server")
        os.mkdir(self.clients)
        os.mkdir(server)
        self._generate("serve", server, "admin")
        self.server = os.path.join(server, "serve")

    def client(self, name: str, role: str, *options: str) -> Key:
        """A new authorised client key with ``role`` (and ``options``, e.g. ``--learners``)."""
        self._generate(name, self.clients, role, *options)
        return Key(os.path.join(self.clients, name + "_secret"), self.server)

    def serve_arguments(self) -> list[str]:
        """What makes ``serve`` (or ``broker``) require CURVE with these keys."""
        return ["--curve-secret-key", self.server + "_secret", "--authorized-keys", self.clients]

    @staticmethod
    def _generate(name: str, directory: str, role: str, *options: str) -> None:
        subprocess.run([lyceum_binary(), "keys", "generate", name, "--dir", directory, "--role", role, *options],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


class Serve:
    """``lyceum serve`` with its own ports and data directory; ``restart()`` keeps the data.
    ``arguments`` are added to its command line; ``probe`` is the key that asks whether it is
    ready, when the arguments make it require CURVE."""

    def __init__(self, test: unittest.TestCase, arguments: Optional[list[str]] = None, probe: Optional[Key] = None) -> None:
        directory = tempfile.TemporaryDirectory(prefix="lyceum-pyclient-")
        test.addCleanup(directory.cleanup)
        self.data = os.path.join(directory.name, "data")
        self.log = os.path.join(directory.name, "serve.log")
        self.endpoint = f"tcp://127.0.0.1:{free_port()}"
        self.events = f"tcp://127.0.0.1:{free_port()}"
        self.snapshot = f"tcp://127.0.0.1:{free_port()}"
        self.process: Optional[subprocess.Popen[bytes]] = None
        self._arguments = arguments or []
        self._probe = probe
        test.addCleanup(self.stop)
        self.start()

    def start(self) -> None:
        """Starts serve and waits until it answers."""
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen(
                [lyceum_binary(), "serve", "--endpoint", self.endpoint, "--data", self.data,
                 "--events-endpoint", self.events, "--snapshot-endpoint", self.snapshot,
                 "--log-format", "logfmt", "--log-level", "warning", *self._arguments],
                stdin=subprocess.DEVNULL, stdout=log, stderr=log)
        if not eventually(lambda: self.process is not None and self.process.poll() is None
                          and mdp_ready(self.endpoint, self._probe)):
            raise RuntimeError(f"lyceum serve did not come up; its log:\n{Path(self.log).read_text()}")

    def stop(self) -> None:
        """Stops serve (SIGTERM, then SIGKILL after 10 s); does nothing when it is not running."""
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def restart(self) -> None:
        """Stops and starts again on the same ports and data."""
        self.stop()
        self.start()


class Processes:
    """``lyceum`` processes by name, each logging to its own file in a temporary directory; every
    one is killed by the test's cleanups."""

    def __init__(self, test: unittest.TestCase) -> None:
        directory = tempfile.TemporaryDirectory(prefix="lyceum-pyclient-processes-")
        test.addCleanup(directory.cleanup)
        self.directory = directory.name
        self._running: dict[str, subprocess.Popen[bytes]] = {}
        test.addCleanup(self.kill_all)

    def start(self, name: str, arguments: list[str]) -> None:
        """Starts ``lyceum`` with ``arguments`` (and logfmt warnings to its log) as ``name``."""
        with open(self.log(name), "ab") as log:
            self._running[name] = subprocess.Popen(
                [lyceum_binary(), *arguments, "--log-format", "logfmt", "--log-level", "warning"],
                stdin=subprocess.DEVNULL, stdout=log, stderr=log)

    def log(self, name: str) -> str:
        """The path of ``name``'s log."""
        return os.path.join(self.directory, f"{name}.log")

    def logs(self) -> str:
        """Every log, for a failure message."""
        return "\n".join(f"{name}:\n{Path(self.log(name)).read_text()}" for name in self._running)

    def kill(self, name: str) -> None:
        """SIGKILLs ``name`` and waits for it; nothing when it is not running."""
        process = self._running.pop(name, None)
        if process is not None and process.poll() is None:
            process.send_signal(signal.SIGKILL)
            process.wait()

    def kill_all(self) -> None:
        """Kills every process still running."""
        for name in list(self._running):
            self.kill(name)


class ServeTestCase(unittest.TestCase):
    """A test with its own ``serve`` and a blocking ``client`` of it (``attempts`` as the class says)."""
    attempts = 3

    def setUp(self) -> None:
        self.serve = Serve(self)
        self.client = lyceum_client.Client(self.serve.endpoint, timeout=5, attempts=self.attempts)
        self.addCleanup(self.client.close)


class Peer(threading.Thread):
    """A ZeroMQ peer on a thread of its own, polling its sockets until the test's cleanup stops it."""

    def __init__(self, test: unittest.TestCase) -> None:
        super().__init__(daemon=True)
        self.context = zmq.Context()
        self._stopping = threading.Event()
        test.addCleanup(self.stop)

    def stop(self) -> None:
        """Stops the thread and closes its sockets."""
        self._stopping.set()
        if self.is_alive():
            self.join(10)
        self.context.destroy(linger=0)

    def serve(self, sockets: list[zmq.Socket[Any]], handle: Callable[[zmq.Socket[Any], list[bytes]], None]) -> None:
        """Calls ``handle`` with each message any of ``sockets`` receives until stopped."""
        poller = zmq.Poller()
        for each in sockets:
            poller.register(each, zmq.POLLIN)
        while not self._stopping.is_set():
            for ready, _ in poller.poll(50):
                handle(ready, ready.recv_multipart())


class LossyProxy(Peer):
    """A ROUTER→DEALER proxy in front of a broker (client envelopes pass through, as majordomo.md
    allows) that drops the replies ``drop(reply_number)`` chooses, counting from 1; it may also run
    ``on_drop`` (e.g. restart the server) before going on."""

    def __init__(self, test: unittest.TestCase, broker: str, drop: Callable[[int], bool],
                 on_drop: Callable[[], None] = lambda: None) -> None:
        super().__init__(test)
        self.endpoint = f"tcp://127.0.0.1:{free_port()}"
        self.requests: list[dict[str, Any]] = []
        self._replies = 0
        self._drop, self._on_drop = drop, on_drop
        self._front = self.context.socket(zmq.ROUTER)
        self._front.bind(self.endpoint)
        self._back = self.context.socket(zmq.DEALER)
        self._back.connect(broker)
        self.start()

    def run(self) -> None:
        self.serve([self._front, self._back], self._forward)

    def _forward(self, socket: zmq.Socket[Any], frames: list[bytes]) -> None:
        if socket is self._front:
            self.requests.append(json.loads(frames[-1]))
            self._back.send_multipart(frames)
            return
        self._replies += 1
        if self._drop(self._replies):
            self._on_drop()
        else:
            self._front.send_multipart(frames)


class ScriptedBroker(Peer):
    """A broker that answers each request with ``answer(request_number, body)``: the reply body
    frame, or ``None`` for no reply. Requests are recorded as sent. ``curve_secret`` makes it a
    CURVE server."""

    def __init__(self, test: unittest.TestCase, answer: Callable[[int, dict[str, Any]], Optional[bytes]],
                 curve_secret: Optional[bytes] = None) -> None:
        super().__init__(test)
        self.endpoint = f"tcp://127.0.0.1:{free_port()}"
        self.requests: list[dict[str, Any]] = []
        self._answer = answer
        self._router = self.context.socket(zmq.ROUTER)
        if curve_secret is not None:
            self._router.curve_server = True
            self._router.curve_secretkey = curve_secret
        self._router.bind(self.endpoint)
        self.start()

    def run(self) -> None:
        self.serve([self._router], self._reply)

    def _reply(self, socket: zmq.Socket[Any], frames: list[bytes]) -> None:
        empty = frames.index(b"")
        envelope, (header, service, body) = frames[:empty + 1], frames[empty + 1:]
        self.requests.append(json.loads(body))
        answer = self._answer(len(self.requests), self.requests[-1])
        if answer is not None:
            socket.send_multipart(envelope + [header, service, answer])


class DroppingForwarder(Peer):
    """Passes every event from a publisher to its own PUB except those ``drop(topic, body)`` picks.
    With ``subscribe_as`` (a ``dashboard`` key) it subscribes over CURVE and its PUB stands in
    for the publisher: a CURVE server with the server's own key, so subscribers keep theirs."""

    def __init__(self, test: unittest.TestCase, publisher: str, drop: Callable[[str, dict[str, Any]], bool],
                 subscribe_as: Optional[Key] = None) -> None:
        super().__init__(test)
        self.endpoint = f"tcp://127.0.0.1:{free_port()}"
        self.dropped: list[dict[str, Any]] = []
        self._drop = drop
        self._sub = self.context.socket(zmq.SUB)
        self._sub.setsockopt(zmq.SUBSCRIBE, b"")
        self._pub = self.context.socket(zmq.PUB)
        if subscribe_as is not None:
            subscribe_as.apply(self._sub)
            self._pub.curve_server = True
            _, self._pub.curve_secretkey = zmq.auth.load_certificate(subscribe_as.server + "_secret")
        self._sub.connect(publisher)
        self._pub.bind(self.endpoint)
        self.start()

    def run(self) -> None:
        self.serve([self._sub], self._pass)

    def _pass(self, socket: zmq.Socket[Any], frames: list[bytes]) -> None:
        body = json.loads(frames[1])
        if self._drop(frames[0].decode(), body):
            self.dropped.append(body)
        else:
            self._pub.send_multipart(frames)


def nth_progress_event(n: int) -> Callable[[str, dict[str, Any]], bool]:
    """A ``DroppingForwarder`` rule taking out the ``n``-th progress event only."""
    def drop(topic: str, body: dict[str, Any]) -> bool:
        return topic.startswith("progress/") and body.get("progress_seq") == n
    return drop


def ok(result: Any) -> bytes:
    """A contract reply carrying ``result``."""
    return json.dumps({"ok": True, "result": result}).encode()


def failure(code: str, message: str = "scripted") -> bytes:
    """A contract error reply."""
    return json.dumps({"ok": False, "error": {"code": code, "message": message}}).encode()

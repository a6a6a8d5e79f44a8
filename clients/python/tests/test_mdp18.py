"""18/MDP beside 7/MDP (protocol/majordomo.md, "Three dialects"): majortomo 0.2.0 from PyPI, in a
virtual environment made here, as client of ``lyceum serve`` and as the broker of
``lyceum worker --mdp 18``; a strict RFC 18 client of this file's own (a pyzmq DEALER); and each
dialect's workers serving the other's clients through ``lyceum broker``."""
from __future__ import annotations

import json
import os
import subprocess
import tempfile
import time
import unittest
from pathlib import Path
from typing import Any, Optional

import zmq

import lyceum_client

from .support import PYTHON, Processes, Serve, assert_guide_shows, eventually, free_port, mdp_ready, run_example

#: What the tests install: majortomo imports six without declaring it.
MAJORTOMO = ["majortomo==0.2.0", "six"]

_environment: Optional[tempfile.TemporaryDirectory[str]] = None


def majortomo_python() -> str:
    """The Python of a virtual environment with majortomo, made once for this module's tests."""
    global _environment
    if _environment is None:
        directory = tempfile.TemporaryDirectory(prefix="lyceum-majortomo-")
        venv = os.path.join(directory.name, "venv")
        subprocess.run([PYTHON, "-m", "venv", "--system-site-packages", venv], check=True)
        install = subprocess.run([os.path.join(venv, "bin", "python"), "-m", "pip", "install", "--quiet",
                                  "--disable-pip-version-check", *MAJORTOMO], capture_output=True, text=True, timeout=600)
        if install.returncode != 0:
            directory.cleanup()
            raise RuntimeError(f"pip could not install {MAJORTOMO}: {install.stderr}")
        _environment = directory
    return os.path.join(_environment.name, "venv", "bin", "python")


def tearDownModule() -> None:
    if _environment is not None:
        _environment.cleanup()


#: majortomo's own broker, logging each READY and FINAL, until SIGTERM.
BROKER = """
import logging, signal, sys
from majortomo.broker import Broker
logging.basicConfig(level=logging.INFO, stream=sys.stdout, format="%(message)s")
broker = Broker(bind=sys.argv[1])
signal.signal(signal.SIGTERM, lambda *_: broker.stop())
broker.run()
"""

#: majortomo's client: one request, every part's frames as JSON lines, on stdout.
CALL = """
import json, sys
from majortomo import Client
with Client(sys.argv[1]) as client:
    client.send(sys.argv[2], sys.argv[3].encode())
    for part in client.recv_all(timeout=5):
        print(json.dumps([frame.decode() for frame in part]))
"""


def majortomo_call(endpoint: str, service: str, request: dict[str, Any]) -> list[dict[str, Any]]:
    """The parts of majortomo's Client's reply to ``request``, each decoded; [] when it timed out."""
    run = subprocess.run([majortomo_python(), "-c", CALL, endpoint, service, json.dumps(request)],
                         capture_output=True, text=True, timeout=120)
    if run.returncode != 0:
        return []
    return [json.loads(frame) for line in run.stdout.splitlines() for frame in json.loads(line)]


def book(title: str) -> dict[str, Any]:
    """A valid ``create`` of ``title`` for the learner ``ada``."""
    return {"op": "create", "learner": "ada", "title": title, "author": "Anon", "genre": "Fantasy", "rating": 4}


class RFC18Client:
    """A strict RFC 18 client: a DEALER sending ``MDPC02, 0x01, service, body`` without an empty frame."""

    def __init__(self, test: unittest.TestCase, endpoint: str) -> None:
        self.socket = zmq.Context.instance().socket(zmq.DEALER)
        self.socket.setsockopt(zmq.LINGER, 0)
        self.socket.connect(endpoint)
        test.addCleanup(self.socket.close)

    def call(self, service: bytes, request: dict[str, Any]) -> list[list[bytes]]:
        """Every reply message to ``request`` until the FINAL (0x03), each as received."""
        self.socket.send_multipart([b"MDPC02", b"\x01", service, json.dumps(request).encode()])
        replies = []
        while True:
            if not self.socket.poll(10_000):
                raise AssertionError(f"no FINAL after {len(replies)} replies")
            reply = self.socket.recv_multipart()
            replies.append(reply)
            if reply[1] == b"\x03":
                return replies


class ServeSpeaksEighteenTests(unittest.TestCase):
    def setUp(self) -> None:
        self.serve = Serve(self)

    def test_the_majortomo_example_creates_and_lists_books(self) -> None:
        environment = {**os.environ, "LYCEUM_ENDPOINT": self.serve.endpoint}
        self.assertEqual(run_example(self, majortomo_python(), "majortomo_client.py", environment), [
            "created Dune version 1",
            "created Emma version 1",
            "created Ivanhoe version 1",
            "2 parts: Dune, Emma, Ivanhoe",
        ])

    def test_a_strict_rfc18_client_gets_a_final_and_partials_for_a_long_list(self) -> None:
        client = RFC18Client(self, self.serve.endpoint)
        [created] = client.call(b"books", book("Dune"))
        self.assertEqual(created[:3], [b"MDPC02", b"\x03", b"books"])
        self.assertTrue(json.loads(created[3])["ok"], created)
        for index in range(24):
            self.assertTrue(json.loads(client.call(b"books", book(f"Book {index:02}"))[0][3])["ok"])

        replies = client.call(b"books", {"op": "list", "learner": "ada", "sort": "title", "limit": 10})
        self.assertEqual([reply[1] for reply in replies], [b"\x02", b"\x02", b"\x03"])
        self.assertTrue(all(reply[2] == b"books" and len(reply) == 4 for reply in replies), replies)
        pages = [json.loads(reply[3])["result"] for reply in replies]
        titles = [entry["title"] for page in pages for entry in page["books"]]
        self.assertEqual(titles, sorted(titles))
        self.assertEqual(len(set(titles)), 25)
        self.assertIsNone(pages[-1]["next_cursor"])

        # A 7/MDP client beside it still gets one page, and pages by next_cursor itself.
        seven = lyceum_client.Client(self.serve.endpoint, timeout=5)
        self.addCleanup(seven.close)
        page = seven.books.list("ada", sort="title", limit=10)
        self.assertEqual([entry["title"] for entry in page["books"]], titles[:10])
        self.assertIsNotNone(page["next_cursor"])

    def test_malformed_eighteen_frames_are_dropped_and_serve_keeps_answering(self) -> None:
        socket = zmq.Context.instance().socket(zmq.DEALER)
        socket.setsockopt(zmq.LINGER, 0)
        socket.connect(self.serve.endpoint)
        self.addCleanup(socket.close)
        for frames in ([b"MDPC02", b"\x02", b"books", b"{}"],      # majortomo's REQUEST byte without its empty frame
                       [b"MDPC02", b"\x01", b"books"],             # no body
                       [b"", b"MDPC02", b"\x01", b"books", b"{}"],  # RFC 18's REQUEST byte after an empty frame
                       [b"MDPW02", b"\x09"]):                      # no such worker command
            socket.send_multipart(frames)
        self.assertFalse(socket.poll(500) and socket.recv_multipart()[:2] == [b"MDPC02", b"\x03"],
                         "a malformed request was answered")
        client = RFC18Client(self, self.serve.endpoint)
        [reply] = client.call(b"catalog", {"op": "list_categories"})
        self.assertTrue(json.loads(reply[3])["ok"])
        log = Path(self.serve.log).read_text()
        self.assertIn("dropped malformed message", log)
        self.assertIn("18/MDP", log)


class MajortomoGuideTests(unittest.TestCase):
    def test_the_clients_guide_shows_the_majortomo_example_as_it_is(self) -> None:
        assert_guide_shows(self, "## From majortomo (18/MDP)", "majortomo_client.py")


class WorkerBehindMajortomoTests(unittest.TestCase):
    def test_majortomos_broker_with_an_mdp18_worker_answers_its_client_also_after_idling(self) -> None:
        majortomo = majortomo_python()
        processes = Processes(self)
        endpoint = f"tcp://127.0.0.1:{free_port()}"
        broker_log = os.path.join(processes.directory, "majortomo-broker.log")
        with open(broker_log, "ab") as log:
            broker = subprocess.Popen([majortomo, "-c", BROKER, endpoint], stdout=log, stderr=log, stdin=subprocess.DEVNULL)
        self.addCleanup(lambda: (broker.terminate(), broker.wait(10)))
        processes.start("worker", ["worker", "--mdp", "18", "--broker", endpoint, "--sessions", "2",
                                   "--data", os.path.join(processes.directory, "data"),
                                   "--forwarder-endpoint", f"tcp://127.0.0.1:{free_port()}"])

        def answered() -> bool:
            parts = majortomo_call(endpoint, "books", book("Dune"))
            return len(parts) == 1 and parts[0]["ok"]
        self.assertTrue(eventually(answered, timeout=60), processes.logs())
        readies = Path(broker_log).read_text().count("Got READY")

        # Idle past majortomo's 10 s worker timeout: heartbeats must keep every session registered.
        time.sleep(12)
        parts = majortomo_call(endpoint, "catalog", {"op": "list_courses", "limit": 1})
        self.assertTrue(parts and all(part["ok"] for part in parts), processes.logs())
        listed = majortomo_call(endpoint, "books", {"op": "list", "learner": "ada"})
        self.assertEqual([entry["title"] for entry in listed[0]["result"]["books"]], ["Dune"])
        self.assertEqual(Path(broker_log).read_text().count("Got READY"), readies,
                         "a session registered again: the broker dropped it while idle")


class EachDialectServesTheOtherTests(unittest.TestCase):
    def test_a_7mdp_worker_serves_an_rfc18_client_and_an_mdp18_worker_a_7mdp_client(self) -> None:
        processes = Processes(self)
        endpoint = f"tcp://127.0.0.1:{free_port()}"
        processes.start("broker", ["broker", "--endpoint", endpoint, "--events-endpoint", "none"])
        data = ["--data", os.path.join(processes.directory, "data"), "--service", "books", "--sessions", "2",
                "--forwarder-endpoint", f"tcp://127.0.0.1:{free_port()}"]

        processes.start("worker-7", ["worker", "--broker", endpoint, *data])
        self.assertTrue(eventually(lambda: mdp_ready(endpoint), timeout=60), processes.logs())
        [created] = RFC18Client(self, endpoint).call(b"books", book("Dune"))
        self.assertEqual(created[:3], [b"MDPC02", b"\x03", b"books"])
        self.assertTrue(json.loads(created[3])["ok"], processes.logs())
        processes.kill("worker-7")

        processes.start("worker-18", ["worker", "--mdp", "18", "--broker", endpoint, *data])
        seven = lyceum_client.Client(endpoint, timeout=5, attempts=20)
        self.addCleanup(seven.close)
        # worker-7 is gone: the books come from worker-18, in majortomo's framing.
        self.assertEqual([entry["title"] for entry in seven.books.list("ada")["books"]], ["Dune"])


if __name__ == "__main__":
    unittest.main()

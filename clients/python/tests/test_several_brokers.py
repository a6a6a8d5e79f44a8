"""Two ``lyceum broker`` processes and one ``lyceum worker`` registered with both: the client
fails over when the first broker is killed mid-load, and no acknowledged write is lost or
applied twice."""
from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import threading
import unittest
from pathlib import Path
from typing import Optional

import lyceum_client

from .support import eventually, free_port, lyceum_binary, mdp_ready

HEARTBEAT = ["--heartbeat-interval", "250", "--heartbeat-liveness", "3"]


class Cluster:
    """Two brokers and a books worker (durability ``always``) registered with both; every
    process is killed by the test's cleanups."""

    def __init__(self, test: unittest.TestCase) -> None:
        directory = tempfile.TemporaryDirectory(prefix="lyceum-pyclient-brokers-")
        test.addCleanup(directory.cleanup)
        self.directory = directory.name
        self.first = f"tcp://127.0.0.1:{free_port()}"
        self.second = f"tcp://127.0.0.1:{free_port()}"
        self.processes: dict[str, subprocess.Popen[bytes]] = {}
        test.addCleanup(self.kill_all)
        self.start("first-broker", ["broker", "--endpoint", self.first, "--events-endpoint", "none", *HEARTBEAT])
        self.start("second-broker", ["broker", "--endpoint", self.second, "--events-endpoint", "none", *HEARTBEAT])
        self.start("worker", ["worker", "--broker", self.first, "--broker", self.second, "--service", "books",
                              "--sessions", "4", "--data", os.path.join(self.directory, "data"),
                              "--durability", "always", "--reconnect-initial", "100", *HEARTBEAT])
        self.wait_until_served(self.first)
        self.wait_until_served(self.second)

    def start(self, name: str, arguments: list[str]) -> None:
        with open(self.log(name), "ab") as log:
            self.processes[name] = subprocess.Popen(
                [lyceum_binary(), *arguments, "--log-format", "logfmt", "--log-level", "warning"],
                stdin=subprocess.DEVNULL, stdout=log, stderr=log)

    def log(self, name: str) -> str:
        return os.path.join(self.directory, f"{name}.log")

    def wait_until_served(self, endpoint: str) -> None:
        if not eventually(lambda: mdp_ready(endpoint), timeout=60):
            raise RuntimeError(f"books not served through {endpoint}; worker log:\n{Path(self.log('worker')).read_text()}")

    def kill(self, name: str) -> None:
        process = self.processes.pop(name, None)
        if process is not None and process.poll() is None:
            process.send_signal(signal.SIGKILL)
            process.wait()

    def kill_all(self) -> None:
        for name in list(self.processes):
            self.kill(name)


class SeveralBrokersTests(unittest.TestCase):
    def test_a_broker_killed_mid_load_loses_no_acknowledged_write(self) -> None:
        cluster = Cluster(self)
        acknowledged: list[str] = []
        failure: list[Optional[BaseException]] = [None]
        started = threading.Event()

        def write() -> None:
            try:
                with lyceum_client.Client([cluster.first, cluster.second], timeout=1, attempts=10) as client:
                    for index in range(40):
                        book = client.books.create("ada", f"Book {index}", "A", "Mystery", 3)
                        acknowledged.append(book["id"])
                        if index == 9:
                            started.set()
            except BaseException as error:  # reported by the test's thread below
                failure[0] = error
            finally:
                started.set()

        writer = threading.Thread(target=write)
        writer.start()
        self.assertTrue(started.wait(60))
        cluster.kill("first-broker")
        writer.join(120)
        self.assertFalse(writer.is_alive())
        self.assertIsNone(failure[0])
        self.assertEqual(len(acknowledged), 40)
        # Through the surviving broker alone: exactly the acknowledged books, each once.
        with lyceum_client.Client(cluster.second, timeout=5) as survivor:
            listed = [book["id"] for book in survivor.books.list("ada", limit=100)["books"]]
        self.assertEqual(sorted(listed), sorted(acknowledged))


if __name__ == "__main__":
    unittest.main()

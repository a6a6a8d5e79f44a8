"""Two ``lyceum broker`` processes and one ``lyceum worker``: registered with both, the client
fails over when the first broker is killed mid-load, and no acknowledged write is lost or
applied twice; registered with the second only, the first broker's ``service_unknown`` sends the
request on to the second at once (as LyceumClient does), with the same ``request_id``."""
from __future__ import annotations

import asyncio
import os
import threading
import unittest
from pathlib import Path
from typing import Any, Optional

import lyceum_client

from .support import LossyProxy, Processes, eventually, free_port, mdp_ready

HEARTBEAT = ["--heartbeat-interval", "250", "--heartbeat-liveness", "3"]


class Cluster(Processes):
    """Two brokers and a books worker (durability ``always``) registered with both, or with the
    second only when ``first_served`` is false (the first then answers ``service_unknown`` after
    100 ms); every process is killed by the test's cleanups."""

    def __init__(self, test: unittest.TestCase, first_served: bool = True) -> None:
        super().__init__(test)
        self.first = f"tcp://127.0.0.1:{free_port()}"
        self.second = f"tcp://127.0.0.1:{free_port()}"
        unserved = [] if first_served else ["--unknown-service-timeout", "100"]
        self.start("first-broker", ["broker", "--endpoint", self.first, "--events-endpoint", "none", *unserved, *HEARTBEAT])
        self.start("second-broker", ["broker", "--endpoint", self.second, "--events-endpoint", "none", *HEARTBEAT])
        served = [self.first, self.second] if first_served else [self.second]
        self.start("worker", ["worker", *(option for endpoint in served for option in ("--broker", endpoint)),
                              "--service", "books", "--sessions", "4", "--data", os.path.join(self.directory, "data"),
                              "--durability", "always", "--reconnect-initial", "100", *HEARTBEAT])
        for endpoint in served:
            self.wait_until_served(endpoint)

    def wait_until_served(self, endpoint: str) -> None:
        if not eventually(lambda: mdp_ready(endpoint), timeout=60):
            raise RuntimeError(f"books not served through {endpoint}; worker log:\n{Path(self.log('worker')).read_text()}")


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


class DeadFirstBrokerTests(unittest.TestCase):
    def test_requests_waiting_to_send_to_a_dead_broker_fail_over_with_the_first(self) -> None:
        """Nothing listens at the first endpoint, so sends wait for a connection (ZMQ_IMMEDIATE).
        Requests start a little apart: when the first one times out and fails over, closing the
        socket, the others are still waiting in their send, which pyzmq cancels; each of them
        goes on to the second broker instead of ending the caller's task."""
        cluster = Cluster(self)
        dead = f"tcp://127.0.0.1:{free_port()}"

        async def create_staggered() -> list[str]:
            async with lyceum_client.aio.Client([dead, cluster.second], timeout=1, attempts=5, backoff=0.01) as client:
                async def create(number: int) -> str:
                    await asyncio.sleep(number * 0.1)
                    book = await client.books.create("ada", f"Book {number}", "A", "Mystery", 3)
                    return str(book["id"])
                return await asyncio.gather(*(create(number) for number in range(5)))
        created = asyncio.run(asyncio.wait_for(create_staggered(), 120))
        with lyceum_client.Client(cluster.second, timeout=5) as client:
            listed = [book["id"] for book in client.books.list("ada", limit=100)["books"]]
        self.assertEqual(sorted(listed), sorted(created))


class ServiceUnknownTests(unittest.TestCase):
    """The first broker has no worker for ``books``; each request is seen once by each broker,
    through recording proxies, and the client's timeout is far longer than the test could wait:
    the second broker is reached because of the first's answer, not after a timeout."""

    def setUp(self) -> None:
        self.cluster = Cluster(self, first_served=False)
        self.first = LossyProxy(self, self.cluster.first, drop=lambda number: False)
        self.second = LossyProxy(self, self.cluster.second, drop=lambda number: False)
        self.options: dict[str, Any] = dict(timeout=120, attempts=2, backoff=0.01)

    def assert_went_through_both_once(self, count: int) -> None:
        self.assertEqual(len(self.first.requests), count)
        self.assertEqual(len(self.second.requests), count)
        ids = lambda proxy: sorted(request["request_id"] for request in proxy.requests)
        self.assertEqual(ids(self.first), ids(self.second), "a write keeps its request_id through the fail-over")

    def test_service_unknown_fails_over_to_the_broker_with_a_worker(self) -> None:
        with lyceum_client.Client([self.first.endpoint, self.second.endpoint], **self.options) as client:
            book = client.books.create("ada", "Dune", "Frank Herbert", "Fantasy", 5)
            self.assertEqual(client.endpoint, self.second.endpoint)
        self.assertEqual(self.first.requests[0]["op"], "create")
        self.assert_went_through_both_once(1)
        with lyceum_client.Client(self.cluster.second, timeout=5) as client:
            self.assertEqual([b["id"] for b in client.books.list("ada")["books"]], [book["id"]])

    def test_the_asyncio_client_fails_over_with_every_request_in_flight(self) -> None:
        async def create_five() -> list[str]:
            async with lyceum_client.aio.Client([self.first.endpoint, self.second.endpoint], **self.options) as client:
                books = await asyncio.gather(*(client.books.create("ada", f"Book {n}", "A", "Mystery", 3)
                                               for n in range(5)))
                self.assertEqual(client.endpoint, self.second.endpoint)
                return [book["id"] for book in books]
        created = asyncio.run(asyncio.wait_for(create_five(), 60))
        self.assert_went_through_both_once(5)
        with lyceum_client.Client(self.cluster.second, timeout=5) as client:
            listed = [book["id"] for book in client.books.list("ada", limit=100)["books"]]
        self.assertEqual(sorted(listed), sorted(created))


if __name__ == "__main__":
    unittest.main()

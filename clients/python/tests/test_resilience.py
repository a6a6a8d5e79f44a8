"""Retries apply a write once (also across a server restart), the client fails over to a second
broker, and CURVE keys are used when given."""
from __future__ import annotations

import asyncio
import os
import tempfile
import unittest
from typing import Any

import zmq
import zmq.auth

import lyceum_client

from .support import LossyProxy, Peer, ScriptedBroker, Serve, free_port, ok


class ReorderingBroker(Peer):
    """Takes two requests, then answers the one for service ``unknown`` first, with
    ``service_unknown``, then the other with ``reply``."""

    def __init__(self, test: unittest.TestCase, unknown: bytes, reply: bytes) -> None:
        super().__init__(test)
        self.endpoint = f"tcp://127.0.0.1:{free_port()}"
        self._unknown, self._reply = unknown, reply
        self._held: list[list[bytes]] = []
        self._router = self.context.socket(zmq.ROUTER)
        self._router.bind(self.endpoint)
        self.start()

    def run(self) -> None:
        self.serve([self._router], self._hold)

    def _hold(self, socket: zmq.Socket[Any], frames: list[bytes]) -> None:
        self._held.append(frames[:-1])  # the envelope, header and service; the body is not needed
        if len(self._held) == 2:
            unknown, known = sorted(self._held, key=lambda held: held[-1] != self._unknown)
            socket.send_multipart(unknown + [b"\x00MDP-ERROR service_unknown no worker"])
            socket.send_multipart(known + [self._reply])


class RetryTests(unittest.TestCase):
    def test_a_create_whose_reply_was_lost_is_retried_and_applied_once(self) -> None:
        serve = Serve(self)
        proxy = LossyProxy(self, serve.endpoint, drop=lambda number: number == 1)
        with lyceum_client.Client(proxy.endpoint, timeout=1, attempts=3) as client:
            book = client.books.create("ada", "Dune", "Frank Herbert", "Fantasy", 5)
            self.assertEqual(len(proxy.requests), 2)
            self.assertEqual(proxy.requests[0]["request_id"], proxy.requests[1]["request_id"])
            self.assertEqual([b["id"] for b in client.books.list("ada")["books"]], [book["id"]])

    def test_a_create_retried_across_a_server_restart_is_applied_once(self) -> None:
        serve = Serve(self)
        # The first reply is lost and the server restarts before the client's retry reaches it.
        proxy = LossyProxy(self, serve.endpoint, drop=lambda number: number == 1, on_drop=serve.restart)
        with lyceum_client.Client(proxy.endpoint, timeout=2, attempts=8, max_backoff=0.5) as client:
            book = client.books.create("ada", "Dune", "Frank Herbert", "Fantasy", 5)
            self.assertGreaterEqual(len(proxy.requests), 2)
            self.assertEqual({request["request_id"] for request in proxy.requests[:-1]},
                             {proxy.requests[0]["request_id"]})
            self.assertEqual([b["id"] for b in client.books.list("ada")["books"]], [book["id"]])


class FailOverTests(unittest.TestCase):
    def test_requests_go_to_the_second_broker_when_the_first_stops(self) -> None:
        first, second = Serve(self), Serve(self)
        with lyceum_client.Client([first.endpoint, second.endpoint], timeout=0.5, attempts=4) as client:
            client.books.create("ada", "Dune", "Frank Herbert", "Fantasy", 5)
            self.assertEqual(client.endpoint, first.endpoint)
            first.stop()
            book = client.books.create("ada", "Emma", "Jane Austen", "Romance", 4)
            self.assertEqual(client.endpoint, second.endpoint)
            self.assertEqual([b["id"] for b in client.books.list("ada")["books"]], [book["id"]])

    def test_service_unknown_leaves_the_other_requests_in_flight_their_replies(self) -> None:
        # The broker is alive: a request for a service it has gets its reply on the connection
        # failed over from, not a timeout (with one attempt, nothing else would save it).
        broker = ReorderingBroker(self, b"nosuch", ok({"categories": []}))

        async def both() -> list[Any]:
            async with lyceum_client.aio.Client([broker.endpoint, f"tcp://127.0.0.1:{free_port()}"], timeout=60,
                                                attempts=1) as client:
                return await asyncio.gather(client.catalog.list_categories(), client.call("nosuch", {"op": "get"}),
                                            return_exceptions=True)
        categories, unknown = asyncio.run(asyncio.wait_for(both(), 30))
        self.assertEqual(categories, [])
        self.assertIsInstance(unknown, lyceum_client.ServiceUnknown)


class CurveTests(unittest.TestCase):
    def test_the_client_speaks_curve_with_the_given_certificates(self) -> None:
        directory = tempfile.TemporaryDirectory()
        self.addCleanup(directory.cleanup)
        server_public, server_secret = zmq.auth.create_certificates(directory.name, "server")
        _, client_secret = zmq.auth.create_certificates(directory.name, "client")
        _, server_key = zmq.auth.load_certificate(server_secret)
        broker = ScriptedBroker(self, lambda number, body: ok({"categories": []}), curve_secret=server_key)
        with lyceum_client.Client(broker.endpoint, curve_certificate=client_secret,
                                  server_certificate=server_public) as client:
            self.assertEqual(client.catalog.list_categories(), [])
        with lyceum_client.Client(broker.endpoint, timeout=0.3, attempts=1) as plain:
            with self.assertRaises(lyceum_client.Unreachable):
                plain.catalog.list_categories()
        with self.assertRaises(ValueError):
            lyceum_client.Client(broker.endpoint, curve_certificate=os.path.join(directory.name, "client.key_secret"))


if __name__ == "__main__":
    unittest.main()

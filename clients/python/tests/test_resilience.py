"""Retries apply a write once (also across a server restart), the client fails over to a second
broker, and CURVE keys are used when given."""
from __future__ import annotations

import os
import tempfile
import unittest

import zmq.auth

import lyceum_client

from .support import LossyProxy, ScriptedBroker, Serve, ok


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
            with self.assertRaises(lyceum_client.Timeout):
                plain.catalog.list_categories()
        with self.assertRaises(ValueError):
            lyceum_client.Client(broker.endpoint, curve_certificate=os.path.join(directory.name, "client.key_secret"))


if __name__ == "__main__":
    unittest.main()

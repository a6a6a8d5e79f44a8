"""Each error the server and the broker can send becomes its exception: from a real ``lyceum
serve`` for the codes it produces on demand, from a scripted broker for the rest (codes this
server version never sends, rejections in both spellings, replies that break the contract)."""
from __future__ import annotations

import unittest
from typing import Any

import lyceum_client
from lyceum_client import (BadRequest, BrokerRejection, Conflict, Forbidden, Internal, LimitExceeded, LyceumError, NotFound, StorageFull,
                           Overloaded, ProtocolError, QueueFull, ServiceUnknown, Timeout, TooLarge, Unauthenticated, Unreachable,
                           Unavailable, UnknownOp)

from .support import Serve, ScriptedBroker, ServeTestCase, failure, free_port, ok


class ServerErrorTests(ServeTestCase):
    attempts = 1

    def test_bad_request_names_the_field(self) -> None:
        with self.assertRaises(BadRequest) as raised:
            self.client.books.create("ada", "Dune", "Frank Herbert", "Fantasy", 7)
        self.assertEqual((raised.exception.code, raised.exception.field), ("bad_request", "$.rating"))

    def test_not_found(self) -> None:
        with self.assertRaises(NotFound):
            self.client.books.get("ada", "00000000-0000-4000-8000-000000000001")
        with self.assertRaises(NotFound):
            self.client.catalog.get_course("no-such-course")

    def test_conflict_on_a_stale_version_and_on_a_reused_request_id(self) -> None:
        book = self.client.books.create("ada", "Dune", "Frank Herbert", "Fantasy", 5, request_id="dune-1")
        self.client.books.update("ada", book["id"], rating=4)
        with self.assertRaises(Conflict):
            self.client.books.delete("ada", book["id"], expected_version=1)
        with self.assertRaises(Conflict):
            self.client.books.create("ada", "Emma", "Jane Austen", "Romance", 4, request_id="dune-1")

    def test_unknown_op(self) -> None:
        with self.assertRaises(UnknownOp) as raised:
            self.client.call("books", {"op": "burn", "learner": "ada"})
        self.assertEqual(raised.exception.field, "$.op")

    def test_too_large(self) -> None:
        with self.assertRaises(TooLarge):
            self.client.call("books", {"op": "get", "learner": "ada", "id": "x" * 70_000})

    def test_service_unknown_from_the_broker(self) -> None:
        with self.assertRaises(ServiceUnknown) as raised:
            self.client.call("nosuch", {"op": "get"})
        self.assertIsInstance(raised.exception, BrokerRejection)


class LimitTests(unittest.TestCase):
    def test_a_full_library_is_limit_exceeded_naming_the_setting(self) -> None:
        serve = Serve(self, ["--max-books-per-learner", "2"])
        client = lyceum_client.Client(serve.endpoint, timeout=5, attempts=3)
        self.addCleanup(client.close)
        for title in ("Dune", "Emma"):
            client.books.create("ada", title, "A", "Fantasy", 5)
        with self.assertRaises(LimitExceeded) as raised:
            client.books.create("ada", "Ulysses", "James Joyce", "Fantasy", 4)
        self.assertEqual(raised.exception.code, "limit_exceeded")
        self.assertIn("max-books-per-learner 2", raised.exception.message)
        # Not retried: the library stays as it was.
        self.assertEqual(len(client.books.list("ada")["books"]), 2)


class ScriptedErrorTests(unittest.TestCase):
    def client(self, broker: ScriptedBroker, **options: Any) -> lyceum_client.Client:
        client = lyceum_client.Client(broker.endpoint, timeout=options.pop("timeout", 5), backoff=0.01, **options)
        self.addCleanup(client.close)
        return client

    def test_every_code_of_the_contract_has_its_class(self) -> None:
        classes = {"bad_request": BadRequest, "not_found": NotFound, "conflict": Conflict, "unknown_op": UnknownOp,
                   "too_large": TooLarge, "internal": Internal, "forbidden": Forbidden,
                   "unauthenticated": Unauthenticated, "limit_exceeded": LimitExceeded, "storage_full": StorageFull}
        codes = list(classes)
        broker = ScriptedBroker(self, lambda number, body: failure(codes[number - 1]))
        client = self.client(broker, attempts=1)
        for code, cls in classes.items():
            with self.subTest(code=code), self.assertRaises(cls) as raised:
                client.books.get("ada", "x")
            self.assertEqual(raised.exception.code, code)

    def test_an_unknown_code_is_a_lyceum_error_with_the_code(self) -> None:
        broker = ScriptedBroker(self, lambda number, body: failure("rate_limited"))
        with self.assertRaises(LyceumError) as raised:
            self.client(broker).books.get("ada", "x")
        self.assertIs(type(raised.exception), LyceumError)
        self.assertEqual(raised.exception.code, "rate_limited")

    def test_broker_rejections_in_both_spellings(self) -> None:
        rejections = [(b"queue_full", QueueFull), (b"queue-full", QueueFull), (b"overloaded", Overloaded),
                      (b"broker-overloaded", Overloaded), (b"service_unknown", ServiceUnknown),
                      (b"service-unknown", ServiceUnknown)]
        broker = ScriptedBroker(self, lambda number, body: b"\x00MDP-ERROR " + rejections[number - 1][0] + b" busy")
        client = self.client(broker, attempts=1)
        for code, cls in rejections:
            with self.subTest(code=code), self.assertRaises(cls) as raised:
                client.catalog.list_categories()
            self.assertEqual(raised.exception.code, cls.code)

    def test_unavailable_and_rejections_are_retried_with_the_same_request_id(self) -> None:
        answers = [failure("unavailable"), b"\x00MDP-ERROR queue_full busy", ok({"progress": {"course": "1"}})]
        broker = ScriptedBroker(self, lambda number, body: answers[number - 1])
        progress = self.client(broker, attempts=3).progress.mark_watched("ada", "1", "1")
        self.assertEqual(progress, {"course": "1"})
        ids = {request["request_id"] for request in broker.requests}
        self.assertEqual((len(broker.requests), len(ids)), (3, 1))

    def test_the_last_retryable_error_is_raised_when_attempts_run_out(self) -> None:
        broker = ScriptedBroker(self, lambda number, body: failure("unavailable"))
        with self.assertRaises(Unavailable):
            self.client(broker, attempts=2).books.delete("ada", "x")
        self.assertEqual(len(broker.requests), 2)

    def test_a_reply_that_is_not_json_is_a_protocol_error(self) -> None:
        broker = ScriptedBroker(self, lambda number, body: b"not json")
        with self.assertRaises(ProtocolError):
            self.client(broker, attempts=1).catalog.list_categories()

    def test_no_broker_is_unreachable_not_a_timeout(self) -> None:
        client = lyceum_client.Client([f"tcp://127.0.0.1:{free_port()}", f"tcp://127.0.0.1:{free_port()}"],
                                      timeout=0.2, attempts=3, backoff=0.01)
        self.addCleanup(client.close)
        with self.assertRaises(Unreachable) as raised:
            client.catalog.list_categories()
        self.assertIsInstance(raised.exception, ConnectionError)
        self.assertNotIsInstance(raised.exception, TimeoutError)
        self.assertEqual(raised.exception.code, "broker_unreachable")
        self.assertIn("no connection to any broker", raised.exception.message)

    def test_a_broker_that_takes_the_request_and_never_answers_is_a_timeout(self) -> None:
        broker = ScriptedBroker(self, lambda number, body: None)
        client = lyceum_client.Client(broker.endpoint, timeout=0.2, attempts=2, backoff=0.01)
        self.addCleanup(client.close)
        with self.assertRaises(Timeout) as raised:
            client.catalog.list_categories()
        self.assertIsInstance(raised.exception, TimeoutError)
        self.assertEqual(raised.exception.code, "timed_out")
        self.assertEqual(len(broker.requests), 2, "both attempts reached the broker")


if __name__ == "__main__":
    unittest.main()

"""CURVE end to end: the clients against a real ``lyceum serve`` that requires it, with keys made
by ``lyceum keys generate`` (README, "Securing Lyceum"): requests and events with an authorised
key, ``Forbidden`` for what a learner key may not do, and nothing at all without a key."""
from __future__ import annotations

import asyncio
import unittest

import lyceum_client
from lyceum_client import Events, ProgressUpdate, Snapshot

from .support import Keys, Serve

COURSE = "1"


class CurveEndToEndTests(unittest.TestCase):
    def setUp(self) -> None:
        self.keys = Keys(self)
        self.admin = self.keys.client("ops", "admin")
        # Before serve starts: it reads its authorised keys then (and again on SIGHUP).
        self.learner = self.keys.client("ada-phone", "learner", "--learners", "ada")
        self.serve = Serve(self, self.keys.serve_arguments(), probe=self.admin)

    def test_requests_and_events_go_through_with_an_authorised_key(self) -> None:
        with lyceum_client.Client(self.serve.endpoint, timeout=5, **self.admin.options()) as lyceum:
            book = lyceum.books.create("ada", "Dune", "Frank Herbert", "Fantasy", 5)
            self.assertEqual(lyceum.books.get("ada", book["id"])["title"], "Dune")

            async def first_event() -> ProgressUpdate:
                async for update in Events(self.serve.events, course=COURSE, snapshot_endpoint=self.serve.snapshot,
                                           **self.admin.options()):
                    if isinstance(update, Snapshot):
                        await asyncio.to_thread(lyceum.progress.mark_watched, "ada", COURSE, "1")
                    elif isinstance(update, ProgressUpdate):
                        return update
                raise AssertionError("the events ended")

            update = asyncio.run(asyncio.wait_for(first_event(), 60))
            self.assertEqual((update.event["type"], update.event["learner"]), ("lesson_watched", "ada"))

    def test_a_learner_key_is_forbidden_what_is_not_its_own(self) -> None:
        with lyceum_client.Client(self.serve.endpoint, timeout=5, **self.learner.options()) as lyceum:
            self.assertEqual(lyceum.books.create("ada", "Emma", "Jane Austen", "Romance", 4)["version"], 1)
            with self.assertRaises(lyceum_client.Forbidden) as other_learner:
                lyceum.books.create("bob", "Emma", "Jane Austen", "Romance", 4)
            self.assertEqual((other_learner.exception.code, other_learner.exception.field), ("forbidden", "$.learner"))
            with self.assertRaises(lyceum_client.Forbidden) as stats:
                lyceum.progress.course_stats(COURSE)
            self.assertEqual(stats.exception.field, "$.op")
        with lyceum_client.Client(self.serve.endpoint, timeout=5, **self.admin.options()) as admin:
            self.assertEqual(admin.books.list("bob")["books"], [], "the forbidden write changed nothing")

    def test_a_client_without_a_key_gets_no_answer(self) -> None:
        with lyceum_client.Client(self.serve.endpoint, timeout=0.5, attempts=1) as plain:
            with self.assertRaises(lyceum_client.Timeout):
                plain.catalog.list_categories()


if __name__ == "__main__":
    unittest.main()

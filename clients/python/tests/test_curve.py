"""CURVE end to end: the clients against a real ``lyceum serve`` that requires it, with keys made
by ``lyceum keys generate`` (docs/security.md): requests and events with an authorised
key, ``Forbidden`` for what a learner key may not do, and nothing at all without a key; and
against a ``lyceum broker`` with a separate ``worker``, whose snapshot socket has the worker's
own key, which its heartbeats advertise (events.md, ``snapshot_key``)."""
from __future__ import annotations

import asyncio
import os
import unittest
from typing import Any

import lyceum_client
from lyceum_client import Events, ProgressUpdate, Snapshot

from .support import DroppingForwarder, Keys, Processes, Serve, eventually, free_port, mdp_ready, nth_progress_event

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
            with self.assertRaises(lyceum_client.Unreachable):
                plain.catalog.list_categories()


class CurveWorkerSnapshotTests(unittest.TestCase):
    def test_a_gap_is_repaired_from_the_snapshot_endpoint_and_key_the_worker_advertises(self) -> None:
        keys = Keys(self)
        admin, app, dashboard = keys.client("ops", "admin"), keys.client("app", "app"), keys.client("board", "dashboard")
        worker_key = keys.client("worker", "worker")
        endpoint, events, forwarder = (f"tcp://127.0.0.1:{free_port()}" for _ in range(3))
        processes = Processes(self)
        processes.start("broker", ["broker", "--endpoint", endpoint, "--events-endpoint", events,
                                   "--forwarder-endpoint", forwarder, *keys.serve_arguments()])
        # The worker's snapshot socket admits the dashboard key through the worker's own ZAP handler.
        processes.start("worker", ["worker", "--broker", endpoint, "--forwarder-endpoint", forwarder, "--service", "progress",
                                   "--data", os.path.join(processes.directory, "data"), "--durability", "none",
                                   "--authorized-keys", keys.clients, *worker_key.arguments()])
        self.assertTrue(eventually(lambda: mdp_ready(endpoint, admin, b"progress"), timeout=60), processes.logs())
        # The subscriber sees the broker's key on its events socket and the worker's (advertised) on
        # the snapshot socket; the second progress event never reaches it.
        dropping = DroppingForwarder(self, events, nth_progress_event(2), subscribe_as=dashboard)

        async def follow() -> tuple[list[Any], Events]:
            seen: list[Any] = []
            subscriber = Events(dropping.endpoint, course=COURSE, timeout=30, **dashboard.options())
            with lyceum_client.Client(endpoint, timeout=10, **app.options()) as lyceum:
                async for update in subscriber:
                    seen.append(update)
                    if len(seen) == 1:
                        for lesson in ["1", "2", "3"]:  # progress_seq 1, 2 (dropped), 3
                            await asyncio.to_thread(lyceum.progress.mark_watched, "ada", COURSE, lesson)
                    if subscriber.repairs:
                        return seen, subscriber
            raise AssertionError("the events ended")

        seen, subscriber = asyncio.run(asyncio.wait_for(follow(), 120))
        self.assertIsInstance(seen[0], Snapshot)
        self.assertFalse(seen[0].repair)
        self.assertIsInstance(seen[-1], Snapshot)
        self.assertTrue(seen[-1].repair)
        self.assertEqual(len(dropping.dropped), 1)
        self.assertEqual(subscriber.progress[f"progress/{COURSE}/ada"]["progress"]["watched_count"], 3)


if __name__ == "__main__":
    unittest.main()

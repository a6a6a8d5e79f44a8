"""``Events`` against a real ``lyceum serve``: catching up from a snapshot, and gaps injected by a
forwarder that drops events, repaired from a new snapshot (events.md, "Catching up")."""
from __future__ import annotations

import asyncio
import unittest
from typing import Any

from lyceum_client import BookUpdate, Events, ProgressUpdate, Snapshot

from .support import DroppingForwarder, ServeTestCase, nth_progress_event

COURSE = "1"


class EventsTests(ServeTestCase):
    def test_a_dropped_event_is_repaired_from_a_snapshot(self) -> None:
        self.client.progress.mark_watched("early", COURSE, "1")  # before subscribing: from the snapshot
        forwarder = DroppingForwarder(self, self.serve.events, nth_progress_event(3))
        events = Events(forwarder.endpoint, books=True)
        self.addCleanup(events.close)
        seen: list[Any] = []
        for update in events:
            seen.append(update)
            if len(seen) == 1:
                self.assertIsInstance(update, Snapshot)
                self.assertFalse(update.repair)
                self.assertIn(f"progress/{COURSE}/early", events.progress)
                for lesson in ["1", "2", "3"]:  # progress_seq 2, 3 (dropped), 4
                    self.client.progress.mark_watched("ada", COURSE, lesson)
                self.client.books.create("ada", "Dune", "Frank Herbert", "Fantasy", 5)
            if isinstance(update, BookUpdate):
                break
        # Usually the next event shows the gap; should a heartbeat come between, it does, and the
        # event after it may then be applied: either way one repair, then the book.
        kinds = [(type(u).__name__, getattr(u, "repair", None)) for u in seen]
        self.assertEqual(kinds[:2], [("Snapshot", False), ("ProgressUpdate", None)])
        self.assertEqual(kinds.count(("Snapshot", True)), 1)
        self.assertEqual(kinds[-1], ("BookUpdate", None))
        self.assertEqual(len(forwarder.dropped), 1)
        self.assertEqual(events.repairs, 1)
        self.assertEqual(events.progress[f"progress/{COURSE}/ada"]["progress"]["watched_count"], 3)
        self.assertEqual(seen[-1].event["book"]["title"], "Dune")

    def test_a_gap_a_heartbeat_reveals_is_repaired_for_one_course(self) -> None:
        forwarder = DroppingForwarder(self, self.serve.events, nth_progress_event(1))

        async def follow() -> list[Any]:
            seen: list[Any] = []
            events = Events(forwarder.endpoint, course=COURSE)
            async for update in events:
                seen.append(update)
                if len(seen) == 1:
                    # The only event is dropped: nothing after it shows the gap but the heartbeat.
                    await asyncio.to_thread(self.client.progress.begin_course, "ada", COURSE)
                if len(seen) == 2:
                    self.assertEqual(events.repairs, 1)
                    self.assertEqual(events.progress[f"progress/{COURSE}/ada"]["progress"]["current_lesson"], "1")
                    return seen
            return seen
        seen = asyncio.run(asyncio.wait_for(follow(), 30))
        self.assertEqual([(type(u).__name__, u.repair) for u in seen], [("Snapshot", False), ("Snapshot", True)])
        self.assertEqual(len(forwarder.dropped), 1)

    def test_events_of_other_courses_are_not_taken(self) -> None:
        events = Events(self.serve.events, course="2")
        self.addCleanup(events.close)
        for update in events:
            if isinstance(update, Snapshot):
                self.client.progress.mark_watched("ada", COURSE, "1")
                self.client.progress.mark_watched("ada", "2", "1")
                continue
            self.assertIsInstance(update, ProgressUpdate)
            self.assertEqual((update.topic, update.event["course_seq"]), ("progress/2/ada", 1))
            break
        self.assertEqual(list(events.progress), ["progress/2/ada"])


if __name__ == "__main__":
    unittest.main()

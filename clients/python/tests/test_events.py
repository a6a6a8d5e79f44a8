"""``Events`` against a real ``lyceum serve``: catching up from a snapshot, and gaps injected by a
forwarder that drops events, repaired from a new snapshot (events.md, "Catching up")."""
from __future__ import annotations

import asyncio
import json
import tempfile
import unittest
from typing import Any

import zmq
import zmq.auth

from lyceum_client import BookUpdate, Events, ProgressUpdate, Snapshot

from .support import DroppingForwarder, Peer, ServeTestCase, free_port, nth_progress_event

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


class AdvertisingPublisher(Peer):
    """One source's CURVE publisher (an XPUB, so that it sees the subscription arrive) and its
    snapshot ROUTER, a CURVE server with a key of its own (``snapshot_secret``, public ``key``)
    answering one empty page. Once subscribed to, it sends a heartbeat advertising an endpoint
    where nobody listens with ``malformed_key``, then heartbeats advertising its ROUTER and
    ``key``, in that order on the one connection."""

    def __init__(self, test: unittest.TestCase, malformed_key: str, key: str, server_secret: bytes,
                 snapshot_secret: bytes) -> None:
        super().__init__(test)
        self.endpoint = f"tcp://127.0.0.1:{free_port()}"
        self.snapshot = f"tcp://127.0.0.1:{free_port()}"
        self.snapshot_requests = 0
        self._advertised = [(f"tcp://127.0.0.1:{free_port()}", malformed_key), (self.snapshot, key)]
        self._xpub = self.context.socket(zmq.XPUB)
        self._router = self.context.socket(zmq.ROUTER)
        for socket, secret, endpoint in [(self._xpub, server_secret, self.endpoint),
                                         (self._router, snapshot_secret, self.snapshot)]:
            socket.curve_server, socket.curve_secretkey = True, secret
            socket.bind(endpoint)
        self.start()

    def run(self) -> None:
        poller = zmq.Poller()
        poller.register(self._xpub, zmq.POLLIN)
        poller.register(self._router, zmq.POLLIN)
        subscribed = False
        while not self._stopping.is_set():
            for ready, _ in poller.poll(50):
                frames = ready.recv_multipart()
                if ready is self._router:
                    self.snapshot_requests += 1
                    page = {"source": "s1", "seq": 0, "progress_seq": 0, "prefix": "progress/", "course_seq": {},
                            "next_cursor": None, "entries": []}
                    self._router.send_multipart([frames[0], b"SNAPSHOT", json.dumps(page).encode()])
                elif frames[0].startswith(b"\x01hb/"):
                    subscribed = True
            if subscribed:
                snapshot, key = self._advertised[0]
                self._advertised = self._advertised[1:] or self._advertised
                body = {"source": "s1", "seq": 0, "progress_seq": 0, "books_seq": 0, "course_seq": {},
                        "snapshot": snapshot, "snapshot_key": key}
                self._xpub.send_multipart([b"hb/", json.dumps(body).encode()])


class HeartbeatKeyTests(unittest.TestCase):
    def test_a_heartbeat_with_a_malformed_snapshot_key_changes_nothing(self) -> None:
        directory = tempfile.TemporaryDirectory()
        self.addCleanup(directory.cleanup)
        (server_public, server_secret), (worker_public, worker_secret), (_, client_secret) = (
            zmq.auth.create_certificates(directory.name, name) for name in ["server", "worker", "client"])
        key = zmq.auth.load_certificate(worker_public)[0].decode()
        publisher = AdvertisingPublisher(self, malformed_key=key[:-1] + '"', key=key,  # '"' is not Z85
                                         server_secret=zmq.auth.load_certificate(server_secret)[1],
                                         snapshot_secret=zmq.auth.load_certificate(worker_secret)[1])

        async def first_update() -> Any:
            async for update in Events(publisher.endpoint, timeout=30, curve_certificate=client_secret,
                                       server_certificate=server_public):
                return update
        # Had the malformed heartbeat counted, the snapshot would be asked where nobody listens.
        update = asyncio.run(asyncio.wait_for(first_update(), 60))
        self.assertIsInstance(update, Snapshot)
        self.assertEqual((update.source, update.repair), ("s1", False))
        self.assertEqual(publisher.snapshot_requests, 1)


if __name__ == "__main__":
    unittest.main()

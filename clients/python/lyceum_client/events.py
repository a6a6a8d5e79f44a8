"""``lyceum_client.Events``: the progress event stream, kept whole (protocol/events.md).

Subscribes, catches up from the snapshot endpoint, then applies each event whose number follows
the last; a number that skips, or a heartbeat announcing one not seen, is a gap, repaired from a
new snapshot (the ZeroMQ guide's Clone pattern, as events.md "Catching up" prescribes). Book
events pass through as a live feed; a gap in them is reported, for the application to re-read the
library with ``books list`` (there are no book snapshots).
"""
from __future__ import annotations

import asyncio
import json
import struct
from dataclasses import dataclass
from typing import Any, AsyncGenerator, AsyncIterator, Iterator, Optional, Union

import zmq
import zmq.asyncio
from zmq.utils import z85

from ._loop import LoopThread
from ._wire import Curve, PathLike
from .errors import LyceumError, ProtocolError, Timeout
from .types import BookEvent, ProgressEvent, SnapshotEntry

DEFAULT_ENDPOINT = "tcp://127.0.0.1:5556"
#: The largest event frame a subscriber takes (events.md: EventTopic.maxFrameBytes).
MAX_EVENT_FRAME_BYTES = 1024 * 1024


@dataclass
class Snapshot:
    """The state was (re)read from a snapshot: ``entries`` are the records it held (already in
    ``Events.progress``); ``repair`` is false for the first one of a source."""
    source: str
    progress_seq: int
    entries: list[SnapshotEntry]
    repair: bool


@dataclass
class ProgressUpdate:
    """A progress event, applied to ``Events.progress``."""
    topic: str
    event: ProgressEvent


@dataclass
class BookUpdate:
    """A book event (a live feed: nothing is mirrored)."""
    topic: str
    event: BookEvent


@dataclass
class BooksGap:
    """Book events ``first``…``last`` of ``source`` were missed; re-read libraries with ``books list``."""
    source: str
    first: int
    last: int


Update = Union[Snapshot, ProgressUpdate, BookUpdate, BooksGap]


def escape(identifier: str) -> str:
    """An id as one topic segment (events.md: ``%`` → ``%25``, ``/`` → ``%2F``)."""
    return identifier.replace("%", "%25").replace("/", "%2F")


@dataclass
class _Source:
    """What is known of one publisher: the snapshot endpoint its heartbeats advertise, with that
    endpoint's CURVE server key (Z85) when it has one, and the last numbers applied."""
    snapshot: Optional[str] = None
    snapshot_key: Optional[bytes] = None
    last: Optional[int] = None          # None until a snapshot has been applied
    books_last: Optional[int] = None


class Events:
    """A subscriber to Lyceum's progress events (all courses, or one ``course``) and, with
    ``books=True``, book events. Iterate it with ``for`` (blocking, on a thread of its own) or
    ``async for`` (on the running loop); each item is a ``Snapshot``, ``ProgressUpdate``,
    ``BookUpdate`` or ``BooksGap``. ``progress`` mirrors every learner-course record by topic,
    complete and in order after each item; ``repairs`` counts the gaps repaired from snapshots.

    Snapshots come from the endpoint each source's heartbeats advertise, as a CURVE client of the
    key they advertise beside it (``snapshot_key``: a worker's snapshot socket has its own key);
    ``snapshot_endpoint`` is for sources that advertise none, with ``server_certificate``'s key.
    The client keys are ``curve_certificate``'s for every socket."""

    def __init__(self, endpoint: str = DEFAULT_ENDPOINT, *, course: Optional[str] = None, books: bool = False,
                 snapshot_endpoint: Optional[str] = None, timeout: float = 5.0,
                 curve_certificate: Optional[PathLike] = None,
                 server_certificate: Optional[PathLike] = None) -> None:
        self._endpoint = endpoint
        self._course = course
        self._prefix = "progress/" + (escape(course) + "/" if course is not None else "")
        self._books = books
        self._snapshot_endpoint = snapshot_endpoint
        self._timeout = timeout
        self._curve = Curve.from_options(curve_certificate, server_certificate)
        self._sources: dict[str, _Source] = {}
        self._thread: Optional[LoopThread] = None
        #: Every learner-course record under the subscription, by topic.
        self.progress: dict[str, SnapshotEntry] = {}
        #: How many gaps were repaired from a snapshot.
        self.repairs = 0

    def __aiter__(self) -> AsyncIterator[Update]:
        return self._follow()

    def __iter__(self) -> Iterator[Update]:
        if self._thread is None:
            self._thread = LoopThread("lyceum-events")
        thread, updates = self._thread, self._follow()
        try:
            while True:
                try:
                    yield thread.run(updates.__anext__())
                except StopAsyncIteration:
                    return
        finally:
            # Closes the sockets, unless close() already stopped the loop (and so dropped them).
            if not thread.loop.is_closed():
                thread.run(updates.aclose())

    def close(self) -> None:
        """Stops the thread a ``for`` loop ran on (an ``async for`` needs no closing)."""
        if self._thread is not None:
            self._thread.stop()
            self._thread = None

    def __enter__(self) -> Events:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    async def _follow(self) -> AsyncGenerator[Update, None]:
        context = zmq.asyncio.Context()
        subscriber = self._socket(context, zmq.SUB)
        subscriber.setsockopt(zmq.MAXMSGSIZE, MAX_EVENT_FRAME_BYTES)
        for prefix in [self._prefix, "hb/"] + (["books/"] if self._books else []):
            subscriber.setsockopt(zmq.SUBSCRIBE, prefix.encode("utf-8"))
        subscriber.connect(self._endpoint)
        try:
            while True:
                frames = await subscriber.recv_multipart()
                message = _decode(frames)
                if message is None:
                    continue
                topic, body = message
                for update in await self._handle(context, topic, body):
                    yield update
        finally:
            subscriber.close(linger=0)
            context.term()

    async def _handle(self, context: zmq.asyncio.Context, topic: str, body: dict[str, Any]) -> list[Update]:
        name = body.get("source")
        if not isinstance(name, str):
            return []
        source = self._sources.setdefault(name, _Source())
        if topic == "hb/":
            return await self._heartbeat(context, name, source, body)
        if topic.startswith("books/"):
            return self._book(name, source, topic, body)
        if topic.startswith(self._prefix):
            return await self._progress(context, name, source, topic, body)
        return []

    async def _heartbeat(self, context: zmq.asyncio.Context, name: str, source: _Source,
                         body: dict[str, Any]) -> list[Update]:
        try:
            key = _curve_key(body.get("snapshot_key"))
        except ValueError:
            return []  # a malformed heartbeat, dropped as any malformed message is
        if source.snapshot is None and isinstance(body.get("snapshot"), str):
            source.snapshot, source.snapshot_key = body["snapshot"], key
        updates: list[Update] = []
        books_seq = body.get("books_seq")
        if self._books and isinstance(books_seq, int):
            updates += self._books_seen(name, source, books_seq)
        announced = self._number(body, heartbeat=True)
        # A heartbeat proves the subscription is live: catch up now, or repair a gap it shows.
        if self._snapshot_address(source) is None:
            return updates
        if source.last is None or (announced is not None and announced > source.last):
            updates.append(await self._resync(context, name, source))
        return updates

    async def _progress(self, context: zmq.asyncio.Context, name: str, source: _Source, topic: str,
                        body: dict[str, Any]) -> list[Update]:
        number = self._number(body, heartbeat=False)
        entry = _entry(topic, body)
        if number is None or entry is None:
            return []
        if source.last is None:
            if self._snapshot_address(source) is None:
                return []  # its heartbeat will name the snapshot endpoint; the snapshot has this event
            return [await self._resync(context, name, source)]
        if number <= source.last:
            return []
        if number > source.last + 1:
            return [await self._resync(context, name, source)]  # the snapshot already has this event
        source.last = number
        self._store(entry)
        return [ProgressUpdate(topic, body)]  # type: ignore[arg-type]

    def _book(self, name: str, source: _Source, topic: str, body: dict[str, Any]) -> list[Update]:
        number = body.get("books_seq")
        if not isinstance(number, int):
            return []
        updates = self._books_seen(name, source, number - 1)
        source.books_last = number
        return updates + [BookUpdate(topic, body)]  # type: ignore[arg-type]

    def _books_seen(self, name: str, source: _Source, number: int) -> list[Update]:
        """Records that book events up to ``number`` exist; a ``BooksGap`` for those not seen."""
        last, source.books_last = source.books_last, max(number, source.books_last or 0)
        if last is None or number <= last:
            return []
        return [BooksGap(name, last + 1, number)]

    def _number(self, body: dict[str, Any], *, heartbeat: bool) -> Optional[int]:
        """The counter this subscription checks (events.md, "Sequence numbers")."""
        if self._course is None:
            value = body.get("progress_seq")
        elif heartbeat:
            value = (body.get("course_seq") or {}).get(self._course, 0)
        else:
            value = body.get("course_seq")
        return value if isinstance(value, int) else None

    async def _resync(self, context: zmq.asyncio.Context, name: str, source: _Source) -> Snapshot:
        repair = source.last is not None
        first, entries = await self._snapshot(context, name, source)
        last = first.get("progress_seq") if self._course is None else first.get("course_seq", {}).get(self._course, 0)
        if not isinstance(last, int):
            raise ProtocolError("a snapshot page without its sequence number")
        source.last = last
        for entry in entries:
            self._store(entry)
        if repair:
            self.repairs += 1
        return Snapshot(name, last, entries, repair)

    async def _snapshot(self, context: zmq.asyncio.Context, name: str,
                        source: _Source) -> tuple[dict[str, Any], list[SnapshotEntry]]:
        """Every page of a snapshot of this subscription's prefix, with the first page (whose
        numbers count); starts over when the pages come from another source (a restart)."""
        address = self._snapshot_address(source)
        assert address is not None, "only sources with a snapshot address are resynchronised"
        endpoint, key = address
        dealer = self._socket(context, zmq.DEALER, server_key=key)
        dealer.connect(endpoint)
        try:
            while True:
                first: Optional[dict[str, Any]] = None
                entries: list[SnapshotEntry] = []
                cursor: list[bytes] = []
                while True:
                    await dealer.send_multipart([b"SNAPSHOT", self._prefix.encode("utf-8")] + cursor)
                    if not await dealer.poll(int(self._timeout * 1000)):
                        unkeyed = " (it requires CURVE: give curve_certificate=)" if key and self._curve is None else ""
                        raise Timeout(f"no snapshot from {endpoint} within {self._timeout:g} s{unkeyed}")
                    page = _snapshot_page(await dealer.recv_multipart())
                    first = first or page
                    if page.get("source") != first.get("source"):
                        break
                    entries += [entry for item in page.get("entries") or []
                                if isinstance(item, dict) and (entry := _entry(item.get("topic"), item)) is not None]
                    if not isinstance(page.get("next_cursor"), str):
                        return first, entries
                    cursor = [page["next_cursor"].encode("utf-8")]
        finally:
            dealer.close(linger=0)

    def _snapshot_address(self, source: _Source) -> Optional[tuple[str, Optional[bytes]]]:
        """Where ``source`` answers snapshot requests, and its CURVE key when it advertised one
        (else the configured server's key applies): what its heartbeats advertise, else the
        configured ``snapshot_endpoint``; ``None`` when neither is known."""
        if source.snapshot is not None:
            return source.snapshot, source.snapshot_key
        if self._snapshot_endpoint is not None:
            return self._snapshot_endpoint, None
        return None

    def _store(self, entry: SnapshotEntry) -> None:
        # Rule 5: a late, older state never overwrites a newer one.
        held = self.progress.get(entry["topic"])
        if held is None or held["revision"] <= entry["revision"]:
            self.progress[entry["topic"]] = entry

    def _socket(self, context: zmq.asyncio.Context, kind: int,
                server_key: Optional[bytes] = None) -> zmq.asyncio.Socket:
        socket = context.socket(kind)
        socket.setsockopt(zmq.LINGER, 0)
        if self._curve is not None:
            self._curve.apply(socket, server_key)
        return socket


def _decode(frames: list[bytes]) -> Optional[tuple[str, dict[str, Any]]]:
    """Topic and body of a two-frame event message; ``None`` for anything malformed."""
    if len(frames) != 2:
        return None
    try:
        topic, body = frames[0].decode("utf-8"), json.loads(frames[1].decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    return (topic, body) if isinstance(body, dict) else None


def _entry(topic: Any, body: dict[str, Any]) -> Optional[SnapshotEntry]:
    """The record an event or a snapshot entry gives its topic; ``None`` when a member is missing."""
    learner, course, revision, progress = (body.get(name) for name in ("learner", "course", "revision", "progress"))
    if not (isinstance(topic, str) and isinstance(learner, str) and isinstance(course, str)
            and isinstance(revision, int) and isinstance(progress, dict)):
        return None
    return SnapshotEntry(topic=topic, learner=learner, course=course, revision=revision, progress=progress)  # type: ignore[typeddict-item]


def _curve_key(value: Any) -> Optional[bytes]:
    """A heartbeat's ``snapshot_key``: ``None`` for null, the Z85 text of a 32-byte key, or
    ``ValueError`` for anything else."""
    if value is None:
        return None
    try:
        if isinstance(value, str) and len(value) == 40 and len(z85.decode(value.encode("ascii"))) == 32:
            return value.encode("ascii")
    except (KeyError, UnicodeEncodeError, struct.error):
        pass  # a character outside Z85's alphabet, or a group above 2**32
    raise ValueError("snapshot_key is not the Z85 text of a CURVE public key")


def _snapshot_page(frames: list[bytes]) -> dict[str, Any]:
    message = _decode(frames)
    if message is None:
        raise ProtocolError("a snapshot reply that is not two frames of JSON")
    command, page = message
    if command != "SNAPSHOT":
        raise LyceumError(f"snapshot refused: {page.get('message', page)}", code="snapshot_refused")
    return page

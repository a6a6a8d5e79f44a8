"""The asyncio client: ``lyceum_client.aio.Client``.

One DEALER carries every request in flight, each behind an 8-byte tag that the broker returns in
front of its reply (protocol/majordomo.md, "Client envelopes"), so replies find their requests in
whatever order they come. A request without a reply after ``timeout`` is sent again under a new
tag, after a back-off, up to ``attempts`` times in all; a reply to any of its tags completes it.
Sockets set ``ZMQ_IMMEDIATE``, so a request is
queued only on a connection whose handshake completed: a request that no attempt could even send
fails with ``Unreachable`` (``broker_unreachable``), one that was sent and never answered with
``Timeout``. A new socket connects to the next broker in ``endpoints`` (the Lazy Pirate pattern, with
fail-over) when the connection looks dead (no reply at all came on it since a request that timed
out was sent) or when the broker answers ``service_unknown`` (it has no worker for the service, or
the partition; another broker may). A dead connection is closed and the other requests in flight
on it are sent again on the new one at once, as LyceumClient's ConnectionLoop does. A broker that
answered ``service_unknown`` is alive and may still answer the others, which may be for services
it has: its socket stays open, for nothing new, until none of them waits on it. ``queue_full``
and ``overloaded`` are retried on the same socket. Writes carry a ``request_id`` chosen once per
call, so a retry the server already applied returns the first reply and applies nothing.
"""
from __future__ import annotations

import asyncio
import itertools
import random
import time
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Sequence, TypedDict, TypeVar, Union, Unpack

import zmq
import zmq.asyncio

from ._wire import MAX_FRAME_BYTES, Curve, PathLike, decode_result, encode_body, request_frames, split_reply
from .errors import LyceumError, Timeout, Unreachable
from .operations import Async, Books, Call, Catalog, Progress, raw_call

T = TypeVar("T")
DEFAULT_ENDPOINT = "tcp://127.0.0.1:5555"


@dataclass
class _Connection:
    """A DEALER to one broker with the task that receives its replies; ``generation`` counts the
    client's connections, so that failures on an old one are told from failures on the current."""
    socket: zmq.asyncio.Socket
    receiver: asyncio.Task[None]
    generation: int

    def close(self) -> None:
        """Stops receiving and closes the socket."""
        self.receiver.cancel()
        self.socket.close(linger=0)


@dataclass
class _Request:
    """A request in flight: its frames, the tags of its attempts, the current attempt's reply
    (``None`` when the attempt's connection was closed to fail over) and that connection's
    generation."""
    service: bytes
    frame: bytes
    tags: list[bytes] = field(default_factory=list)
    reply: Optional[asyncio.Future[Optional[list[bytes]]]] = None
    generation: int = -1
    #: Whether any attempt was handed to a connection (which, with ``ZMQ_IMMEDIATE``, a broker
    #: had completed the handshake of).
    sent: bool = False

    def waits_on(self, generation: int) -> bool:
        """Whether the current attempt waits for a reply on connection ``generation``."""
        return self.generation == generation and self.reply is not None and not self.reply.done()

    def abandoned(self) -> bool:
        """Whether the current attempt ended because its connection was closed to fail over (a
        timeout cancels the reply instead)."""
        reply = self.reply
        return (reply is not None and reply.done() and not reply.cancelled() and reply.exception() is None
                and reply.result() is None)


class ClientOptions(TypedDict, total=False):
    """How a client connects and retries; the same for the sync and the asyncio client."""
    #: Seconds to wait for a reply per attempt (default 2.5, as Lyceum's own clients).
    timeout: float
    #: Attempts per request, the first included (default 3).
    attempts: int
    #: Seconds before the first retry; doubled for each further one, with jitter (default 0.1).
    backoff: float
    #: The longest back-off in seconds (default 2.0).
    max_backoff: float
    #: Requests in flight at once; more wait for a slot (default 256).
    max_in_flight: int
    #: Path of the client's secret certificate (zcert) to speak CURVE; needs ``server_certificate``.
    curve_certificate: Optional[PathLike]
    #: Path of the broker's public certificate (zcert).
    server_certificate: Optional[PathLike]


class Client:
    """An asyncio client of one or more Lyceum brokers, tried in order on failure. Use it from one
    event loop; ``async with`` closes it. ``catalog``, ``books`` and ``progress`` hold one
    coroutine method per operation of the contract."""

    def __init__(self, endpoints: Union[str, Sequence[str]] = DEFAULT_ENDPOINT,
                 **options: Unpack[ClientOptions]) -> None:
        self._endpoints = [endpoints] if isinstance(endpoints, str) else list(endpoints)
        if not self._endpoints:
            raise ValueError("at least one broker endpoint is needed")
        self._timeout = float(options.get("timeout", 2.5))
        self._attempts = int(options.get("attempts", 3))
        self._backoff = float(options.get("backoff", 0.1))
        self._max_backoff = float(options.get("max_backoff", 2.0))
        max_in_flight = int(options.get("max_in_flight", 256))
        if self._timeout <= 0 or self._attempts < 1 or self._backoff < 0 or max_in_flight < 1:
            raise ValueError("timeout must be positive, attempts and max_in_flight at least 1, backoff not negative")
        self._curve = Curve.from_options(options.get("curve_certificate"), options.get("server_certificate"))
        self._context = zmq.asyncio.Context()
        self._slots = asyncio.Semaphore(max_in_flight)
        self._tags = itertools.count(1)
        self._waiting: dict[bytes, _Request] = {}
        self._connection: Optional[_Connection] = None
        #: Connections failed over from after a ``service_unknown``, open while requests wait on them.
        self._draining: list[_Connection] = []
        self._generation = 0
        self._endpoint_index = 0
        self._last_reply_at = 0.0
        self._closed = False
        #: The ``catalog`` service.
        self.catalog: Catalog[Async] = Catalog(self._request)
        #: The ``books`` service.
        self.books: Books[Async] = Books(self._request)
        #: The ``progress`` service.
        self.progress: Progress[Async] = Progress(self._request)

    @property
    def endpoint(self) -> str:
        """The broker requests go to now."""
        return self._endpoints[self._endpoint_index]

    async def call(self, service: str, body: Mapping[str, Any]) -> Any:
        """Sends ``body`` to ``service`` exactly as given and returns the reply's ``result`` (or
        raises its error); for operations this client has no method for."""
        return await self._request(raw_call(service, body))

    async def close(self) -> None:
        """Closes the connection; requests still waiting fail with ``LyceumError`` (``closed``)."""
        self._closed = True
        for connection in self._draining + ([self._connection] if self._connection else []):
            connection.close()
        self._connection, self._draining = None, []
        for request in self._waiting.values():
            if request.reply is not None and not request.reply.done():
                request.reply.set_exception(LyceumError("the client was closed", code="closed"))
        self._waiting.clear()
        self._context.term()

    async def __aenter__(self) -> Client:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.close()

    async def _request(self, call: Call[T]) -> T:
        if self._closed:
            raise LyceumError("the client is closed", code="closed")
        request = _Request(call.service.encode("utf-8"), encode_body(call.body))
        async with self._slots:
            failure: LyceumError = Timeout(f"no reply from {call.service}", service=call.service)
            try:
                for attempt in range(self._attempts):
                    if attempt:
                        await asyncio.sleep(self._delay(attempt))
                    body, generation = await self._attempt(request)
                    if body is None:
                        failure = self._no_reply(call.service, request, attempt + 1)
                        continue
                    try:
                        return call.decode(decode_result(call.service, body))
                    except LyceumError as error:
                        if not error.retryable:
                            raise
                        if error.fails_over:
                            self._fail_over(generation, dead=False)
                        failure = error
                raise failure
            finally:
                for tag in request.tags:
                    self._waiting.pop(tag, None)

    def _no_reply(self, service: str, request: _Request, attempts: int) -> LyceumError:
        """The failure of a request none of whose ``attempts`` got a reply: ``Unreachable`` when
        no attempt was ever sent, else ``Timeout``."""
        brokers = ", ".join(self._endpoints)
        if not request.sent:
            return Unreachable(f"no connection to any broker ({brokers}) for {service} within {self._timeout:g} s "
                               f"on any of {attempts} attempts", service=service)
        return Timeout(f"no reply from {service} within {self._timeout:g} s on any of {attempts} attempts ({brokers})"
                       + ("; the last one's connection was closed to fail over" if request.abandoned() else ""),
                       service=service)

    async def _attempt(self, request: _Request) -> tuple[Optional[list[bytes]], int]:
        """Sends the request under a new tag and waits for a reply to any of its tags; returns the
        reply body (``None`` when none came: a timeout, after failing over when the connection
        looks dead, or the connection closed to fail over) and the connection's generation."""
        connection = self._connected()
        tag = next(self._tags).to_bytes(8, "big")
        request.tags.append(tag)
        self._waiting[tag] = request
        request.reply = asyncio.get_running_loop().create_future()
        request.generation = connection.generation
        sent_at = time.monotonic()
        try:
            async with asyncio.timeout(self._timeout):
                # Never blocks for long once connected: at most max_in_flight requests are queued,
                # below the socket's high-water mark. Before a connection (ZMQ_IMMEDIATE) it waits.
                if not await self._send(connection, request_frames(tag, request.service, request.frame)):
                    return None, connection.generation
                request.sent = True
                return await request.reply, connection.generation
        except (TimeoutError, zmq.ZMQError):
            if self._last_reply_at < sent_at:
                self._fail_over(connection.generation, dead=True)
            return None, connection.generation
        finally:
            self._close_drained()

    @staticmethod
    async def _send(connection: _Connection, frames: list[bytes]) -> bool:
        """Sends ``frames`` on ``connection``; false when the connection was closed under the
        send (another request failed over from it: pyzmq cancels a pending send on close)."""
        try:
            await connection.socket.send_multipart(frames)
            return True
        except asyncio.CancelledError:
            # This task itself being cancelled (by its caller or by its attempt's timeout) must
            # go on as a cancellation; only a send cancelled by the socket's close is an
            # attempt that got no reply.
            current = asyncio.current_task()
            if current is not None and current.cancelling():
                raise
            return False

    def _connected(self) -> _Connection:
        if self._connection is None:
            socket = self._context.socket(zmq.DEALER)
            socket.setsockopt(zmq.LINGER, 0)
            socket.setsockopt(zmq.IMMEDIATE, 1)
            socket.setsockopt(zmq.MAXMSGSIZE, MAX_FRAME_BYTES)
            if self._curve is not None:
                self._curve.apply(socket)
            socket.connect(self.endpoint)
            receiver = asyncio.get_running_loop().create_task(self._receive(socket))
            self._connection = _Connection(socket, receiver, self._generation)
        return self._connection

    async def _receive(self, socket: zmq.asyncio.Socket) -> None:
        while True:
            try:
                frames = await socket.recv_multipart()
            except zmq.ZMQError:
                return
            reply = split_reply(frames)
            if reply is None:
                continue
            tag, service, body = reply
            request = self._waiting.get(tag)
            # A reply naming another service than the request's is ignored (majordomo.md).
            if request is None or request.service != service:
                continue
            self._last_reply_at = time.monotonic()
            # A late reply to an earlier attempt's tag completes the request as well.
            if request.reply is not None and not request.reply.done():
                request.reply.set_result(body)

    def _fail_over(self, generation: int, *, dead: bool) -> None:
        """Moves new attempts to the next broker, leaving connection ``generation``: closed when
        it is ``dead``, else kept for the replies still due on it."""
        # Several requests fail on the same socket; only the first moves on.
        if generation != self._generation or self._connection is None:
            return
        if dead:
            # Replies to the others can no longer come: their attempts end now (``None``: no
            # reply), not at their timeout.
            for request in self._waiting.values():
                if request.waits_on(generation):
                    request.reply.set_result(None)  # type: ignore[union-attr]
            self._connection.close()
        else:
            self._draining.append(self._connection)
        self._connection = None
        self._generation += 1
        self._endpoint_index = (self._endpoint_index + 1) % len(self._endpoints)
        self._close_drained()

    def _close_drained(self) -> None:
        """Closes the connections failed over from that no request waits on any more."""
        if not self._draining:
            return
        for connection in [c for c in self._draining
                           if not any(request.waits_on(c.generation) for request in self._waiting.values())]:
            connection.close()
            self._draining.remove(connection)

    def _delay(self, attempt: int) -> float:
        # Jitter keeps clients that failed together from retrying together.
        return min(self._backoff * 2.0 ** (attempt - 1), self._max_backoff) * random.uniform(0.5, 1.0)

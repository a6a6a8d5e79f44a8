"""Exceptions: one class per error code of the contract (protocol/README.md, "Error codes"), one per
broker rejection (protocol/majordomo.md, "Broker error reply"), and the client's own failures.

Programs switch on the class or on ``.code``; ``.message`` is for people.
"""
from __future__ import annotations


class LyceumError(Exception):
    """Any failure of a Lyceum request. ``code`` is the snake_case code from the wire (an unknown
    code arrives here as a plain ``LyceumError`` with that code); ``field`` is the JSONPath of the
    request member at fault when the server named one."""

    code: str = "error"
    #: Whether the client retries a request that failed this way (with the same ``request_id``).
    retryable: bool = False
    #: Whether that retry goes to the next broker on a new connection: this broker cannot do
    #: better, another may.
    fails_over: bool = False

    def __init__(self, message: str, *, code: str | None = None, field: str | None = None,
                 service: str | None = None) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code
        self.message = message
        self.field = field
        self.service = service

    def __str__(self) -> str:
        where = f" ({self.field})" if self.field else ""
        return f"{self.code}: {self.message}{where}"


class BadRequest(LyceumError):
    """``bad_request``: the request is malformed or a value is out of range; fix it, do not retry."""
    code = "bad_request"


class NotFound(LyceumError):
    """``not_found``: the course, lesson, quiz or book does not exist."""
    code = "not_found"


class Conflict(LyceumError):
    """``conflict``: a stale ``expected_version``, or a ``request_id`` reused for another request."""
    code = "conflict"


class UnknownOp(LyceumError):
    """``unknown_op``: the service has no such operation."""
    code = "unknown_op"


class TooLarge(LyceumError):
    """``too_large``: the request frame exceeds the contract's 65,536 bytes."""
    code = "too_large"


class Unavailable(LyceumError):
    """``unavailable``: the write could not be journaled or its durability confirmed; retried with
    the same ``request_id`` until the attempts run out."""
    code = "unavailable"
    retryable = True


class Internal(LyceumError):
    """``internal``: a defect on the server."""
    code = "internal"


class Forbidden(LyceumError):
    """``forbidden``: the authenticated caller may not do this (issue 16's access rules)."""
    code = "forbidden"


class Unauthenticated(LyceumError):
    """``unauthenticated``: the server needs to know who is calling and could not tell."""
    code = "unauthenticated"


class LimitExceeded(LyceumError):
    """``limit_exceeded``: the write would take the learner's data past a per-learner limit of the
    server's (``max-books-per-learner``, ``max-library-bytes``; the message names it). Nothing was
    applied; retrying does not help until the learner deletes something."""
    code = "limit_exceeded"


class StorageFull(LyceumError):
    """``storage_full`` (contract version 4): the server's storage has no space left; nothing was
    applied, and writes work again once space is freed. Retried with the same ``request_id``
    until the attempts run out."""
    code = "storage_full"
    retryable = True


class BrokerRejection(LyceumError):
    """The broker refused to route the request (its ``\\x00MDP-ERROR`` reply); nothing was applied.
    Retried, after a back-off, until the attempts run out: on the same connection when the
    broker is busy, through the next broker when it has no worker for the service."""
    code = "broker_rejection"
    retryable = True


class QueueFull(BrokerRejection):
    """``queue_full``: the service's queue is full."""
    code = "queue_full"


class Overloaded(BrokerRejection):
    """``overloaded``: the broker's queues are full in all."""
    code = "overloaded"


class ServiceUnknown(BrokerRejection):
    """``service_unknown``: no worker is registered for the service at this broker (another broker
    may have some, or this one just restarted), so the retry fails over to the next broker."""
    code = "service_unknown"
    fails_over = True


class Timeout(LyceumError, TimeoutError):
    """``timed_out``: no reply on any attempt, from any broker. A write may or may not have been
    applied; calling again with the same ``request_id`` applies it at most once."""
    code = "timed_out"


class Unreachable(LyceumError, ConnectionError):
    """``broker_unreachable``: no attempt could hand the request to any broker, because no
    connection was made (nothing listens there, the network is down, or the CURVE handshake was
    refused). Nothing was sent, so nothing was applied; unlike ``Timeout``, where a broker took
    the request and no reply came."""
    code = "broker_unreachable"


class ProtocolError(LyceumError):
    """``protocol``: a reply that is not what the contract promises (not one frame of JSON, no
    ``ok``); the client's peer is not a Lyceum server of this contract version."""
    code = "protocol"


_BY_CODE: dict[str, type[LyceumError]] = {
    cls.code: cls
    for cls in (BadRequest, NotFound, Conflict, UnknownOp, TooLarge, Unavailable, Internal,
                Forbidden, Unauthenticated, LimitExceeded, StorageFull, QueueFull, Overloaded, ServiceUnknown)
}

# Older brokers' spelling of a rejection (protocol/majordomo.md, "Version note").
_ALIASES = {"broker_overloaded": "overloaded"}


def error_for(code: str, message: str, *, field: str | None = None,
              service: str | None = None) -> LyceumError:
    """The exception for a wire error ``code`` (kebab-case accepted, as older brokers spelled
    rejections); an unknown code gives a plain ``LyceumError`` carrying it."""
    normalized = code.replace("-", "_")
    normalized = _ALIASES.get(normalized, normalized)
    cls = _BY_CODE.get(normalized, LyceumError)
    return cls(message, code=normalized, field=field, service=service)

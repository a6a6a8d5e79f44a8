"""Lyceum's Python client: ``Client`` (blocking), ``aio.Client`` (asyncio), ``Events`` (progress
events with gap repair), and one exception class per error code. See the repository's
docs/clients.md, "Python"."""
from . import aio
from .client import Client
from .errors import (BadRequest, BrokerRejection, Conflict, Forbidden, Internal, LimitExceeded, LyceumError, NotFound,
                     Overloaded, ProtocolError, QueueFull, ServiceUnknown, StorageFull, Timeout, TooLarge, Unauthenticated,
                     Unavailable, UnknownOp, Unreachable)
from .events import BooksGap, BookUpdate, Events, ProgressUpdate, Snapshot, Update
from .operations import new_request_id

__all__ = ["aio", "Client", "Events", "Snapshot", "ProgressUpdate", "BookUpdate", "BooksGap", "Update", "new_request_id", "LyceumError", "BadRequest", "NotFound", "Conflict",
           "UnknownOp", "TooLarge", "Unavailable", "Internal", "Forbidden", "Unauthenticated",
           "LimitExceeded", "StorageFull",
           "BrokerRejection", "QueueFull", "Overloaded", "ServiceUnknown", "Timeout", "Unreachable", "ProtocolError"]

"""The blocking client: ``lyceum_client.Client``."""
from __future__ import annotations

from typing import Any, Mapping, Sequence, TypeVar, Union, Unpack

from . import aio
from ._loop import LoopThread
from .operations import Books, Call, Catalog, Progress, Sync

T = TypeVar("T")


class Client:
    """A blocking client of one or more Lyceum brokers, with the asyncio client's behaviour
    (``lyceum_client.aio.Client``: retries, fail-over, ``request_id``s) because it runs one on a
    thread of its own. Safe to share between threads: their requests are in flight together on one
    connection. ``with`` closes it."""

    def __init__(self, endpoints: Union[str, Sequence[str]] = aio.DEFAULT_ENDPOINT,
                 **options: Unpack[aio.ClientOptions]) -> None:
        self._thread = LoopThread("lyceum-client")
        try:
            self._client = self._thread.run(self._make(endpoints, options))
        except BaseException:
            self._thread.stop()
            raise
        #: The ``catalog`` service.
        self.catalog: Catalog[Sync] = Catalog(self._run)
        #: The ``books`` service.
        self.books: Books[Sync] = Books(self._run)
        #: The ``progress`` service.
        self.progress: Progress[Sync] = Progress(self._run)

    @staticmethod
    async def _make(endpoints: Union[str, Sequence[str]], options: aio.ClientOptions) -> aio.Client:
        return aio.Client(endpoints, **options)

    @property
    def endpoint(self) -> str:
        """The broker requests go to now."""
        return self._client.endpoint

    def call(self, service: str, body: Mapping[str, Any]) -> Any:
        """Sends ``body`` to ``service`` exactly as given and returns the reply's ``result``."""
        return self._thread.run(self._client.call(service, body))

    def close(self) -> None:
        """Closes the connection and stops the client's thread."""
        if not self._thread.loop.is_closed():
            self._thread.run(self._client.close())
            self._thread.stop()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def _run(self, call: Call[T]) -> T:
        return self._thread.run(self._client._request(call))

"""An event loop on a thread of its own, which the blocking API runs the asyncio one on: one
implementation of the protocol, and blocking callers on any number of threads share one
connection with many requests in flight."""
from __future__ import annotations

import asyncio
import threading
from typing import Awaitable, TypeVar

T = TypeVar("T")


class LoopThread:
    """A daemon thread running an asyncio loop until ``stop()``."""

    def __init__(self, name: str) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name=name, daemon=True)
        self._thread.start()

    def run(self, awaitable: Awaitable[T]) -> T:
        """Awaits ``awaitable`` on the loop and blocks until it is done; an interrupted caller
        (e.g. Ctrl-C) cancels it."""
        future = asyncio.run_coroutine_threadsafe(_awaiting(awaitable), self.loop)
        try:
            return future.result()
        except BaseException:
            future.cancel()
            raise

    def stop(self) -> None:
        """Stops the loop and waits for the thread."""
        if self.loop.is_closed():
            return
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join()
        self.loop.close()


async def _awaiting(awaitable: Awaitable[T]) -> T:
    # run_coroutine_threadsafe takes coroutines only, not e.g. an async generator's next step.
    return await awaitable

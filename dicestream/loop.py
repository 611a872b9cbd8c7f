"""The event loop every service and the bench run on: uvloop where it exists.

The services spend most of their CPU in the event loop and socket calls (a round trip per batch),
which uvloop does in C. The bench runs its baselines on the same loop, so ratios compare like with
like.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Coroutine
from typing import Any, NoReturn, TypeVar

T = TypeVar("T")


def run(coro: Coroutine[Any, Any, T], *, interrupt_at_once: bool = False) -> T:
    """`interrupt_at_once`: Ctrl-C raises KeyboardInterrupt where the program is, as outside a loop.
    asyncio's own first Ctrl-C only asks the loop to cancel the main task, which a write blocked on
    a full pipe (`watch` whose reader stopped reading) never lets the loop do."""
    if not interrupt_at_once:
        return _run(coro)
    # A handler other than the default keeps asyncio.Runner from installing its own. It is put back
    # after: a caller that runs more than this command (a test, a notebook) keeps its own Ctrl-C.
    before = signal.signal(signal.SIGINT, _interrupt)
    try:
        return _run(coro)
    finally:
        # None: the handler was not set from Python (an embedding host's), and cannot be put back.
        signal.signal(signal.SIGINT, before if before is not None else signal.default_int_handler)


def _run(coro: Coroutine[Any, Any, T]) -> T:
    try:
        import uvloop
    except ImportError:  # e.g. Windows: the standard loop works, only slower
        return asyncio.run(coro)
    return uvloop.run(coro)


def _interrupt(signum: int, frame: Any) -> NoReturn:
    raise KeyboardInterrupt

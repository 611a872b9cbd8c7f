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
    if interrupt_at_once:
        # A handler other than the default keeps asyncio.Runner from installing its own.
        signal.signal(signal.SIGINT, _interrupt)
    try:
        import uvloop
    except ImportError:  # e.g. Windows: the standard loop works, only slower
        return asyncio.run(coro)
    return uvloop.run(coro)


def _interrupt(signum: int, frame: Any) -> NoReturn:
    raise KeyboardInterrupt

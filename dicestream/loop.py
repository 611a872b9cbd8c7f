"""The event loop every service and the bench run on: uvloop where it exists.

The services spend most of their CPU in the event loop and socket calls (a round trip per batch),
which uvloop does in C. The bench runs its baselines on the same loop, so ratios compare like with
like.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def run(coro: Coroutine[Any, Any, T]) -> T:
    try:
        import uvloop
    except ImportError:  # e.g. Windows: the standard loop works, only slower
        return asyncio.run(coro)
    return uvloop.run(coro)

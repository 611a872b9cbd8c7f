"""Serving an ASGI app with uvicorn inside a service's event loop (health endpoints, the gateway)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from typing import Any

import uvicorn


class _Server(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        # The process owns SIGINT/SIGTERM (`dicestream serve` stops every service in order); uvicorn
        # would otherwise take them over and raise them again when it stops.
        yield


class EmbeddedServer:
    """uvicorn serving `app` on host:port (port 0: any free port, see `port` once started)."""

    def __init__(self, app: Any, host: str, port: int, **options: Any) -> None:
        config = uvicorn.Config(
            app, host=host, port=port, log_level="warning", lifespan="on", access_log=False, **options
        )
        self.server = _Server(config)
        self.host = host
        self.port = port
        self.task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self.task = asyncio.create_task(self.server.serve(), name=f"http:{self.host}:{self.port}")
        while not self.server.started:
            if self.task.done():
                # Could not bind (address in use, bad host): say so instead of serving nothing.
                self.task.result()
                raise OSError(f"could not listen on {self.host}:{self.port}")
            await asyncio.sleep(0.01)
        self.port = self.server.servers[0].sockets[0].getsockname()[1]

    @property
    def url(self) -> str:
        host = "127.0.0.1" if self.host in ("0.0.0.0", "") else self.host
        return f"http://{host}:{self.port}"

    async def stop(self) -> None:
        if self.task is None:
            return
        self.server.should_exit = True
        await asyncio.gather(self.task, return_exceptions=True)
        self.task = None

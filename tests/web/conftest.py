"""The web page in a real browser: headless Chromium (Debian's `chromium`, the system browser:
Playwright's own browser download does not work on these machines) driven by Playwright for
Python, against a gateway on a free port in front of the real services.

`Browser.page()` opens a page that records every response it receives and every WebSocket frame
sent to it (`seen`), so that a test can check none of it holds a secret."""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from tests.gateway.conftest import bare, stack

__all__ = ["bare", "stack"]  # the gateway's fixtures: a gateway in front of the real services

ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        pytest.skip("no chromium on PATH (Debian: apt-get install chromium)")
    return found


@dataclass
class Recorded:
    """What one page received: response bodies (by URL) and WebSocket frames, and its errors."""

    responses: list[tuple[str, bytes]] = field(default_factory=list)
    frames: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    pending: list[Any] = field(default_factory=list)

    async def settle(self) -> None:
        """Read the bodies of every response seen so far."""
        for response in self.pending:
            with contextlib.suppress(Exception):  # a redirect, a 304 or a page gone has no body
                self.responses.append((response.url, await response.body()))
        self.pending.clear()

    def texts(self) -> list[str]:
        return [body.decode("utf-8", "replace") for _, body in self.responses] + self.frames


@dataclass
class Browser:
    browser: Any
    pages: list[tuple[Any, Recorded]] = field(default_factory=list)

    async def page(self, width: int = 1280, height: int = 900) -> tuple[Any, Recorded]:
        context = await self.browser.new_context(viewport={"width": width, "height": height}, accept_downloads=True)
        page = await context.new_page()
        seen = Recorded()
        page.on("response", lambda response: seen.pending.append(response))
        page.on("pageerror", lambda exc: seen.errors.append(str(exc)))
        page.on("console", lambda msg: seen.errors.append(msg.text) if msg.type == "error" else None)

        def socket(ws: Any) -> None:
            ws.on(
                "framereceived",
                lambda payload: seen.frames.append(payload if isinstance(payload, str) else payload.decode()),
            )

        page.on("websocket", socket)
        self.pages.append((page, seen))
        return page, seen


@pytest.fixture
async def browser() -> AsyncIterator[Browser]:
    from playwright.async_api import async_playwright

    executable = chromium()
    async with async_playwright() as p:
        launched = await p.chromium.launch(executable_path=executable, args=ARGS)
        b = Browser(launched)
        try:
            yield b
        finally:
            for _, seen in b.pages:
                # A page that threw is a failing page, whatever the test looked at (a refused
                # request is the test's to check; a socket closed with its page is no error).
                thrown = [e for e in seen.errors if "WebSocket" not in e and "Failed to load resource" not in e]
                assert not thrown, thrown
            await launched.close()

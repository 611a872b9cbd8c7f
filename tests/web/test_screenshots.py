"""The screenshots in docs/screenshots (shown in README.md) are of the page as it draws now: each
seeded game is rendered again in headless Chromium and its drawing (the SHA-256 of the board's
DOM, or the whole page's: deterministic, unlike PNG pixels across font versions) must match
docs/screenshots/manifest.json. Regenerate with `python -m dicestream.screenshots`."""

from __future__ import annotations

import os

from dicestream import screenshots
from tests.web.conftest import chromium


async def test_the_committed_screenshots_are_current() -> None:
    chromium()  # skips without a browser
    before = os.environ.get("DICESTREAM_REDIS_CLUSTER")
    entries = await screenshots.render(write=False, say=lambda _: None)
    assert os.environ.get("DICESTREAM_REDIS_CLUSTER") == before  # nothing leaks into other tests
    problems = screenshots.stale(entries)
    assert not problems, "; ".join(problems) + ": regenerate with `python -m dicestream.screenshots`"
    readme = (screenshots.ROOT / "README.md").read_text()
    for entry in entries.values():
        assert f"docs/screenshots/{entry['png']}" in readme, f"README.md does not show {entry['png']}"

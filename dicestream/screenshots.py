"""Screenshots of the web page's boards, for README.md: one seeded game of each title (the same
bots, seed and clock every time, as services.selfplay records it), opened as a game file in
headless Chromium through a gateway that has no Redis, its board shot at the middle version.

    python -m dicestream.screenshots           # write docs/screenshots/*.png and manifest.json
    python -m dicestream.screenshots --check   # exit 1 if a committed screenshot is stale

PNG pixels depend on the fonts installed, so what is compared is the drawing itself: the SHA-256
of the board's DOM (its SVG), deterministic for a seeded game, stored in manifest.json beside the
pictures. tests/web/test_screenshots.py runs the check.

Needs Playwright (the `dev` extra) and a Chromium on PATH (Debian: apt-get install chromium)."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "screenshots"
MANIFEST = OUT / "manifest.json"
WIDTH = 1280
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--force-color-profile=srgb",
    "--hide-scrollbars",
]


@dataclass(frozen=True)
class Shot:
    title: str
    players: int
    seed: str

    @property
    def name(self) -> str:
        return f"{self.title}-{self.players}p"


# Whole pages (the board with the replay controls and the event list): (name, shot, width).
PAGES = (("page-sentient-3p", "sentient-3p", 1280), ("phone-artifacts-3p", "artifacts-3p", 390))

SHOTS = (
    Shot("sentient", 3, "screenshot-sentient-1"),
    Shot("prosperity", 3, "screenshot-prosperity-1"),
    Shot("mechanica", 2, "screenshot-mechanica-1"),
    Shot("artifacts", 3, "screenshot-artifacts-1"),
)


async def record(shot: Shot) -> bytes:
    """The seeded game as the export file `dicestream export` would write."""
    from games.bots import RandomBot
    from games.catalog import GREEDY
    from services.history import export_lines
    from services.selfplay import record_game

    bots = [GREEDY[shot.title](), *(RandomBot(seat) for seat in range(1, shot.players))]
    hist = await record_game(shot.title, bots, shot.seed, game_id=shot.name)
    return b"\n".join(export_lines(hist)) + b"\n"


@contextlib.asynccontextmanager
async def gateway() -> Any:
    """A gateway on a free loopback port whose Redis does not answer: the page, its assets and
    game files need none."""
    from services.config import Settings
    from services.gateway.app import GatewayService
    from services.gateway.settings import GatewaySettings

    settings = Settings(prefix="screenshots", log_level="error")
    was = os.environ.get("DICESTREAM_REDIS_CLUSTER")
    os.environ["DICESTREAM_REDIS_CLUSTER"] = "0"  # nothing to ask whether it is a cluster: nothing answers
    try:
        gw = GatewayService(
            settings, "redis://127.0.0.1:1/0", GatewaySettings(port=0, rate_limit="", file_rate_limit="")
        )
    finally:
        if was is None:
            os.environ.pop("DICESTREAM_REDIS_CLUSTER", None)
        else:
            os.environ["DICESTREAM_REDIS_CLUSTER"] = was
    await gw.start()
    try:
        yield gw
    finally:
        await gw.stop()


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        raise SystemExit("no chromium on PATH (Debian: apt-get install chromium)")
    return found


async def render(
    shots: tuple[Shot, ...] = SHOTS, write: bool = True, say: Callable[[str], None] = print
) -> dict[str, Any]:
    """Each shot's manifest entry (and, with `write`, its PNG under docs/screenshots)."""
    from playwright.async_api import async_playwright

    files = {shot.name: await record(shot) for shot in shots}
    entries: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        async with gateway() as gw, async_playwright() as p:
            browser = await p.chromium.launch(executable_path=chromium(), args=CHROMIUM_ARGS)
            try:
                for shot in shots:
                    path = Path(tmp) / f"{shot.name}.jsonl"
                    path.write_bytes(files[shot.name])
                    page, version, last = await opened(browser, gw.url, path, WIDTH)
                    drawn = page.locator(f".board-host > .board[data-version='{version}']")
                    dom = await drawn.evaluate("el => el.outerHTML")
                    png = f"{shot.name}.png"
                    entry: dict[str, object] = {
                        "title": shot.title,
                        "players": shot.players,
                        "seed": shot.seed,
                        "version": version,
                        "versions": int(last),
                        "png": png,
                        "board_sha256": hashlib.sha256(dom.encode()).hexdigest(),
                    }
                    entries[shot.name] = entry
                    if write:
                        OUT.mkdir(parents=True, exist_ok=True)
                        await page.locator(".board-host").screenshot(path=str(OUT / png), animations="disabled")
                        say(f"wrote docs/screenshots/{png} (version {version} of {last})")
                    await page.close()
                for name, of, width in PAGES:
                    shot = next(x for x in shots if x.name == of)
                    page, version, last = await opened(browser, gw.url, Path(tmp) / f"{of}.jsonl", width)
                    dom = await page.locator("main").evaluate("el => el.outerHTML")
                    entries[name] = {
                        "title": shot.title,
                        "players": shot.players,
                        "seed": shot.seed,
                        "version": version,
                        "versions": last,
                        "width": width,
                        "png": f"{name}.png",
                        "page_sha256": hashlib.sha256(dom.encode()).hexdigest(),
                    }
                    if write:
                        await page.screenshot(path=str(OUT / f"{name}.png"), full_page=True, animations="disabled")
                        say(f"wrote docs/screenshots/{name}.png")
                    await page.close()
            finally:
                await browser.close()
    return entries


async def opened(browser: Any, base: str, path: Path, width: int) -> tuple[Any, int, int]:
    """A page with the game file at `path` opened, at its middle version; (page, version, last)."""
    page = await browser.new_page(viewport={"width": width, "height": 900}, device_scale_factor=1)
    await page.goto(f"{base}/open")
    await page.set_input_files("#file", str(path))
    last = await page.locator("#version").get_attribute("max")
    assert last is not None
    # The last version drawn first, so that moving to the middle is the last scroll of the events.
    await page.locator(f".board-host > .board[data-version='{last}']").wait_for()
    version = int(last) // 2
    await page.locator("#version").fill(str(version))
    await page.locator(f".board-host > .board[data-version='{version}']").wait_for()
    # The replay controls stick to the top of the window: not over the picture.
    await page.evaluate("document.querySelector('.scrubber').style.position = 'static'")
    await page.evaluate("document.querySelector('.events').style.position = 'static'")
    return page, version, int(last)


def stale(entries: dict[str, Any]) -> list[str]:
    """What differs between fresh renders and the committed manifest (and pictures)."""
    try:
        committed = json.loads(MANIFEST.read_text())
    except (OSError, ValueError):
        return ["docs/screenshots/manifest.json is missing or unreadable"]
    out = []
    for name, entry in entries.items():
        if committed.get(name) != entry:
            out.append(f"{name}: the board drawn now differs from the committed screenshot's")
        if not (OUT / entry["png"]).is_file():
            out.append(f"{name}: docs/screenshots/{entry['png']} is missing")
    out += [f"{name}: in the manifest, not rendered any more" for name in committed if name not in entries]
    return out


def main(argv: list[str] | None = None) -> int:
    from services import logs

    logs.configure("error", "console")  # the seeded games' referee logs every command at debug
    args = sys.argv[1:] if argv is None else argv
    check = "--check" in args
    entries = asyncio.run(render(write=not check))
    if check:
        problems = stale(entries)
        for problem in problems:
            print(problem, file=sys.stderr)
        if problems:
            print("regenerate with: python -m dicestream.screenshots", file=sys.stderr)
        return 1 if problems else 0
    MANIFEST.write_text(json.dumps(entries, indent=2, sort_keys=True) + "\n")
    print("wrote docs/screenshots/manifest.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Reading the drawn boards back from the DOM (their data attributes) and comparing them with the
public view of the same version; the secrets of a game, to look for them in what a page got."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from contracts import codec

# Events whose private copy holds a hidden order (the public copy has None there).
HIDDEN_ORDERS = {
    "sentient.DeckShuffled": ("cards",),
    "prosperity.DeckBuilt": ("tiles",),
    "mechanica.ImprovementsShuffled": ("stack", "extras"),
    "mechanica.BlueprintsShuffled": ("piles",),
    "artifacts.DeckShuffled": ("cards",),
}


@dataclass
class Secrets:
    seed: str
    token_hashes: list[str]
    # Each hidden order as the JSON it would be written as (an array of 3 ids or more).
    orders: list[str]

    def once_over(self, final_view: Any) -> Secrets:
        """What stays secret once the game is over: not the orders play revealed in full (all of
        Prosperity's decade deck is drawn, in order, by the end), nor the seed."""
        shown = json.dumps(final_view, separators=(",", ":"))
        return Secrets(seed="", token_hashes=self.token_hashes, orders=[o for o in self.orders if o not in shown])

    def found_in(self, text: str, tokens: list[str], seed_revealed: bool) -> list[str]:
        found = [f"token {t[:6]}…" for t in tokens if t in text]
        found += [f"token hash {h[:8]}…" for h in self.token_hashes if h in text]
        found += [f"hidden order {o[:40]}…" for o in self.orders if o in text]
        if not seed_revealed and self.seed and self.seed in text:
            found.append("the seed")
        return found


def secrets(log: list[tuple[int, bytes]]) -> Secrets:
    seed, hashes, orders = "", [], []
    for version, data in log:
        env = codec.decode_event(data, "", version)  # the game id is not needed here
        payload = json.loads(bytes(env.payload))
        if env.type == "lifecycle.GameCreated":
            seed = payload["seed"]
        elif env.type == "lifecycle.SeatJoined" and payload.get("token_hash"):
            hashes.append(payload["token_hash"])
        for name in HIDDEN_ORDERS.get(env.type, ()):
            value = payload.get(name)
            for seq in value if value and isinstance(value[0], list) else [value]:
                if seq and len(seq) >= 3:
                    orders.append(json.dumps(seq, separators=(",", ":")))
    assert seed and hashes, "a game has a seed and joined seats"
    return Secrets(seed=seed, token_hashes=hashes, orders=orders)


async def data(page: Any, selector: str) -> list[dict[str, str]]:
    """The data attributes of every element matching `selector`, in document order."""
    found: list[dict[str, str]] = await page.eval_on_selector_all(
        selector, "els => els.map(el => Object.assign({}, el.dataset))"
    )
    return found


async def at(page: Any, path: str) -> None:
    """Wait until the page's path is `path` (percent-encoded, as in a link), polled in the page.
    A finished game's page replaces its URL with `?v=LAST` as soon as it is drawn, so a URL
    pattern Playwright only matches against navigation events could see both changes land before
    it looked and wait for one that never comes (CI timed out so once, no event seen)."""
    from playwright.async_api import Error, TimeoutError

    try:
        await page.wait_for_function("(p) => location.pathname === p", arg=path, timeout=15_000)
    except TimeoutError:
        where = page.url
        with contextlib.suppress(Error):
            where = await page.evaluate("`${location.href} (${document.querySelector('main h1')?.textContent})`")
        raise AssertionError(f"the page never reached {path}: it shows {where}") from None


class Held:
    """A route handler that leaves requests unanswered until the test lets them go (a proxy or a
    gateway that hangs): only the `nth` request (from 1) if given, the others pass, else every one."""

    def __init__(self, nth: int | None = None) -> None:
        self.nth = nth
        self.seen = 0
        self.routes: list[Any] = []
        self.caught = asyncio.Event()

    async def __call__(self, route: Any) -> None:
        self.seen += 1
        if self.nth is None or self.seen == self.nth:
            self.routes.append(route)
            self.caught.set()
        else:
            await route.continue_()

    async def first(self, timeout: float = 10) -> None:
        await asyncio.wait_for(self.caught.wait(), timeout)

    async def drop(self) -> None:
        """Fail what is still held, so that the page's context can close."""
        for route in self.routes:
            await route.abort()


async def until(check: Callable[[], bool], seconds: float = 5) -> bool:
    """Whether `check()` holds within `seconds` (polled): for what the page does not draw, such as
    a WebSocket closing."""
    deadline = time.monotonic() + seconds
    while not check() and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    return check()


async def drop(page: Any, text: str, name: str = "game.jsonl") -> None:
    """Drop a game file on the page, as a user dragging it from their desktop."""
    transfer = await page.evaluate_handle(
        """([text, name]) => { const t = new DataTransfer();
            t.items.add(new File([text], name, { type: "application/x-ndjson" })); return t; }""",
        [text, name],
    )
    await page.dispatch_event("main", "drop", {"dataTransfer": transfer})


async def board(page: Any, version: int) -> None:
    await page.wait_for_selector(f".board-host > .board[data-version='{version}']")
    assert not await page.locator(".board-host > .board > p.error").count(), "the board could not be drawn"


async def ints(page: Any, selector: str, key: str) -> list[int]:
    return [int(d[key]) for d in await data(page, f".board-host {selector}")]


def acting(found: list[dict[str, str]]) -> list[int]:
    return sorted(int(p["seat"]) for p in found if p.get("toAct") == "true")


async def check_sentient(page: Any, view: dict[str, Any]) -> None:
    dice = await data(page, ".board-host .die[data-die]")
    got = {(int(d["seat"]), int(d["die"])): int(d["value"]) for d in dice}
    assert got == {(p["seat"], i): v for p in view["players"] for i, v in enumerate(p["dice"])}
    vps = {int(d["seat"]): int(d["vp"]) for d in await data(page, ".board-host [data-vp]")}
    assert vps == {p["seat"]: p["vp"] for p in view["players"]}
    slots = await data(page, ".board-host [data-part=factory] [data-slot]:not(.influence)")
    assert [s.get("card") for s in slots] == [f["card"] for f in view["factory"]]
    influence = await data(page, ".board-host .influence")
    assert {(int(i["slot"]), int(i["seat"])): int(i["influence"]) for i in influence} == {
        (f["slot"], seat): v for f in view["factory"] for seat, v in enumerate(f["influence"])
    }
    network = await data(page, ".board-host [data-network]")
    assert {(int(n["seat"]), int(n["network"])): n.get("card") or None for n in network} == {
        (p["seat"], i + 1): c for p in view["players"] for i, c in enumerate(p["network"])
    }
    investors = await data(page, ".board-host .investor")
    assert [i["investor"] for i in investors] == [x["investor"] for x in view["investors"] if x]
    order = await data(page, ".board-host [data-order=current]")
    assert [int(o["seat"]) for o in order] == view["turn_order"]
    assert acting(await data(page, ".board-host [data-part=player]")) == sorted(view["to_act"])


async def check_prosperity(page: Any, view: dict[str, Any]) -> None:
    spaces = await data(page, ".board-host .space")
    assert {(int(s["seat"]), s["space"]): s["tile"] or None for s in spaces} == {
        (p["seat"], sp["id"]): (sp["tiles"][-1] if sp["tiles"] else None)
        for p in view["players"]
        for sp in p.get("spaces", [])
    }
    for name, key in (("money", "money"), ("points", "points"), ("discs", "discs")):
        got = [int(d[name]) for d in await data(page, f".board-host [data-{name}]")]
        assert got == [p[key] for p in view["players"] if p.get("side")], name
    totals = await data(page, ".board-host [data-total=energy]")
    assert [int(t["value"]) for t in totals] == [p["energy"] for p in view["players"] if p.get("side")]
    (deck,) = await data(page, ".board-host [data-part=deck] [data-deck]")
    assert int(deck["deck"]) == view["deck_size"]
    supply = await data(page, ".board-host .supply-tile")
    assert sorted(s["tile"] for s in supply) == sorted(view["research_board"])
    levels = await data(page, ".board-host [data-track]")
    assert {(marker["track"], int(marker["level"])) for marker in levels} == {
        (t, p["research"][t]) for p in view["players"] for t in ("energy", "ecology")
    }
    assert acting(await data(page, ".board-host [data-part=player]")) == sorted(view["to_act"])


async def check_mechanica(page: Any, view: dict[str, Any]) -> None:
    cols = view["board"]["cols"]
    squares = await data(page, ".board-host .square")
    got = {(int(s["seat"]), s["square"]): s["piece"] for s in squares}
    want = {}
    for p in view["players"]:
        for sq, piece in enumerate(p["factory"]["pieces"]):
            r, c = divmod(sq, cols)
            if view["board"]["areas"][r][c]:
                want[(p["seat"], f"{r + 1},{c + 1}")] = piece
    assert got == want
    holes = await data(page, ".board-host .hole[data-square]")
    assert {(int(h["seat"]), h["square"], int(h["hole"])): h["model"] for h in holes} == {
        (p["seat"], f"{sq // cols + 1},{sq % cols + 1}", k): model
        for p in view["players"]
        for sq, in_square in enumerate(p["factory"]["holes"])
        for k, model in enumerate(in_square)
    }
    assert [int(w["wallet"]) for w in await data(page, ".board-host [data-wallet]")] == [
        p["wallet"] for p in view["players"]
    ]
    assert [int(v["vault"]) for v in await data(page, ".board-host [data-vault]")] == [
        p["vault"] for p in view["players"]
    ]
    forks = await data(page, ".board-host .fork")
    assert {(int(f["seat"]), f["square"]): f["fork"] for f in forks} == {
        (p["seat"], f"{k['row']},{k['col']}"): k["direction"] for p in view["players"] for k in p["factory"]["forks"]
    }
    shop = await data(page, ".board-host .wheel-space[data-price]")
    assert [(int(s["price"]), s["improvement"]) for s in shop] == [(s["price"], s["improvement"]) for s in view["shop"]]
    bps = await data(page, ".board-host .blueprint")
    assert [b["blueprint"] for b in bps] == [b["face_up"] for b in view["blueprints"]]
    assert acting(await data(page, ".board-host [data-part=player]")) == sorted(view["to_act"])


async def check_artifacts(page: Any, view: dict[str, Any]) -> None:
    market = await data(page, ".board-host [data-market]")
    assert {(m["market"], int(m["slot"])): m.get("card") for m in market} == {
        (row, i + 1): card for row, cards in view["market"].items() for i, card in enumerate(cards)
    }
    cards = await data(page, ".board-host [data-part=player] .card")
    assert sorted((int(c["seat"]), c["card"], int(c["level"]), int(c["row"]), int(c["col"])) for c in cards) == sorted(
        (p["seat"], c["card"], c["level"], c["row"], c["col"]) for p in view["players"] for c in p["cards"]
    )
    assert [int(d["dollars"]) for d in await data(page, ".board-host [data-dollars]")] == [
        p["dollars"] for p in view["players"]
    ]
    reps = await data(page, ".board-host [data-part=player] [data-reputation]")
    assert [int(r["reputation"]) for r in reps] == [p["reputation"] for p in view["players"]]
    boxes = await data(page, ".board-host .museum")
    assert [b["museum"] for b in boxes] == [m["museum"] for m in view["museums"]]
    filled = await data(page, ".board-host .order-box")
    assert [f["filledBy"] for f in filled] == ["" if s is None else str(s) for m in view["museums"] for s in m["boxes"]]
    assert acting(await data(page, ".board-host [data-part=player]")) == sorted(view["to_act"])


CHECKS = {
    "sentient": check_sentient,
    "prosperity": check_prosperity,
    "mechanica": check_mechanica,
    "artifacts": check_artifacts,
}

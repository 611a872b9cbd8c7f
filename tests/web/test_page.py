"""The web page in headless Chromium, for each of the four games: a finished game from the lobby,
drawn at its first, a middle and its last version as the public view says; the audit of a
refused command and its share link; the fairness badge and the download; a live game showing a
move within 2 s of its command; a game file opened with Redis down. Every response and WebSocket
frame the page receives is checked for seat tokens, token hashes, hidden orders and, while the
game runs, its seed."""

from __future__ import annotations

import asyncio
import re
import time
from pathlib import Path
from typing import Any

import msgspec
import pytest

from contracts import codec
from games import match as m
from games.bots import RandomBot
from games.catalog import GAMES, GREEDY
from services import history
from services.eventstore.keys import Keys
from services.eventstore.redis_store import RedisEventStore
from services.gateway.app import GatewayService
from services.gateway.replaying import public_items
from services.gateway.rules import RULES
from services.readmodel import public_state
from services.selfplay import record_game
from tests.gateway.conftest import OPEN, Bare, Stack
from tests.gateway.helpers import Api, Seat, gather, play
from tests.web.conftest import Browser
from tests.web.helpers import CHECKS, Held, at, board, drop, secrets, until

pytestmark = [
    pytest.mark.redis,
    pytest.mark.standalone_only("one browser run is enough: the gateway's own tests cover the cluster"),
]
TITLES = list(GAMES)
GOLDEN = Path(__file__).parent.parent / "golden"


async def finished(api: Api, title: str) -> tuple[str, list[Seat]]:
    game_id = await api.create(title, 2)
    seats = [await api.join(game_id, 0, "ann", kind="human"), await api.join(game_id, 1, "bot-b")]
    playing = [
        asyncio.ensure_future(play(api, seats[0], title, "greedy", over_ws=False)),
        asyncio.ensure_future(play(api, seats[1], title, "random", over_ws=True, seed=1)),
    ]
    await asyncio.sleep(0.2)
    await api.start(seats[0])
    await gather(*playing, timeout=180)
    return game_id, seats


async def running(api: Api) -> str:
    """A Sentient game of two started and waiting for its first move (its page follows it live)."""
    game_id = await api.create("sentient", 2)
    first = await api.join(game_id, 0, "ann")
    await api.join(game_id, 1, "bob")
    await api.start(first)
    return game_id


async def state_at(api: Api, game_id: str, version: int) -> dict[str, Any]:
    r = await api.request("GET", f"/v1/games/{game_id}", params={"version": version})
    assert r.status_code == 200, r.text
    body: dict[str, Any] = r.json()
    return body


async def seat_view(api: Api, seat: Seat) -> dict[str, Any]:
    r = await api.request("GET", f"/v1/games/{seat.game_id}/seats/{seat.seat}", headers=api.bearer(seat.token))
    assert r.status_code == 200, r.text
    body: dict[str, Any] = r.json()
    return body


async def shows(page: Any, version: int, view: dict[str, Any] | None, title: str) -> None:
    await board(page, version)
    if view is None:
        assert await page.locator(".board-host .empty-board").count() == 1
    else:
        await CHECKS[title](page, view)


@pytest.mark.parametrize("title", TITLES)
async def test_a_finished_game_from_the_lobby_to_its_audit(stack: Stack, browser: Browser, title: str) -> None:
    api = stack.api()
    store = RedisEventStore(stack.run.client(), Keys(stack.settings.prefix))
    try:
        game_id, seats = await finished(api, title)
        refused = await api.command(seats[0], {"type": "lifecycle.Resign"})
        assert refused.status_code == 409 and refused.json()["rule"] == "GAME-NOT-RUNNING"
        refused_id = refused.json()["command_id"]
        log = await store.read(game_id)
        last = len(log)
        hidden = secrets(log).once_over((await state_at(api, game_id, len(log)))["view"])
        agg = history.fold(await history.load(store, game_id))
        assert agg.result is not None
        started = next(v for v, d in log if codec.decode_event(d, game_id, v).type == "lifecycle.GameStarted")
        mid = (started + last) // 2

        page, seen = await browser.page()
        await page.goto(stack.url + "/")
        row = page.locator(f"tr[data-game-id='{game_id}']")
        await row.wait_for()
        assert await row.get_attribute("data-status") == "over"
        text = await row.inner_text()
        assert "ann" in text and "human" in text and "bot" in text and str(agg.result.scores[0]) in text
        await page.select_option("#f-title", title)  # the filter keeps it, and only its title
        await page.wait_for_function("document.querySelectorAll('tr[data-title]').length > 0")
        assert set(await page.eval_on_selector_all("tr[data-title]", "rs => rs.map(r => r.dataset.title)")) == {title}
        # The ratings beside the list rate this title's players, this game's among them (drawn
        # after the filtered list, so the link clicked below is no longer replaced).
        await page.wait_for_function(
            "(t) => { const rs = [...document.querySelectorAll('tr[data-rated]')];"
            " return rs.length > 0 && rs.every((r) => r.dataset.rated === t); }",
            arg=title,
        )
        rated = await page.eval_on_selector_all(
            "tr[data-rated]", "rs => rs.map(r => [r.dataset.rated, r.dataset.player])"
        )
        assert {t for t, _ in rated} == {title}
        assert {s.name for s in agg.seats if s is not None} <= {p for _, p in rated}
        await page.locator(f"tr[data-game-id='{game_id}'] a").first.click()
        await at(page, f"/games/{game_id}")
        await shows(page, last, (await state_at(api, game_id, last))["view"], title)

        # Version 1 (Home), the first with a board, a middle one from the URL, the last (End).
        await page.keyboard.press("Home")
        await shows(page, 1, None, title)
        await page.goto(f"{stack.url}/games/{game_id}?v={started}")
        await shows(page, started, (await state_at(api, game_id, started))["view"], title)
        await page.locator("#version").fill(str(mid))
        await shows(page, mid, (await state_at(api, game_id, mid))["view"], title)
        assert f"?v={mid}" in page.url
        await page.keyboard.press("ArrowRight")
        await shows(page, mid + 1, (await state_at(api, game_id, mid + 1))["view"], title)
        assert f"Version {mid + 1} of {last}" in await page.locator(".now").inner_text()
        await page.keyboard.press("End")
        await shows(page, last, (await state_at(api, game_id, last))["view"], title)

        # The event list: every public event, in words; one of them the refusal.
        events = (await api.request("GET", f"/v1/games/{game_id}/events", params={"limit": 1000})).json()["events"]
        assert await page.locator(".event-list li").count() == len(events)
        mine = page.locator(f".event-list li.refused:has(a[data-command='{refused_id}'])")
        assert "Refused Resign from ann: GAME-NOT-RUNNING" in await mine.inner_text()
        # Clicking an event goes to its version.
        await page.locator(f".event-list li[data-version='{mid}'] button.jump").first.click()
        await board(page, mid)

        # Fairness, as verify says.
        await page.locator(".fairness[data-fair='true']").wait_for()
        assert "re-derived" in await page.locator(".fairness").inner_text()

        # The audit of the refused command, and its link.
        await page.locator(f".event-list li.refused a[data-command='{refused_id}']").click()
        await at(page, f"/games/{game_id}/audit/{refused_id}")
        verdict = page.locator(".verdict")
        await verdict.wait_for()
        assert await verdict.get_attribute("data-rule") == "GAME-NOT-RUNNING"
        assert await page.locator(".rule-text").inner_text() == m.LIFECYCLE_RULES["GAME-NOT-RUNNING"]
        share = await page.locator("input.share").input_value()
        assert share == f"{stack.url}/games/{game_id}/audit/{refused_id}"
        other, other_seen = await browser.page()
        await other.goto(share)
        await other.locator(".verdict[data-rule='GAME-NOT-RUNNING']").wait_for()
        await page.locator("button.back").click()
        await board(page, mid)

        # Nothing secret reached either page (the game is over: its seed is public now).
        await seen.settle()
        await other_seen.settle()
        tokens = [s.token for s in seats]
        for text in seen.texts() + other_seen.texts():
            assert not hidden.found_in(text, tokens, seed_revealed=True)
        # Everything came from the gateway itself: no CDN, nothing from elsewhere.
        assert {url.split("/")[2] for url, _ in seen.responses} == {stack.url.split("/")[2]}

        # The download is the export.
        async with page.expect_download() as download:
            await page.locator("[data-download]").click()
        path = await (await download.value).path()
        exported = (await api.request("GET", f"/v1/games/{game_id}/export")).content
        assert Path(path).read_bytes() == exported
    finally:
        await store.close()
        await api.close()


def refusal_for(
    title: str, seats: list[Seat], to_act: list[int], legal: list[dict[str, Any]]
) -> tuple[Seat, dict[str, Any]]:
    """A command the game refuses by one of its own rules: the acting seat's move sent by a seat
    not to act; when every seat acts (Prosperity's set-up), a board side that does not exist."""
    idle = [s for s in seats if s.seat not in to_act]
    if idle:
        return idle[0], {"type": legal[0]["type"], "payload": legal[0]["payload"]}
    return seats[0], {"type": f"{title}.ChooseBoard", "payload": {"side": "gold"}}


@pytest.mark.parametrize("title", TITLES)
async def test_a_live_game_shows_a_move_within_2_s(stack: Stack, browser: Browser, title: str) -> None:
    api = stack.api()
    store = RedisEventStore(stack.run.client(), Keys(stack.settings.prefix))
    try:
        game_id = await api.create(title, 2)
        seats = [await api.join(game_id, s, f"p{s}") for s in range(2)]
        page, seen = await browser.page()
        await page.goto(f"{stack.url}/games/{game_id}")
        await board(page, 3)  # created, two seats joined: no board yet
        await page.locator(".badge[data-live='true']").wait_for()  # following the events socket
        await api.start(seats[0])
        started = len(await store.read(game_id))
        await board(page, started)

        # A move: it is on the page within 2 s of being sent.
        seat_view = (
            await api.request("GET", f"/v1/games/{game_id}/seats/0", headers=api.bearer(seats[0].token))
        ).json()
        mover = seats[seat_view["to_act"][0]]
        view = (
            await api.request("GET", f"/v1/games/{game_id}/seats/{mover.seat}", headers=api.bearer(mover.token))
        ).json()
        action = view["legal_actions"][0]
        sent = time.monotonic()
        r = await api.command(mover, {**action, "expected_version": view["version"]})
        assert r.status_code == 200, r.text
        version = r.json()["version"]
        await page.locator(f".event-list li[data-version='{version}']").first.wait_for(timeout=2000)
        await board(page, version)
        assert time.monotonic() - sent < 2.0
        await CHECKS[title](page, (await state_at(api, game_id, version))["view"])

        # A refusal by one of the game's rules appears too, and its audit names the rule.
        view = (
            await api.request("GET", f"/v1/games/{game_id}/seats/{mover.seat}", headers=api.bearer(mover.token))
        ).json()
        who, body = refusal_for(title, seats, view["to_act"], view["legal_actions"] or [action])
        r = await api.command(who, body)
        assert r.status_code == 409, r.text
        rule, command_id = r.json()["rule"], r.json()["command_id"]
        assert not rule.startswith("GAME-"), rule
        link = page.locator(f".event-list li.refused a[data-command='{command_id}']")
        await link.wait_for(timeout=2000)
        await link.click()
        verdict = page.locator(".verdict")
        await verdict.wait_for()
        assert await verdict.get_attribute("data-rule") == rule
        assert await page.locator(".rule-text").inner_text() == RULES[rule].text

        # The game runs: its seed must not have reached the page, nor any token or hidden order.
        await seen.settle()
        hidden = secrets(await store.read(game_id))
        assert seen.frames, "the page followed the game over its WebSocket"
        for text in seen.texts():
            assert not hidden.found_in(text, [s.token for s in seats], seed_revealed=False)
    finally:
        await store.close()
        await api.close()


@pytest.fixture
async def no_redis(bare: Bare, monkeypatch: pytest.MonkeyPatch) -> Any:
    """A gateway whose Redis does not answer (nothing listens on port 1)."""
    monkeypatch.setenv("DICESTREAM_REDIS_CLUSTER", "0")
    gw = GatewayService(bare.settings, "redis://127.0.0.1:1/0", msgspec.structs.replace(OPEN, rate_limit="200/second"))
    await gw.start()
    yield gw
    await gw.stop()


def offline_view(path: Path, version: int) -> dict[str, Any] | None:
    _, hist = history.parse_export(path.read_bytes().splitlines())
    view: dict[str, Any] | None = public_state(history.fold(hist, version)).get("view")
    plain: dict[str, Any] | None = msgspec.json.decode(msgspec.json.encode(view))
    return plain


@pytest.mark.parametrize("title", TITLES)
async def test_a_game_file_opens_with_redis_down(no_redis: GatewayService, browser: Browser, title: str) -> None:
    (path,) = GOLDEN.glob(f"{title}-*p.jsonl")
    _, hist = history.parse_export(path.read_bytes().splitlines())
    last = len(hist.events)
    mid = last // 2
    page, seen = await browser.page()
    if title == "sentient":  # dropped on the lobby (whose game list needs Redis)
        await page.goto(no_redis.url + "/")
        await page.locator(".error").wait_for()
        await drop(page, path.read_text(), "game.jsonl")
    else:  # chosen on /open
        await page.goto(no_redis.url + "/open")
        await page.set_input_files("#file", str(path))
    await board(page, last)
    assert "/open" in page.url
    view = offline_view(path, last)
    assert view is not None
    await CHECKS[title](page, view)
    assert await page.locator(".event-list li").count() == len(public_items(hist))
    await page.locator("#version").fill(str(mid))
    await shows(page, mid, offline_view(path, mid), title)
    await page.keyboard.press("ArrowLeft")
    await shows(page, mid - 1, offline_view(path, mid - 1), title)
    await page.locator(".fairness[data-fair='true']").wait_for()
    # The audit of the command that wrote the middle version, from the file.
    await page.locator(f".event-list li[data-version='{mid}'] a.audit-link").first.click()
    await page.locator(".verdict[data-status='accepted']").wait_for()
    assert await page.locator(".produced li").count() >= 1
    await seen.settle()
    hidden = secrets([(e.version, codec.encode(e)) for e in hist.events]).once_over(offline_view(path, last))
    for text in seen.texts():
        assert not hidden.found_in(text, [], seed_revealed=True)


WIDER_THAN_SCREEN = """() => [...document.querySelectorAll("body *")]
    .filter((el) => el.getBoundingClientRect().right > 391 || el.scrollWidth > 391)
    .slice(0, 8).map((el) => `${el.tagName}.${el.className?.baseVal ?? el.className} ${el.scrollWidth}`)"""


async def test_the_page_at_phone_width(stack: Stack, browser: Browser) -> None:
    api = stack.api()
    try:
        game_id, _ = await finished(api, "mechanica")
        page, _seen = await browser.page(width=390, height=844)
        await page.goto(f"{stack.url}/games/{game_id}")
        await page.locator(".board-host > .board").wait_for()
        # Nothing wider than the screen: the panels stack and scale.
        wide = await page.evaluate(WIDER_THAN_SCREEN)
        assert await page.evaluate("document.documentElement.scrollWidth") <= 390, wide
        for panel in await page.locator(".board-host svg.panel").all():
            box = await panel.bounding_box()
            assert box is not None and box["width"] <= 390
        # Keyboard: the slider takes the arrows, the buttons have names.
        await page.get_by_role("button", name="First version").click()
        await board(page, 1)
        await page.locator("#version").focus()
        await page.keyboard.press("ArrowRight")
        await board(page, 2)
        for name in ("Previous version (←)", "Next version (→)", "Last version", "Play"):
            assert await page.get_by_role("button", name=name).count() == 1
        await page.goto(stack.url + "/")
        await page.locator(f"tr[data-game-id='{game_id}']").wait_for()
        assert await page.evaluate("document.documentElement.scrollWidth") <= 390
    finally:
        await api.close()


async def test_the_lobby_refreshing_keeps_the_row_a_user_is_on(stack: Stack, browser: Browser) -> None:
    """The lobby redraws itself every 5 s while games change. A game's row and link stay the same
    elements through that, so a click falling between the press and the release of a refresh is
    not lost, and the keyboard's focus stays on the link: whether a game is listed above it, its
    own row changes, or a game above it leaves the list (it started, and the list shows open ones)."""
    api = stack.api()
    try:
        game_id = await api.create("sentient", 2)
        leaving = await api.create("sentient", 2)
        page, _seen = await browser.page()
        await page.goto(stack.url + "/?status=open")
        link = page.locator(f"tr[data-game-id='{game_id}'] a")
        await page.locator(f"tr[data-game-id='{leaving}']").wait_for()
        await link.wait_for()
        await link.focus()
        await page.evaluate("(id) => { window.kept = document.querySelector(`tr[data-game-id='${id}'] a`); }", game_id)
        newer = await api.create("sentient", 2)
        await api.join(game_id, 0, "zed")
        first = await api.join(leaving, 0, "ann")
        await api.join(leaving, 1, "bob")
        await api.start(first)
        await page.locator(f"tr[data-game-id='{newer}']").wait_for(timeout=15_000)
        await page.locator(f"tr[data-game-id='{leaving}']").wait_for(state="detached", timeout=15_000)
        await page.wait_for_function(
            "(id) => document.querySelector(`tr[data-game-id='${id}']`).innerText.includes('zed')", arg=game_id
        )
        kept = "(id) => window.kept.isConnected && window.kept === document.querySelector(`tr[data-game-id='${id}'] a`)"
        assert await page.evaluate(kept, game_id)
        assert await page.evaluate("document.activeElement === window.kept")
        await page.keyboard.press("Enter")
        await at(page, f"/games/{game_id}")
    finally:
        await api.close()


async def test_a_refresh_that_never_gets_an_answer_does_not_stop_the_lobby(stack: Stack, browser: Browser) -> None:
    """One request of the lobby's refresh is left unanswered (a proxy or a gateway that hangs):
    it fails after the lobby's patience, the list says so, and the refresh goes on, showing a game
    created since."""
    api = stack.api()
    try:
        first = await api.create("sentient", 2)
        page, _seen = await browser.page()
        held = Held(nth=2)  # the first refresh, 5 s after the list
        await page.route(re.compile(r"/v1/games\?"), held)
        try:
            await page.goto(stack.url + "/")
            await page.locator(f"tr[data-game-id='{first}']").wait_for()
            await held.first()
            later = await api.create("sentient", 2)
            # One check that waits: the alert lasts only until the next refresh, 5 s later.
            await page.wait_for_function(
                "() => document.querySelector(\"td.error[role='alert']\")?.textContent"
                ".includes('no answer within 10 s')",
                timeout=15_000,
            )
            await page.locator(f"tr[data-game-id='{later}']").wait_for(timeout=15_000)
            await page.locator(f"tr[data-game-id='{first}']").wait_for()
        finally:
            await held.drop()
    finally:
        await api.close()


async def test_a_lobby_answering_late_leaves_the_game_shown_since(stack: Stack, browser: Browser) -> None:
    """The lobby's first list request hangs; meanwhile the user goes to a live game. When the
    lobby gives up (its patience), it must not take the game's place as the view to leave: going
    back closes the game's WebSocket."""
    api = stack.api()
    try:
        game_id = await running(api)
        page, _seen = await browser.page()
        held = Held(nth=1)
        sockets: list[Any] = []
        page.on("websocket", lambda ws: sockets.append(ws))
        gave_up = asyncio.Event()
        page.on("requestfailed", lambda r: gave_up.set() if "/v1/games?" in r.url else None)
        await page.route(re.compile(r"/v1/games\?"), held)
        try:
            await page.goto(stack.url + "/")
            await held.first()
            await page.evaluate(
                "(id) => { history.pushState({}, '', `/games/${id}`); dispatchEvent(new PopStateEvent('popstate')); }",
                game_id,
            )
            await page.locator(".board-host > .board").wait_for()
            assert await until(lambda: bool(sockets), 10)
            assert len(sockets) == 1 and not sockets[0].is_closed()
            await asyncio.wait_for(gave_up.wait(), 15)  # the lobby's request failed at its patience
            await page.go_back()
            await page.locator("#f-title").wait_for()
            assert await until(sockets[0].is_closed), "the game's WebSocket outlived the game's page"
        finally:
            await held.drop()
    finally:
        await api.close()


async def test_a_game_answering_after_back_was_pressed_does_not_draw_over_the_lobby(
    stack: Stack, browser: Browser
) -> None:
    """The user opens a game and presses Back while it loads; when the game's answer comes, the
    lobby stays: no board drawn over it, its URL and title untouched."""
    api = stack.api()
    try:
        game_id = await api.create("sentient", 2)
        page, _seen = await browser.page()
        await page.goto(stack.url + "/")
        await page.locator(f"tr[data-game-id='{game_id}']").wait_for()
        held = Held()
        await page.route(re.compile(rf"/v1/games/{game_id}$"), held)
        await page.locator(f"tr[data-game-id='{game_id}'] a").click()
        await page.locator("p.loading").wait_for()
        await held.first()
        await page.go_back()
        await page.locator(f"tr[data-game-id='{game_id}']").wait_for()
        async with page.expect_request_finished(lambda r: f"/v1/games/{game_id}/events" in r.url):
            await held.routes[0].continue_()
        await asyncio.sleep(1.5)  # what the game would draw next needs one more small request
        assert await page.locator("section.game").count() == 0
        assert await page.locator(f"tr[data-game-id='{game_id}']").count() == 1
        assert await page.evaluate("location.pathname + location.search") == "/"
        assert await page.title() == "Games · dicestream"
    finally:
        await api.close()


async def test_a_game_left_while_its_board_loads_leaves_the_url_and_its_socket(stack: Stack, browser: Browser) -> None:
    """The user opens a live game and presses Back while its first board loads: the game's
    WebSocket closes at once, and when the board's answer comes the lobby keeps its URL."""
    api = stack.api()
    try:
        game_id = await running(api)
        page, _seen = await browser.page()
        sockets: list[Any] = []
        page.on("websocket", lambda ws: sockets.append(ws))
        await page.goto(stack.url + "/")
        await page.locator(f"tr[data-game-id='{game_id}']").wait_for()
        held = Held()
        await page.route(re.compile(rf"/v1/games/{game_id}/states\?"), held)
        await page.locator(f"tr[data-game-id='{game_id}'] a").click()
        await held.first()
        await page.locator("section.game").wait_for()
        assert await until(lambda: bool(sockets), 10)
        await page.go_back()
        await page.locator(f"tr[data-game-id='{game_id}']").wait_for()
        assert await until(lambda: all(ws.is_closed() for ws in sockets)), "the socket outlived its page"
        async with page.expect_request_finished(lambda r: "/states?" in r.url):
            await held.routes[0].continue_()
        await asyncio.sleep(0.5)  # the board's answer is handled (the URL written, or not)
        assert await page.evaluate("location.pathname + location.search") == "/"
        assert await page.locator("section.game").count() == 0
    finally:
        await api.close()


async def test_forward_to_a_game_while_the_lobby_loads_shows_the_game(stack: Stack, browser: Browser) -> None:
    """From a game, Back to a lobby whose catalog hangs, then Forward: the game is drawn again at
    its URL (what was on screen of it is not taken for the view shown), and the lobby's late
    answer changes nothing."""
    api = stack.api()
    try:
        game_id = await running(api)
        page, _seen = await browser.page()
        await page.goto(stack.url + "/")
        await page.locator(f"tr[data-game-id='{game_id}'] a").click()
        await at(page, f"/games/{game_id}")
        drawn = page.locator(f"section.game[data-game-id='{game_id}'] .board-host > .board")
        await drawn.wait_for()
        held = Held()
        await page.route(re.compile(r"/v1/catalog$"), held)
        try:
            await page.go_back()
            await held.first()
            await page.go_forward()
            await at(page, f"/games/{game_id}")
            await drawn.wait_for()
            async with page.expect_request_finished(lambda r: r.url.endswith("/v1/catalog")):
                await held.routes.pop(0).continue_()
            await asyncio.sleep(0.5)  # the lobby's answer is handled (drawn, or not)
            assert await drawn.count() == 1
            assert await page.evaluate("location.pathname") == f"/games/{game_id}"
        finally:
            await held.drop()
    finally:
        await api.close()


async def test_the_lobby_without_its_catalog_still_lists_the_games(stack: Stack, browser: Browser) -> None:
    """The catalog (the titles' names) fails: the lobby still lists and filters the games, the
    filter from the URL shown as chosen."""
    api = stack.api()
    try:
        game_id = await api.create("sentient", 2)
        page, _seen = await browser.page()
        await page.route(re.compile(r"/v1/catalog$"), lambda route: route.fulfill(status=503, json={"title": "Down"}))
        await page.goto(stack.url + "/?title=sentient")
        await page.locator(f"tr[data-game-id='{game_id}']").wait_for()
        assert await page.locator("#f-title").input_value() == "sentient"
    finally:
        await api.close()


async def two_files(page: Any, url: str) -> tuple[int, int]:
    """Open a Sentient file at `url`/open, move to its middle version, drop a Mechanica file on it:
    (that middle version, the Mechanica file's last), with the second file shown."""
    (sentient,) = GOLDEN.glob("sentient-*p.jsonl")
    (mechanica,) = GOLDEN.glob("mechanica-*p.jsonl")
    last_s = len(history.parse_export(sentient.read_bytes().splitlines())[1].events)
    last_m = len(history.parse_export(mechanica.read_bytes().splitlines())[1].events)
    await page.goto(url + "/open")
    await page.set_input_files("#file", str(sentient))
    await board(page, last_s)
    earlier = min(last_s, last_m) // 2
    await page.locator("#version").fill(str(earlier))
    await board(page, earlier)
    assert page.url.endswith(f"/open#v={earlier}")
    await drop(page, mechanica.read_text(), "other.jsonl")  # dropped on the file shown
    await page.locator("section.game[data-title='mechanica']").wait_for()
    await board(page, last_m)
    return earlier, last_m


async def test_a_second_file_opens_at_its_own_last_version(no_redis: GatewayService, browser: Browser) -> None:
    """A file dropped while another is shown opens at its own last version: the version in the URL
    belonged to the file before it."""
    page, _seen = await browser.page()
    _earlier, last_m = await two_files(page, no_redis.url)
    assert page.url.endswith(f"/open#v={last_m}")


async def test_back_and_forward_show_the_file_each_entry_was_made_for(
    no_redis: GatewayService, browser: Browser
) -> None:
    """The user opens a file, then a second, then one that is not a game file: Back shows the second,
    then the first at the version it was left at (nothing opened is lost to the bad file); Forward
    goes the same way back."""
    page, _seen = await browser.page()
    earlier, last_m = await two_files(page, no_redis.url)
    await drop(page, "this is not a game file\n", "notes.jsonl")
    await page.locator("main p.error[role='alert']").wait_for()

    await page.go_back()
    await page.locator("section.game[data-title='mechanica']").wait_for()
    await board(page, last_m)
    await page.go_back()
    await page.locator("section.game[data-title='sentient']").wait_for()
    await board(page, earlier)
    assert page.url.endswith(f"/open#v={earlier}")
    await page.go_forward()
    await page.locator("section.game[data-title='mechanica']").wait_for()
    await board(page, last_m)
    await page.go_forward()
    await page.locator("main p.error[role='alert']").wait_for()
    assert not await page.locator("section.game").count()


async def test_an_open_link_shows_the_last_file_and_keeps_showing_it(
    no_redis: GatewayService, browser: Browser
) -> None:
    """After "Open a file" (a link, no file of its own) showed the last file, a file dropped since
    does not take that entry over: Back shows the file the link showed."""
    page, _seen = await browser.page()
    await two_files(page, no_redis.url)
    await page.go_back()  # the first file: the link shows the last opened, not the last shown
    await page.locator("section.game[data-title='sentient']").wait_for()
    await page.locator("nav a[href='/open']").click()
    await page.locator("section.game[data-title='mechanica']").wait_for()
    (artifacts,) = GOLDEN.glob("artifacts-*p.jsonl")
    await drop(page, artifacts.read_text(), "third.jsonl")
    await page.locator("section.game[data-title='artifacts']").wait_for()
    await page.go_back()
    await page.locator("section.game[data-title='mechanica']").wait_for()


async def test_after_a_reload_an_entry_whose_file_is_gone_asks_for_one(
    no_redis: GatewayService, browser: Browser
) -> None:
    """The files opened live as long as the page: after a reload, the entries made for them show the
    picker, never a file opened since that happens to take the same place."""
    page, _seen = await browser.page()
    await two_files(page, no_redis.url)
    await page.reload()
    await page.locator("[data-dropzone]").wait_for()
    (sentient,) = GOLDEN.glob("sentient-*p.jsonl")
    await page.set_input_files("#file", str(sentient))
    await page.locator("section.game[data-title='sentient']").wait_for()
    await page.go_back()  # the first file's entry, from before the reload
    await page.locator("[data-dropzone]").wait_for()
    assert not await page.locator("section.game").count()


async def test_a_file_of_a_game_and_the_game_are_different_pages(stack: Stack, browser: Browser) -> None:
    """The user views a finished game, drops its downloaded file (the same game id) and presses
    Back: the game from the gateway is shown again at its own URL, not the file's view."""
    api = stack.api()
    try:
        game_id, _ = await finished(api, "sentient")
        exported = (await api.request("GET", f"/v1/games/{game_id}/export")).text
        page, _seen = await browser.page()
        await page.goto(f"{stack.url}/games/{game_id}")
        await page.locator("section.game[data-source='live']").wait_for()
        await drop(page, exported, "game.jsonl")
        await page.locator("section.game[data-source='file']").wait_for()
        await at(page, "/open")
        await page.go_back()
        await page.locator(f"section.game[data-source='live'][data-game-id='{game_id}']").wait_for()
        await at(page, f"/games/{game_id}")
        await page.go_forward()
        await page.locator("section.game[data-source='file']").wait_for()
        await at(page, "/open")
    finally:
        await api.close()


async def test_a_catalog_that_failed_once_is_asked_again(stack: Stack, browser: Browser) -> None:
    """The names and values of a game's title fail to load once: the game says so; opened again,
    it is drawn (the failure was not kept)."""
    api = stack.api()
    try:
        game_id = await api.create("sentient", 2)
        page, _seen = await browser.page()
        failed: list[str] = []

        async def fail_once(route: Any) -> None:
            if failed:
                await route.continue_()
            else:
                failed.append(route.request.url)
                await route.fulfill(status=503, json={"title": "Unavailable"})

        await page.route(re.compile(r"/v1/catalog/sentient"), fail_once)
        await page.goto(f"{stack.url}/")
        await page.locator(f"tr[data-game-id='{game_id}'] a").click()
        await page.locator("main p.error[role='alert']").wait_for()
        assert failed
        await page.go_back()
        await page.locator(f"tr[data-game-id='{game_id}'] a").click()
        await board(page, 1)
    finally:
        await api.close()


async def test_a_later_lobby_page_refreshes_too(stack: Stack, browser: Browser) -> None:
    """A page after the first (the games after its cursor) is redrawn as its games change, and
    stays that page: a game created since does not push rows into it."""
    api = stack.api()
    try:
        target = await api.create("sentient", 2)
        await asyncio.sleep(0.01)  # a later millisecond: games created in the same one sort by id
        # Twenty newer games fill the first page (the lobby shows 20), so the target opens the second.
        newer = [await api.create("sentient", 2) for _ in range(20)]
        # A created game reaches the list once the projector has it: wait until the first page is
        # the twenty, or the second page would start elsewhere.
        first_page = [*reversed(newer)]
        deadline = time.monotonic() + 15
        while True:
            listed = (await api.request("GET", "/v1/games", params={"title": "sentient", "limit": 20})).json()
            ids = [g["game_id"] for g in listed["games"]]
            if sorted(ids) == sorted(first_page) or time.monotonic() > deadline:
                break
            await asyncio.sleep(0.05)
        assert sorted(ids) == sorted(first_page), ids
        page, _seen = await browser.page()
        await page.goto(stack.url + "/?title=sentient")
        await page.locator(f"tr[data-game-id='{newer[0]}']").wait_for()
        await page.get_by_role("button", name="Older →").click()
        row = page.locator(f"tr[data-game-id='{target}']")
        await row.wait_for()
        assert "cursor=" in page.url
        assert await page.locator("tbody tr").first.get_attribute("data-game-id") == target
        await api.join(target, 0, "zed")
        newest = await api.create("sentient", 2)
        await page.wait_for_function(
            "(id) => document.querySelector(`tr[data-game-id='${id}']`)?.innerText.includes('zed')",
            arg=target,
            timeout=15_000,
        )
        assert await page.locator("tbody tr").first.get_attribute("data-game-id") == target
        assert await page.locator(f"tr[data-game-id='{newest}']").count() == 0
        assert "cursor=" in page.url
        await page.get_by_role("button", name="← Newer").click()
        await page.locator(f"tr[data-game-id='{newest}']").wait_for()
    finally:
        await api.close()


async def test_a_fast_game_watched_live_to_its_end(stack: Stack, browser: Browser) -> None:
    """Bots play hundreds of events a second: the page keeps up, lands on the last version, and
    shows the result, the fairness badge and the download once the game is over."""
    api = stack.api()
    store = RedisEventStore(stack.run.client(), Keys(stack.settings.prefix))
    try:
        game_id = await api.create("mechanica", 3)
        seats = [await api.join(game_id, s, f"p{s}") for s in range(3)]
        page, _seen = await browser.page()
        await page.goto(f"{stack.url}/games/{game_id}")
        await page.locator(".badge[data-live='true']").wait_for()
        playing = [
            asyncio.ensure_future(play(api, seat, "mechanica", "random", over_ws=True, seed=seat.seat))
            for seat in seats
        ]
        await asyncio.sleep(0.2)
        await api.start(seats[0])
        await gather(*playing, timeout=180)
        last = len(await store.read(game_id))
        await board(page, last)
        await page.locator(".fairness[data-fair='true']").wait_for()
        await page.locator("[data-download]").wait_for()
        assert await page.locator(".badge[data-status='over']").count() == 1
        events = (await api.request("GET", f"/v1/games/{game_id}/events", params={"limit": 1000})).json()["events"]
        await page.wait_for_function(f"document.querySelectorAll('.event-list li').length === {len(events)}")
        await CHECKS["mechanica"](page, (await state_at(api, game_id, last))["view"])
    finally:
        await store.close()
        await api.close()


# The contrast ratio (WCAG 2) of every piece of HTML text against the first opaque background
# behind it; SVG text is drawn on the board's own fills, chosen with the same ratio in mind.
CONTRASTS = """() => {
  const rgb = (c) => (c.match(/[\\d.]+/g) || []).map(Number);
  const lum = ([r, g, b]) => {
    const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
  };
  const background = (el) => {
    for (; el; el = el.parentElement) {
      const c = rgb(getComputedStyle(el).backgroundColor);
      if (c.length === 3 || (c.length === 4 && c[3] > 0.9)) return c.slice(0, 3);
    }
    return [255, 255, 255];
  };
  const out = [];
  for (const el of document.querySelectorAll("body *")) {
    if (el instanceof SVGElement || el.closest("svg")) continue;
    const own = [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim());
    if (!own || !el.getClientRects().length) continue;
    const a = lum(rgb(getComputedStyle(el).color).slice(0, 3));
    const b = lum(background(el));
    out.push([el.tagName + "." + el.className, (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05)]);
  }
  return out;
}"""


async def test_text_is_readable(stack: Stack, browser: Browser) -> None:
    api = stack.api()
    try:
        game_id, seats = await finished(api, "sentient")
        refused = (await api.command(seats[0], {"type": "lifecycle.Resign"})).json()["command_id"]
        page, _seen = await browser.page()
        for path in ("/", f"/games/{game_id}", f"/games/{game_id}/audit/{refused}", "/open", "/fairness"):
            await page.goto(stack.url + path)
            await page.locator("main h1, main h2").first.wait_for()
            await page.wait_for_timeout(300)
            low = [(what, round(ratio, 2)) for what, ratio in await page.evaluate(CONTRASTS) if ratio < 4.5]
            assert not low, f"{path}: text below 4.5:1: {low[:5]}"
    finally:
        await api.close()


# In the page: draw every version of a game file with the page's own modules; the versions whose
# board could not be drawn, and the events that could not be put in words.
DRAW_ALL = """async (text) => {
  const { drawBoard } = await import("/static/js/boards/index.js");
  const { described, namer } = await import("/static/js/words.js");
  const post = async (url) => (await fetch(url, { method: "POST", body: text })).json();
  const opened = await post("/v1/files/open");
  const title = opened.header.game_type;
  const data = (await (await fetch(`/v1/catalog/${title}`)).json()).data;
  const ctx = { data, name: namer(title, data), players: opened.summary.players, title };
  const failed = [];
  for (let from = 1; from <= opened.version; from += 200) {
    const page = await post(`/v1/files/states?from_version=${from}&limit=200`);
    for (const st of page.states) {
      const events = opened.events.filter((e) => e.event.version <= st.version).map((e) => e.event);
      const el = drawBoard(title, st.view, { ...ctx, version: st.version, events });
      if (el.querySelector(".error")) failed.push(st.version);
    }
  }
  const unsaid = opened.events.filter((e) => described(e.event, ctx).fallback).map((e) => e.event.type);
  return { versions: opened.version, failed, unsaid: [...new Set(unsaid)] };
}"""


@pytest.mark.parametrize(
    ("title", "players"),
    [(t, None) for t in TITLES] + [("sentient", 4), ("prosperity", 4), ("mechanica", 1), ("artifacts", 4)],
)
async def test_every_version_of_a_game_is_drawn_and_every_event_said(
    no_redis: GatewayService, browser: Browser, title: str, players: int | None
) -> None:
    """The golden games, and seeded ones at the other ends of each title's player counts."""
    if players is None:
        (path,) = GOLDEN.glob(f"{title}-*p.jsonl")
        text = path.read_text()
    else:
        bots = [GREEDY[title](), *(RandomBot(seat) for seat in range(1, players))]
        hist = await record_game(title, bots, f"web-{title}-{players}", game_id=f"{title}-{players}p")
        text = (b"\n".join(history.export_lines(hist)) + b"\n").decode()
    page, _seen = await browser.page()
    await page.goto(no_redis.url + "/open")
    got = await page.evaluate(DRAW_ALL, text)
    assert got["versions"] > 200 and not got["failed"], got
    assert not got["unsaid"], f"events written from their fields only: {got['unsaid']}"

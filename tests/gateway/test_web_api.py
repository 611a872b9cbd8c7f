"""What the web page reads besides the games API: the catalog (each title's data file as JSON),
public states at consecutive versions, the fairness report, game files opened with nothing stored
(the same answers as for the game in Redis, and only public things), the page and its assets,
and all of that with Redis down but the parts that need it."""

from __future__ import annotations

import asyncio
import dataclasses
import importlib
import json
import tomllib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import msgspec
import pytest

from games import match as m
from games.catalog import GAMES, SPECS
from services import history
from services.config import Settings
from services.eventstore.keys import Keys
from services.eventstore.redis_store import RedisEventStore
from services.gateway.app import GatewayService
from services.gateway.folding import fold_into
from services.readmodel import public_state
from tests.gateway.conftest import OPEN, Bare, Stack
from tests.gateway.helpers import Api, Seat, gather, play

pytestmark = pytest.mark.redis
GOLDEN = Path(__file__).parent.parent / "golden" / "sentient-3p.jsonl"


async def finished(api: Api, title: str = "sentient") -> tuple[str, list[Seat]]:
    game_id = await api.create(title, 2)
    seats = [await api.join(game_id, s, f"p{s}") for s in range(2)]
    playing = [
        asyncio.ensure_future(play(api, seat, title, "random", over_ws=False, seed=s)) for s, seat in enumerate(seats)
    ]
    await asyncio.sleep(0.2)
    await api.start(seats[0])
    await gather(*playing)
    return game_id, seats


def holds(served: Any, written: Any) -> bool:
    """Does `served` say everything `written` says (defaults may be added to it)?"""
    if isinstance(written, dict):
        return isinstance(served, dict) and all(k in served and holds(served[k], v) for k, v in written.items())
    if isinstance(written, list):
        return isinstance(served, list) and len(served) == len(written) and all(map(holds, served, written))
    return bool(served == written)


def canonical(doc: Any) -> Any:
    return msgspec.json.decode(msgspec.json.encode(doc))


async def test_the_catalog_is_each_data_file_as_json(bare: Bare) -> None:
    async with httpx.AsyncClient(base_url=bare.url) as http:
        listed = (await http.get("/v1/catalog")).json()
        assert [t["title"] for t in listed] == list(GAMES)
        assert {t["name"] for t in listed} == {"Sentient", "Prosperity", "Mechanica", "Artifacts, Inc."}
        for title, rules in GAMES.items():
            r = await http.get(f"/v1/catalog/{title}")
            assert r.status_code == 200 and r.headers["content-type"].startswith("application/json")
            doc = r.json()
            assert doc["data_version"] == rules.data_version
            assert rules.data_version.startswith(doc["data"]["data_version"])  # Mechanica adds a digest
            module = importlib.import_module(f"games.{title}.components")
            raw = tomllib.loads(module.DATA_FILE.read_text())
            # Every value of the file is there as the file says it; defaults are filled in.
            assert holds(doc["data"], raw), title
        cards = (await http.get("/v1/catalog/sentient")).json()["data"]["cards"]
        assert len(cards) == 60 and all("vp" in c for c in cards)
        assert (await http.get("/v1/catalog/chess")).status_code == 404


async def test_a_game_played_with_earlier_data_is_drawn_from_that_data(
    settings: Settings, redis_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The build keeps an earlier Mechanica data file in which the first improvement has another name.
    from games.mechanica.components import DATA_FILE, load
    from games.mechanica.rules import MechanicaRules

    current = GAMES["mechanica"].data_version
    raw = tomllib.loads(DATA_FILE.read_text())
    first = raw["kinds"][0]["name"]
    text = DATA_FILE.read_text().replace('data_version = "mechanica-data-2"', 'data_version = "mechanica-data-0"')
    old = tmp_path / "mechanica-data-0.toml"
    old.write_text(text.replace(f'name = "{first}"', 'name = "Old Name"', 1))
    old_version = load(old).data_version
    spec = SPECS["mechanica"]
    monkeypatch.setitem(
        SPECS,
        "mechanica",
        dataclasses.replace(
            spec,
            earlier_data={old_version: str(old)},
            data_files=(*spec.data_files, str(old)),
            with_data=lambda path: MechanicaRules(load(path)),
        ),
    )
    gw = GatewayService(settings, redis_url, OPEN)
    await gw.start()
    try:
        async with httpx.AsyncClient(base_url=gw.url) as http:
            then = (await http.get("/v1/catalog/mechanica", params={"data_version": old_version})).json()
            now = (await http.get("/v1/catalog/mechanica")).json()
            unknown = (await http.get("/v1/catalog/mechanica", params={"data_version": "mechanica-data-9"})).json()
    finally:
        await gw.stop()
    assert then["data_version"] == old_version and then["data"]["kinds"][0]["name"] == "Old Name"
    assert now["data_version"] == current and now["data"]["kinds"][0]["name"] == first
    # Data this build does not keep: the current data, and the answer says so.
    assert unknown == now


async def test_states_and_fairness_of_a_game(stack: Stack) -> None:
    api = stack.api()
    store = RedisEventStore(stack.run.client(), Keys(stack.settings.prefix))
    try:
        running_id = await api.create("prosperity", 2)
        report = (await api.request("GET", f"/v1/games/{running_id}/fairness")).json()
        assert report == {**report, "over": False, "seed": None, "findings": []}

        game_id, _ = await finished(api)
        log = await store.read(game_id)
        last = len(log)
        got: list[dict[str, Any]] = []
        start = 1
        while start <= last:
            page = await api.request("GET", f"/v1/games/{game_id}/states", params={"from_version": start, "limit": 200})
            assert page.status_code == 200, page.text
            body = page.json()
            assert body["version"] == last and body["game_id"] == game_id
            got += body["states"]
            start += len(body["states"])
        assert [s["version"] for s in got] == list(range(1, last + 1))
        for version in (1, 2, last // 2, last):
            expected = public_state(fold_into(m.Match(game_id=game_id), log, upto=version))
            assert got[version - 1] == canonical({"version": version, **expected})
        assert "seed" not in got[last // 2] and got[-1]["seed"]
        for params, status in (({"from_version": last + 1}, 404), ({"limit": 201}, 400), ({"from_version": 0}, 404)):
            r = await api.request("GET", f"/v1/games/{game_id}/states", params=params)
            assert r.status_code == status, r.text
        assert (await api.request("GET", "/v1/games/nope/states")).status_code == 404

        report = (await api.request("GET", f"/v1/games/{game_id}/fairness")).json()
        verdict = history.verify(await history.load(store, game_id))
        agg = fold_into(m.Match(game_id=game_id), log)
        assert report["over"] and report["ok"] and report["seed_verified"] and verdict.ok
        assert report["seed"] == agg.seed and report["seed_commitment"] == agg.seed_commitment
        assert (report["events"], report["commands"]) == (verdict.events, verdict.commands)
        assert (await api.request("GET", f"/v1/games/{game_id}/fairness")).json() == report  # kept
    finally:
        await store.close()
        await api.close()


async def test_a_game_file_is_replayed_and_audited_as_the_game_in_redis(stack: Stack) -> None:
    api = stack.api()
    try:
        game_id, seats = await finished(api, "artifacts")
        refused = await api.command(seats[1], {"type": "artifacts.EndTurn"})
        assert refused.status_code == 409 and refused.json()["rule"] == "GAME-NOT-RUNNING"
        refused_id = refused.json()["command_id"]
        exported = (await api.request("GET", f"/v1/games/{game_id}/export")).content
        events = (await api.request("GET", f"/v1/games/{game_id}/events", params={"limit": 1000})).json()["events"]
        state = (await api.request("GET", f"/v1/games/{game_id}")).json()

        api.seen.clear()
        opened = await api.request("POST", "/v1/files/open", content=exported)
        assert opened.status_code == 200, opened.text
        doc = opened.json()
        # The public stream, rebuilt from the file: the same events, refusals and cursors.
        assert doc["events"] == events
        assert doc["summary"] == state["summary"] and doc["version"] == state["summary"]["version"]
        assert doc["header"]["game_id"] == game_id and doc["header"]["game_type"] == "artifacts"
        assert doc["fairness"] == (await api.request("GET", f"/v1/games/{game_id}/fairness")).json()
        assert doc["fairness"]["ok"] and doc["fairness"]["seed_verified"]

        for params in ({"from_version": 1, "limit": 60}, {"from_version": 150, "limit": 200}):
            from_file = await api.request("POST", "/v1/files/states", params=params, content=exported)
            from_redis = await api.request("GET", f"/v1/games/{game_id}/states", params=params)
            assert from_file.status_code == 200 and from_file.json() == from_redis.json()
        for params in ({"command_id": refused_id}, {"version": 20}):
            from_file = await api.request("POST", "/v1/files/audit", params=params, content=exported)
            from_redis = await api.request("GET", f"/v1/games/{game_id}/audit", params=params)
            assert from_file.status_code == 200 and from_file.json() == from_redis.json()
        audit = (
            await api.request("POST", "/v1/files/audit", params={"command_id": refused_id}, content=exported)
        ).json()
        assert audit["rule"]["id"] == "GAME-NOT-RUNNING" and audit["verdict"]["status"] == "rejected"

        # Nothing secret comes back: the file holds deck orders and token hashes, the answers not.
        private = [json.loads(line) for line in exported.splitlines()]
        shuffles = [
            e["event"]["payload"]["cards"]
            for e in private
            if e.get("event", {}).get("type") == "artifacts.DeckShuffled"
        ]
        hashes = [
            e["event"]["payload"]["token_hash"]
            for e in private
            if e.get("event", {}).get("type") == "lifecycle.SeatJoined"
        ]
        assert shuffles and all(len(s) > 2 for s in shuffles) and hashes
        for text in api.seen:
            assert not any(h in text for h in hashes)
            assert not any(json.dumps(order, separators=(",", ":")) in text for order in shuffles)

        for body, status in ((b"", 422), (b"not json\n", 422), (exported.splitlines()[0] + b"\n", 422)):
            r = await api.request("POST", "/v1/files/open", content=body)
            assert r.status_code == status and r.json()["type"].endswith("invalid-file"), r.text
        r = await api.request("POST", "/v1/files/states", params={"from_version": 10_000}, content=exported)
        assert r.status_code == 404
    finally:
        await api.close()


@pytest.fixture
async def tight(bare: Bare) -> AsyncIterator[GatewayService]:
    # Not per minute: see tests/gateway/test_limits.py's `limited` (a CI run let the fourth of
    # "3/minute" through when the minute turned between the third and the fourth).
    settings = msgspec.structs.replace(OPEN, max_file_bytes=4096, file_rate_limit="3/1000 days")
    gw = GatewayService(bare.settings, bare.redis_url, settings)
    await gw.start()
    yield gw
    await gw.stop()


async def test_game_files_are_limited_in_size_and_rate(tight: GatewayService) -> None:
    async with httpx.AsyncClient(base_url=tight.url) as http:
        big = await http.post("/v1/files/open", content=b"x" * 5000)
        assert big.status_code == 413 and big.json()["type"].endswith("body-too-large")
        codes = [(await http.post("/v1/files/open", content=b"{}\n")).status_code for _ in range(4)]
        assert codes == [422, 422, 422, 429], codes
        assert (await http.get("/v1/catalog")).status_code == 200  # the files' own limit only


async def test_the_page_and_its_assets(bare: Bare) -> None:
    async with httpx.AsyncClient(base_url=bare.url) as http:
        for path in ("/", "/games/g1", "/games/g1/audit/c1", "/open", "/fairness"):
            r = await http.get(path)
            assert r.status_code == 200 and r.headers["content-type"].startswith("text/html"), path
            assert "/static/js/main.js" in r.text
            assert "default-src 'self'" in r.headers["content-security-policy"]
        js = await http.get("/static/js/main.js")
        assert js.status_code == 200 and js.headers["content-type"].startswith("text/javascript")
        again = await http.get("/static/js/main.js", headers={"If-None-Match": js.headers["etag"]})
        assert again.status_code == 304
        assert (await http.get("/static/app.css")).headers["content-type"].startswith("text/css")
        assert (await http.get("/static/nope.js")).status_code == 404
        assert (await http.get("/static/../http_web.py")).status_code == 404
        # Every module the page imports is served (no CDN, nothing from elsewhere).
        for path in (
            "js/api.js",
            "js/game.js",
            "js/lobby.js",
            "js/words.js",
            "js/diff.js",
            "js/dom.js",
            "js/boards/index.js",
        ):
            assert (await http.get(f"/static/{path}")).status_code == 200, path
        assert "http" not in (await http.get("/")).text.replace("http-equiv", "").split("<body>")[0].lower()


@pytest.mark.standalone_only("points a gateway at a Redis address nothing listens on")
async def test_with_redis_down_the_page_still_opens_a_game_file(bare: Bare, monkeypatch: pytest.MonkeyPatch) -> None:
    exported = GOLDEN.read_bytes()
    monkeypatch.setenv("DICESTREAM_REDIS_CLUSTER", "0")  # nothing to ask whether it is a cluster
    down = GatewayService(
        bare.settings, "redis://127.0.0.1:1/0", msgspec.structs.replace(OPEN, rate_limit="100/second")
    )
    await down.start()
    try:
        async with httpx.AsyncClient(base_url=down.url, timeout=10) as http:
            assert (await http.get("/")).status_code == 200
            assert (await http.get("/static/js/game.js")).status_code == 200
            assert (await http.get("/v1/catalog/sentient")).status_code == 200
            opened = await http.post("/v1/files/open", content=exported)
            assert opened.status_code == 200 and opened.json()["fairness"]["ok"]
            states = await http.post("/v1/files/states", params={"from_version": 100}, content=exported)
            assert states.status_code == 200 and states.json()["states"][0]["version"] == 100
            # What needs Redis says so.
            assert (await http.get("/v1/games")).status_code == 503
            assert (await http.get("/readyz")).status_code == 503
    finally:
        await down.stop()


async def test_a_file_of_a_running_game_keeps_its_seed_and_deck_order(bare: Bare) -> None:
    """An admin's export of a game not over holds its seed and deck order: what the page is sent
    of it holds neither, and no fairness verdict (which could quote them)."""
    _, hist = history.parse_export(GOLDEN.read_bytes().splitlines())
    cut = history.History(
        game_id=hist.game_id,
        events=hist.events[:100],
        outcomes=[o for o in hist.outcomes if o.to_version <= 100],
    )
    body = b"\n".join(history.export_lines(cut)) + b"\n"
    private = [json.loads(line)["event"] for line in body.splitlines() if b'"event"' in line[:20]]
    seed = next(e["payload"]["seed"] for e in private if e["type"] == "lifecycle.GameCreated")
    orders = [
        json.dumps(e["payload"]["cards"], separators=(",", ":"))
        for e in private
        if e["type"] == "sentient.DeckShuffled"
    ]
    assert seed and orders and all(len(o) > 100 for o in orders)
    async with httpx.AsyncClient(base_url=bare.url) as http:
        answers = [await http.post("/v1/files/open", content=body)]
        assert answers[0].json()["fairness"] == {**answers[0].json()["fairness"], "over": False, "seed": None}
        answers.append(await http.post("/v1/files/states", params={"from_version": 1, "limit": 100}, content=body))
        answers.append(await http.post("/v1/files/audit", params={"version": 50}, content=body))
        for r in answers:
            assert r.status_code == 200, r.text
            assert seed not in r.text and not any(o in r.text for o in orders)


async def test_the_lobby_rates_players_by_their_finished_games(stack: Stack) -> None:
    from services import ratings

    api = stack.api()
    try:
        await finished(api)
        await finished(api)
        for _ in range(100):
            listed = (await api.request("GET", "/v1/games", params={"title": "sentient", "status": "over"})).json()
            if listed["total"] >= 2:
                break
            await asyncio.sleep(0.1)
        board = (await api.request("GET", "/v1/ratings", params={"title": "sentient"})).json()
        other = (await api.request("GET", "/v1/ratings", params={"title": "mechanica"})).json()
    finally:
        await api.close()
    games = [
        ratings.Finished(seats=g["players"], scores=g["scores"], winners=g["winners"])
        for g in sorted(listed["games"], key=lambda g: (g["created_at_ms"], g["game_id"]))
    ]
    expected = ratings.rate(games)
    assert board["games"] == len(games) == listed["total"]
    assert {r["name"]: (r["games"], r["wins"], r["rating"]) for r in board["ratings"]} == {
        n: (r.games, r.wins, r.rating) for n, r in expected.items()
    }
    assert [r["rating"] for r in board["ratings"]] == sorted((r["rating"] for r in board["ratings"]), reverse=True)
    assert {r["title"] for r in board["ratings"]} == {"sentient"} and other == {"ratings": [], "games": 0}

"""Seat tokens and API keys: every wrong credential is refused by the gateway itself, so no
command reaches the game (its intake and audit do not grow)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from websockets.exceptions import ConnectionClosed

from games.catalog import GAMES
from services.eventstore.keys import shard_of
from tests.gateway.conftest import Stack
from tests.gateway.helpers import Api, Seat
from tests.platform.helpers import fields_of

pytestmark = pytest.mark.redis


async def lengths(stack: Stack, game_id: str) -> tuple[int, int, int]:
    r = stack.run.client()
    keys = stack.gateway.deps.keys
    out = (
        int(await r.xlen(keys.intake(shard_of(game_id, stack.settings.shards)))),
        int(await r.xlen(keys.audit(game_id))),
        int(await r.xlen(keys.public(game_id))),
    )
    await r.aclose()
    return out


async def socket_refusal(api: Api, path: str, headers: dict[str, str], first: str | None = None) -> tuple[Any, int]:
    """The problem a seat socket sends before closing, and its close code."""
    problem: Any = None
    ws = await api.socket(path, headers)
    try:
        if first is not None:
            await ws.send(first)
        while True:
            problem = json.loads(await ws.recv())
    except ConnectionClosed:
        pass
    assert ws.close_code is not None
    return problem, ws.close_code


async def test_wrong_seat_tokens_are_refused_and_reach_nothing(stack: Stack) -> None:
    api = stack.api()
    try:
        g1 = await api.create("sentient", 2)
        g2 = await api.create("sentient", 2)
        mine = await api.join(g1, 0, "alice")
        other_seat = await api.join(g1, 1, "bob")
        other_game = await api.join(g2, 0, "carol")
        await api.start(mine)
        view = await api.request("GET", f"/v1/games/{g1}/seats/0", headers=api.bearer(mine.token))
        assert view.status_code == 200 and view.json()["status"] == "running"
        move = {"type": "sentient.Pass", "expected_version": view.json()["version"]}
        before = await lengths(stack, g1)

        cases: list[tuple[dict[str, str], int, str]] = [
            ({}, 401, "token-required"),
            ({"Authorization": "Basic YWxpY2U6eA=="}, 401, "token-required"),
            ({"Authorization": "Bearer"}, 401, "token-required"),
            (api.bearer("0" * 64), 403, "wrong-token"),
            (api.bearer(other_seat.token), 403, "wrong-token"),  # seat 1's token for seat 0
            (api.bearer(other_game.token), 403, "wrong-token"),  # another game's seat 0
        ]
        for headers, status, slug in cases:
            for method, path, body in (
                ("POST", f"/v1/games/{g1}/seats/0/commands", move),
                ("GET", f"/v1/games/{g1}/seats/0", None),
            ):
                r = await api.request(method, path, headers=headers, json=body)
                assert r.status_code == status, (headers, path, r.text)
                assert r.headers["content-type"].startswith("application/problem+json")
                assert r.json()["type"] == f"urn:dicestream:problem:{slug}"
                if status == 401:
                    assert r.headers["www-authenticate"].startswith("Bearer")
            first = None if "Authorization" in headers else "{}"
            problem, code = await socket_refusal(api, f"/v1/games/{g1}/seats/0/ws", headers, first)
            assert problem["type"] == "problem" and problem["problem"]["status"] == status
            assert code == 4000 + status
        # A browser sends the token as a first message instead: a wrong one is refused too.
        problem, code = await socket_refusal(
            api, f"/v1/games/{g1}/seats/0/ws", {}, json.dumps({"type": "auth", "token": other_seat.token})
        )
        assert code == 4403 and problem["problem"]["type"].endswith("wrong-token")
        # Unknown games and seats are 404, whatever the token.
        for path in ("/v1/games/nope/seats/0", f"/v1/games/{g1}/seats/7", "/v1/games/bad%7Bid%7D/seats/0"):
            r = await api.request("GET", path, headers=api.bearer(mine.token))
            assert r.status_code == 404, r.text

        assert await lengths(stack, g1) == before, "a refused credential reached the intake or the game"
        acting = mine if view.json()["to_act"] == [0] else other_seat
        turn = (
            await api.request("GET", f"/v1/games/{g1}/seats/{acting.seat}", headers=api.bearer(acting.token))
        ).json()
        action = turn["legal_actions"][0]
        # A bot valuing cards reads them from the data the game was created under.
        assert turn["data_version"] == GAMES["sentient"].data_version
        ok = await api.command(acting, {**action, "expected_version": turn["version"]})
        assert ok.status_code == 200, ok.text
        assert (await lengths(stack, g1))[0] == before[0] + 1
    finally:
        await api.close()


async def test_api_keys_and_scopes(stack: Stack) -> None:
    keys = stack.gateway.deps.api_keys
    bots_only = await keys.add("bots-only", ("bots",))
    creator = await keys.add("creator", ("create",))
    raw = fields_of(await stack.run.client().hgetall(keys.key))
    assert raw and all(bots_only.encode() not in k + v for k, v in raw.items()), "a key is stored in clear"
    anonymous, wrong, bots, create = (
        Api(stack.url),
        Api(stack.url, "dsk_nope"),
        Api(stack.url, bots_only),
        Api(stack.url, creator),
    )
    body = {"game_type": "sentient", "num_players": 2}
    try:
        for api, status, slug in (
            (anonymous, 401, "api-key-required"),
            (wrong, 403, "api-key-refused"),
            (bots, 403, "scope-missing"),
        ):
            r = await api.request("POST", "/v1/games", json=body, headers=api.key() if api.api_key else {})
            assert (r.status_code, r.json()["type"]) == (status, f"urn:dicestream:problem:{slug}"), r.text
        game_id = await create.create("sentient", 2)
        r = await create.request(
            "POST", f"/v1/games/{game_id}/seats/1/bot", json={"kind": "random"}, headers=create.key()
        )
        assert r.status_code == 403 and r.json()["type"].endswith("scope-missing")
        r = await bots.request("POST", f"/v1/games/{game_id}/seats/1/bot", json={"kind": "random"}, headers=bots.key())
        assert r.status_code == 202, r.text
        # A running game's export holds its secrets: only an admin key gets it.
        seat: Seat = await create.join(game_id, 0, "me")
        for _ in range(200):  # the bot runner joins seat 1
            state = await create.request("GET", f"/v1/games/{game_id}", params={"min_version": 3})
            if state.json()["summary"]["players"][1]:
                break
            await asyncio.sleep(0.05)
        await create.start(seat)
        for api, status in ((anonymous, 403), (create, 403), (stack.api(), 200)):
            r = await api.request("GET", f"/v1/games/{game_id}/export", headers=api.key() if api.api_key else {})
            assert r.status_code == status, r.text
        assert await keys.revoke("creator") == 1
        keys._cache.clear()
        r = await create.request("POST", "/v1/games", json=body, headers=create.key())
        assert r.status_code == 403
    finally:
        for api in (anonymous, wrong, bots, create):
            await api.close()

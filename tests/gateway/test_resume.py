"""Live events: a subscriber that drops and resumes from its cursor sees every public event
exactly once, in order, over WebSocket and over SSE; a seat socket starts at the latest request."""

from __future__ import annotations

import asyncio
import json
import random
from typing import Any

import httpx
import pytest
from websockets.exceptions import ConnectionClosed

from contracts import codec
from games.catalog import GAMES
from services.gateway.streams import entry_key
from services.redis_conn import connect
from tests.gateway.conftest import Bare, Stack
from tests.gateway.helpers import Api, gather, play
from tests.platform.helpers import entries_of

pytestmark = pytest.mark.redis


def whole(game_id: str, entry_id: bytes, data: bytes) -> Any:
    """A public stream entry as the gateway serves it: the whole envelope."""
    return json.loads(codec.encode(codec.decode_event(data, game_id, codec.entry_version(entry_id))))


async def websocket_spectator(api: Api, game_id: str, rng: random.Random) -> tuple[list[tuple[str, Any]], int]:
    """Reconnects after a random number of messages (closing cleanly or dropping the TCP
    connection) until the seed is revealed; every event it got, and how many connections."""
    got: list[tuple[str, Any]] = []
    connections = 0
    while not got or got[-1][1]["type"] != "lifecycle.SeedRevealed":
        query = f"?after={got[-1][0]}" if got else ""
        connections += 1
        ws = await api.socket(f"/v1/games/{game_id}/events/ws{query}")
        try:
            for _ in range(rng.randint(1, 12)):
                msg = json.loads(await ws.recv())
                if msg["type"] == "event":
                    got.append((msg["cursor"], msg["event"]))
                    if msg["event"]["type"] == "lifecycle.SeedRevealed":
                        break
        except ConnectionClosed:
            pass
        if rng.random() < 0.5:
            ws.transport.abort()  # no closing handshake: the server must notice on its own
        else:
            await ws.close()
    return got, connections


async def sse_spectator(base: str, game_id: str, rng: random.Random) -> tuple[list[tuple[str, Any]], int]:
    got: list[tuple[str, Any]] = []
    connections = 0
    async with httpx.AsyncClient(base_url=base, timeout=30) as http:
        while not got or got[-1][1]["type"] != "lifecycle.SeedRevealed":
            headers = {"Last-Event-ID": got[-1][0]} if got else {}
            connections += 1
            budget = rng.randint(1, 12)
            async with http.stream("GET", f"/v1/games/{game_id}/events/sse", headers=headers) as r:
                assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
                event = data = None
                async for line in r.aiter_lines():
                    if line.startswith("event:"):
                        event = line.split(":", 1)[1].strip()
                    elif line.startswith("data:"):
                        data = json.loads(line.split(":", 1)[1])
                    elif line == "" and event == "event" and data is not None:
                        got.append((data["cursor"], data["event"]))
                        budget -= 1
                        if budget == 0 or data["event"]["type"] == "lifecycle.SeedRevealed":
                            break
                        event = data = None
    return got, connections


async def test_dropping_subscribers_resume_from_their_cursor_exactly_once(stack: Stack) -> None:
    human = stack.api()
    try:
        game_id = await human.create("sentient", 2)
        seat = await human.join(game_id, 0, "human")
        r = await human.request(
            "POST", f"/v1/games/{game_id}/seats/1/bot", json={"kind": "greedy"}, headers=human.key()
        )
        assert r.status_code == 202, r.text
        for _ in range(200):  # the bot runner takes the seat
            state = (await human.request("GET", f"/v1/games/{game_id}", params={"min_version": 3})).json()
            if state["summary"]["players"][1]:
                break
            await asyncio.sleep(0.05)
        assert state["summary"]["players"] == ["human", "greedy"]
        playing = asyncio.ensure_future(play(human, seat, "sentient", "random", over_ws=False, delay=0.02))
        watchers = [
            asyncio.ensure_future(websocket_spectator(human, game_id, random.Random(1))),
            asyncio.ensure_future(websocket_spectator(human, game_id, random.Random(2))),
            asyncio.ensure_future(sse_spectator(stack.url, game_id, random.Random(3))),
        ]
        await asyncio.sleep(0.3)
        # A seat socket opened without a cursor starts at the seat's latest request.
        await human.start(seat)
        await gather(playing, *watchers, timeout=120)

        client = stack.run.client()
        entries = entries_of(await client.xrange(stack.gateway.deps.keys.public(game_id)))
        await client.aclose()
        expected = [(i.decode(), whole(game_id, i, f[b"data"])) for i, f in entries]
        assert expected[-1][1]["type"] == "lifecycle.SeedRevealed"
        for task in watchers:
            got, connections = task.result()
            assert connections > 3, "the spectator should have reconnected several times"
            assert [c for c, _ in got] == [c for c, _ in expected], "a gap or a repeat after a reconnect"
            assert got == expected
    finally:
        await human.close()


async def test_a_seat_socket_starts_at_the_latest_request_and_resumes_after_a_cursor(stack: Stack) -> None:
    api = stack.api()
    try:
        game_id = await api.create("sentient", 2)
        seats = [await api.join(game_id, s, f"p{s}") for s in range(2)]
        await api.start(seats[0])
        state = (await api.request("GET", f"/v1/games/{game_id}", params={"min_version": 4})).json()
        acting = seats[state["summary"]["to_act"][0]]
        path = f"/v1/games/{game_id}/seats/{acting.seat}/ws"
        async with api.socket(path, api.bearer(acting.token)) as ws:
            first = json.loads(await ws.recv())
            assert first["type"] == "turn" and first["seat"] == acting.seat and first["legal_actions"]
            assert first["data_version"] == GAMES["sentient"].data_version
            assert json.loads(await ws.recv())["type"] == "live"
            action = first["legal_actions"][0]
            body = {**action, "expected_version": first["version"]}
            await ws.send(json.dumps({"type": "command", "ref": "m1", "command": body}))
            outcome = json.loads(await ws.recv())
            while outcome["type"] not in ("outcome", "problem"):  # our next turn request may come first
                outcome = json.loads(await ws.recv())
            assert outcome["type"] == "outcome" and outcome["ref"] == "m1", outcome
            assert outcome["result"]["outcome"]["status"] == "accepted"
        # From the first request's cursor on: only what came after it.
        async with api.socket(f"{path}?after={first['cursor']}", api.bearer(acting.token)) as ws:
            later = json.loads(await ws.recv())
            assert later["type"] == "live" or entry_key(later["cursor"]) > entry_key(first["cursor"])
    finally:
        await api.close()


async def test_resume_while_the_stream_grows_with_the_gateway_alone(bare: Bare) -> None:
    """The same, with entries appended straight to a public stream (no service): also on a
    cluster, where each followed stream is read on its own node."""
    r = connect(bare.redis_url)
    keys = bare.gateway.deps.keys
    game_id = "g-resume"
    await r.xadd(keys.log(game_id), {"data": b"{}"}, id="1-0")

    async def write() -> None:
        for v in range(1, 201):
            kind = "lifecycle.SeedRevealed" if v == 200 else "sentient.Something"
            event = {"type": kind, "schema_version": 3, "command_id": f"c{v}", "payload": {}}
            await r.xadd(keys.public(game_id), {"data": json.dumps(event)}, id=f"{v}-0")
            if v % 3 == 0:  # a refusal between two versions
                await r.xadd(keys.public(game_id), {"data": json.dumps({**event, "type": "x.Rejected"})}, id=f"{v}-1")
            await asyncio.sleep(0.002)

    api = Api(bare.url)
    try:
        writer = asyncio.ensure_future(write())
        watchers = [asyncio.ensure_future(websocket_spectator(api, game_id, random.Random(k))) for k in range(3)]
        await gather(writer, *watchers, timeout=60)
        expected = [
            (i.decode(), whole(game_id, i, f[b"data"])) for i, f in entries_of(await r.xrange(keys.public(game_id)))
        ]
        for task in watchers:
            got, connections = task.result()
            assert connections > 5 and got == expected
        # A connection dropped without a closing handshake is noticed by the server on its own
        # (its next read or write fails), a moment after the spectator has moved on.
        hub = bare.gateway.deps.hub
        deadline = asyncio.get_running_loop().time() + 10
        while hub.readers and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.05)
        assert not hub.readers, f"a reader outlived its subscribers: {list(hub.readers)}"
    finally:
        await api.close()
        await r.aclose()

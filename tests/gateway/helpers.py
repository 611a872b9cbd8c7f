"""Clients of the gateway that use nothing but HTTP and WebSocket, as a bot author's would."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import msgspec
from websockets.asyncio.client import ClientConnection, connect

from contracts.protocol import Action
from services.bots import make_bot


@dataclass
class Seat:
    game_id: str
    seat: int
    token: str


@dataclass
class Played:
    scores: list[int]
    winners: list[int]
    moves: int = 0
    stale: int = 0
    # Every text the gateway sent this player (checked for secrets).
    seen: list[str] = field(default_factory=list)


class Api:
    """One client: an HTTP connection pool to the gateway, and WebSockets when asked."""

    def __init__(self, base: str, api_key: str | None = None) -> None:
        self.base = base
        self.ws_base = "ws" + base.removeprefix("http")
        self.http = httpx.AsyncClient(base_url=base, timeout=30)
        self.api_key = api_key
        self.seen: list[str] = []

    async def close(self) -> None:
        await self.http.aclose()

    async def request(self, method: str, path: str, **kw: Any) -> httpx.Response:
        r = await self.http.request(method, path, **kw)
        self.seen.append(r.text)
        return r

    def key(self) -> dict[str, str]:
        return {"X-API-Key": self.api_key or ""}

    @staticmethod
    def bearer(token: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {token}"}

    async def create(self, game_type: str, players: int, **extra: Any) -> str:
        r = await self.request(
            "POST", "/v1/games", json={"game_type": game_type, "num_players": players, **extra}, headers=self.key()
        )
        assert r.status_code == 201, r.text
        return str(r.json()["game_id"])

    async def join(self, game_id: str, seat: int, name: str, kind: str = "bot") -> Seat:
        r = await self.request("POST", f"/v1/games/{game_id}/seats/{seat}/join", json={"name": name, "kind": kind})
        assert r.status_code == 201, r.text
        return Seat(game_id, seat, r.json()["token"])

    async def command(self, seat: Seat, body: dict[str, Any]) -> httpx.Response:
        return await self.request(
            "POST", f"/v1/games/{seat.game_id}/seats/{seat.seat}/commands", json=body, headers=self.bearer(seat.token)
        )

    async def start(self, seat: Seat) -> None:
        r = await self.command(seat, {"type": "lifecycle.StartGame"})
        assert r.status_code == 200, r.text

    def socket(self, path: str, headers: dict[str, str] | None = None) -> Any:
        return connect(self.ws_base + path, additional_headers=headers or {}, max_size=2**22)


async def messages(ws: ClientConnection, seen: list[str]) -> AsyncIterator[dict[str, Any]]:
    while True:
        text = await ws.recv()
        assert isinstance(text, str)
        seen.append(text)
        yield json.loads(text)


async def play(
    api: Api, seat: Seat, game_type: str, kind: str, over_ws: bool, seed: int = 0, delay: float = 0.0
) -> Played:
    """Play `seat` to the end with a reference bot choosing among the legal actions it is sent:
    turn requests from the seat's WebSocket; moves over HTTP, or over the same socket."""
    bot = make_bot(kind, game_type, seed)
    played = Played(scores=[], winners=[])
    answered = -1
    async with api.socket(f"/v1/games/{seat.game_id}/seats/{seat.seat}/ws", api.bearer(seat.token)) as ws:
        stream = messages(ws, played.seen)
        async for msg in stream:
            if msg["type"] == "over":
                played.scores, played.winners = msg["scores"], msg["winners"]
                return played
            if msg["type"] != "turn" or msg["version"] <= answered:
                continue
            answered = msg["version"]
            if delay:
                await asyncio.sleep(delay)
            legal = [msgspec.convert(a, Action) for a in msg["legal_actions"]]
            choice = bot.choose_action(msg["view"], legal, seat.seat, msg.get("data_version", ""))
            body = {"type": choice.type, "payload": choice.payload, "expected_version": msg["version"]}
            if over_ws:
                await ws.send(json.dumps({"type": "command", "ref": str(answered), "command": body}))
                continue  # the outcome (or problem) arrives among the next messages
            r = await api.command(seat, body)
            played.seen.append(r.text)
            if r.status_code == 200:
                played.moves += 1
            else:
                assert r.status_code == 409 and r.json()["rule"] == "GAME-STALE", r.text
                played.stale += 1
        raise AssertionError("socket closed before the game ended")


async def play_ws_outcomes(played: Played) -> None:
    """Count the WebSocket player's outcomes from what it saw."""
    for text in played.seen:
        msg = json.loads(text)
        if msg.get("type") == "outcome":
            played.moves += 1
        elif msg.get("type") == "problem":
            assert msg["problem"]["rule"] == "GAME-STALE", msg
            played.stale += 1


async def gather(*aws: Any, timeout: float = 120.0) -> list[Any]:
    return list(await asyncio.wait_for(asyncio.gather(*aws), timeout))

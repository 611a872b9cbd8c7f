"""What the gateway answers never holds a secret: no seed before the game is over, no deck order,
no seat token hash, no token but the caller's own (the export of a finished game excepted: it is
the private log, by design, once nothing in it is secret any more)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import msgspec
import pytest

from contracts import codec
from contracts import lifecycle as lc
from contracts.sentient import DeckShuffled
from services.eventstore.keys import Keys
from services.eventstore.redis_store import RedisEventStore
from tests.gateway.conftest import Stack
from tests.gateway.helpers import Api, gather, play

pytestmark = pytest.mark.redis


def deck_shuffles(text: str) -> list[dict[str, Any]]:
    """The payloads of every DeckShuffled event in a JSON text."""
    try:
        doc = json.loads(text)
    except ValueError:
        return []
    found: list[dict[str, Any]] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if node.get("type") == "sentient.DeckShuffled" and isinstance(node.get("payload"), dict):
                found.append(node["payload"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(doc)
    return found


async def spectate(api: Api, game_id: str, own_token: str, seat: int, texts: list[str]) -> None:
    """Read everything a spectator (and one seat) can until the game is over."""
    async with api.socket(f"/v1/games/{game_id}/events/ws") as ws:
        cursor = None
        for round_ in range(400):
            for method, path, params in (
                ("GET", f"/v1/games/{game_id}", {}),
                ("GET", f"/v1/games/{game_id}/events", {"limit": 50}),
                ("GET", "/v1/games", {"title": "sentient"}),
                ("GET", f"/v1/games/{game_id}", {"version": max(1, round_)}),
                ("GET", f"/v1/games/{game_id}/audit", {"version": max(1, round_)}),
            ):
                r = await api.request(method, path, params=params)
                texts.append(r.text)
            r = await api.request("GET", f"/v1/games/{game_id}/seats/{seat}", headers=api.bearer(own_token))
            texts.append(r.text)
            while True:
                try:
                    message = await asyncio.wait_for(ws.recv(), 0.01)
                except TimeoutError:
                    break
                texts.append(str(message))
                event = json.loads(message)
                cursor = event.get("cursor", cursor)
                if event.get("event", {}).get("type") == "lifecycle.SeedRevealed":
                    return
            await asyncio.sleep(0.01)
    raise AssertionError("the game did not end")


async def test_no_response_holds_a_secret(stack: Stack) -> None:
    alice, bob, carol = stack.api(), stack.api(key=""), stack.api(key="")
    try:
        game_id = await alice.create("sentient", 2)
        seat_a = await alice.join(game_id, 0, "alice")
        seat_b = await bob.join(game_id, 1, "bob")
        texts: list[str] = []
        watching = asyncio.ensure_future(spectate(alice, game_id, seat_a.token, 0, texts))
        playing = [
            asyncio.ensure_future(play(alice, seat_a, "sentient", "greedy", over_ws=False, delay=0.01)),
            asyncio.ensure_future(play(bob, seat_b, "sentient", "random", over_ws=True, delay=0.01)),
        ]
        await asyncio.sleep(0.2)
        await alice.start(seat_a)
        # Carol fetches what anyone may, while the game runs: a running game's export is refused.
        r = await carol.request("GET", f"/v1/games/{game_id}/export")
        assert r.status_code == 403 and r.json()["type"].endswith("game-not-over")
        played_a, played_b, _ = await gather(*playing, watching, timeout=120)

        store = RedisEventStore(stack.run.client(), Keys(stack.settings.prefix))
        private = [codec.decode_event(d, game_id, v) for v, d in await store.read(game_id)]
        await store.close()
        events = [codec.event_payload(e) for e in private]
        seed = next(e.seed for e in events if isinstance(e, lc.GameCreated))
        hashes = [e.token_hash for e in events if isinstance(e, lc.SeatJoined)]
        decks = [msgspec.json.encode(e.cards).decode() for e in events if isinstance(e, DeckShuffled) and e.cards]
        assert seed and len(hashes) == 2 and decks

        everything = {
            "alice": alice.seen + played_a.seen,
            "bob": bob.seen + played_b.seen,
            "carol": carol.seen,
            "spectator": texts,
        }
        others = {"alice": seat_b.token, "bob": seat_a.token, "carol": None, "spectator": seat_b.token}
        for who, seen in everything.items():
            assert seen, who
            for text in seen:
                for secret in (*hashes, *decks):
                    assert secret not in text, f"{who} was sent a secret: {text[:300]}"
                if others[who]:
                    assert others[who] not in text, f"{who} was sent another seat's token"
                if who == "carol":
                    assert seat_a.token not in text and seat_b.token not in text
                if seed in text:
                    # Only once the game is over (the seed is revealed with its end).
                    assert '"over"' in text or "SeedRevealed" in text, f"{who} saw the seed early: {text[:300]}"
                for shuffle in deck_shuffles(text):
                    assert shuffle.get("cards") is None, f"{who} was sent a deck order"
        assert any('"lifecycle.SeatJoined"' in t for t in texts) and any(deck_shuffles(t) for t in texts)
        # Once over, the export is anyone's: the file `dicestream export` writes.
        r = await carol.request("GET", f"/v1/games/{game_id}/export")
        assert r.status_code == 200 and r.headers["content-type"].startswith("application/x-ndjson")
    finally:
        for api in (alice, bob, carol):
            await api.close()

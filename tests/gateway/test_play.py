"""Two clients that use only HTTP and WebSocket play a whole game of each title through the
gateway; the scores they are told match the log."""

from __future__ import annotations

import asyncio

import pytest

from contracts.outcome import decode_outcome
from games import match as m
from services.eventstore.keys import Keys
from services.eventstore.redis_store import RedisEventStore
from services.gateway.folding import fold_into
from tests.gateway.conftest import Stack
from tests.gateway.helpers import gather, play, play_ws_outcomes

pytestmark = pytest.mark.redis


@pytest.mark.parametrize("title", ["sentient", "prosperity", "mechanica", "artifacts"])
async def test_two_clients_play_a_whole_game_over_http_and_websocket(stack: Stack, title: str) -> None:
    alice, bob = stack.api(), stack.api(key="")  # bob has no API key: joining and playing need none
    try:
        game_id = await alice.create(title, 2)
        seat_a = await alice.join(game_id, 0, "alice")
        seat_b = await bob.join(game_id, 1, "bob")
        # Alice moves over HTTP, Bob over his seat's WebSocket; both read turn requests there.
        playing = [
            asyncio.ensure_future(play(alice, seat_a, title, "greedy", over_ws=False)),
            asyncio.ensure_future(play(bob, seat_b, title, "random", over_ws=True, seed=1)),
        ]
        await asyncio.sleep(0.2)  # both sockets open (they would get the latest request anyway)
        await alice.start(seat_a)
        played_a, played_b = await gather(*playing, timeout=180)
        await play_ws_outcomes(played_b)

        store = RedisEventStore(stack.run.client(), Keys(stack.settings.prefix))
        agg = fold_into(m.Match(game_id=game_id), await store.read(game_id))
        assert agg.status == m.OVER and agg.result is not None
        assert played_a.scores == played_b.scores == agg.result.scores
        assert played_a.winners == agg.result.winners
        assert played_a.moves > 0 and played_b.moves > 0

        view = (await alice.request("GET", f"/v1/games/{game_id}", params={"min_version": agg.version})).json()
        assert view["summary"]["status"] == "over" and view["summary"]["scores"] == agg.result.scores
        assert view["seed"] == agg.seed  # revealed once the game is over
        # Every command either client sent was accepted, or refused only as stale (a later request).
        audit = [decode_outcome(o, game_id) for o in await store.audit(game_id)]
        assert {o.rule for o in audit if o.status != "accepted"} <= {"GAME-STALE"}
        assert sum(o.status == "accepted" for o in audit if o.seat in (0, 1)) >= played_a.moves + played_b.moves
        await store.close()
    finally:
        await alice.close()
        await bob.close()

"""Mechanica on the platform: solo and multi-player games through the real referee engine."""

from __future__ import annotations

from contracts import lifecycle as lc
from games import match as m
from games.catalog import rules_for
from games.mechanica import RULES
from games.mechanica.bots import GreedyBot
from services import history as h
from services.selfplay import record_game


def test_registered_for_one_to_four_players() -> None:
    assert rules_for("mechanica") is RULES
    assert (RULES.min_players, RULES.max_players) == (1, 4)
    game = m.Match(game_id="g")
    out = m.decide(game, m.Request(payload=lc.CreateGame(game_type="mechanica", num_players=1), new_seed="s"))
    assert isinstance(out, list) and isinstance(out[0], lc.GameCreated)
    refused = m.decide(game, m.Request(payload=lc.CreateGame(game_type="mechanica", num_players=5), new_seed="s"))
    assert not isinstance(refused, list) and refused.rule == "GAME-PLAYERS"


async def test_a_solo_game_through_the_referee_verifies() -> None:
    hist = await record_game("mechanica", [GreedyBot(RULES.data)], "solo-seed", game_id="mechanica-solo")
    verdict = h.verify(hist)
    assert verdict.ok, verdict.findings
    _, final = h.replay(hist)
    assert final.status == m.OVER and final.result is not None and final.result.winners == [0]

"""Artifacts, Inc. on the platform: registration, a game through the real referee engine, and a
game whose seats all resign (the referee's default actions must still reach the end)."""

from __future__ import annotations

from contracts import artifacts as c
from contracts import lifecycle as lc
from games import match as m
from games.artifacts import RULES
from games.artifacts.bots import GreedyBot
from games.bots import RandomBot
from games.catalog import rules_for
from services import history as h
from services.bots import make_bot
from services.selfplay import record_game


def _request(payload: object, seat: int | None = None, **kw: object) -> m.Request:
    return m.Request(payload=payload, seat=seat, token_hash=None if seat is None else f"h{seat}", **kw)  # type: ignore[arg-type]


def test_registered_for_two_to_four_players_with_a_greedy_bot() -> None:
    assert rules_for("artifacts") is RULES
    assert (RULES.min_players, RULES.max_players) == (2, 4)
    assert RULES.rules_version == "artifacts-rules-1" and RULES.data_version == "artifacts-data-4"
    game = m.Match(game_id="g")
    refused = m.decide(game, m.Request(payload=lc.CreateGame(game_type="artifacts", num_players=5), new_seed="s"))
    assert not isinstance(refused, list) and refused.rule == "GAME-PLAYERS"
    assert isinstance(make_bot("greedy", "artifacts").bot, GreedyBot)


async def test_a_game_through_the_referee_verifies() -> None:
    bots = [GreedyBot(RULES.data), RandomBot(1)]
    hist = await record_game("artifacts", bots, "platform-seed", game_id="artifacts-platform")
    verdict = h.verify(hist)
    assert verdict.ok, verdict.findings
    _, final = h.replay(hist)
    assert final.status == m.OVER and final.result is not None and final.result.winners == [0]


def test_a_game_whose_seats_all_resign_still_ends() -> None:
    agg = m.Match(game_id="idle")
    steps = [
        m.Request(payload=lc.CreateGame(game_type="artifacts", num_players=3), new_seed="seed"),
        *(m.Request(payload=lc.JoinSeat(seat=i, name=f"p{i}"), new_token_hash=f"h{i}") for i in range(3)),
        _request(lc.StartGame(), 0),
        *(_request(lc.Resign(), i) for i in range(3)),
    ]
    for req in steps:
        out = m.decide(agg, req, apply=True)
        assert isinstance(out, list), out
    assert agg.status == m.OVER and agg.result is not None
    assert agg.game.round == RULES.data.table.max_rounds
    assert isinstance(out, list) and isinstance(out[-3], c.GameFinished)

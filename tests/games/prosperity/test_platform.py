"""Prosperity on the platform's match aggregate: seats other than the active one really decide."""

from __future__ import annotations

import random

import msgspec

from contracts import lifecycle as lc
from contracts import prosperity as c
from games import match as m
from games.base import Rejected
from games.prosperity import RULES


def _started(n: int = 2) -> m.Match:
    agg = m.Match(game_id="g")
    for ev in [
        lc.GameCreated(game_type="prosperity", num_players=n, rules_version=RULES.rules_version,
                       data_version=RULES.data_version, seed_commitment="c", seed="s"),
        *(lc.SeatJoined(seat=i, name=f"p{i}", kind="bot", token_hash=f"h{i}") for i in range(n)),
    ]:  # fmt: skip
        m.evolve(agg, ev)
    out = m.decide(agg, m.Request(payload=lc.StartGame(), seat=0, token_hash="h0"), apply=True)
    assert not isinstance(out, Rejected), out
    return agg


def _send(agg: m.Match, seat: int, cmd: msgspec.Struct) -> list[msgspec.Struct] | Rejected:
    return m.decide(agg, m.Request(payload=cmd, seat=seat, token_hash=f"h{seat}"), apply=True)


def test_every_seat_chooses_its_board_in_any_order() -> None:
    agg = _started(3)
    assert m.to_act(agg) == [0, 1, 2]
    assert not isinstance(_send(agg, 2, c.ChooseBoard(side="black")), Rejected)
    again = _send(agg, 2, c.ChooseBoard(side="silver"))
    assert isinstance(again, Rejected) and again.rule == "PRO-WAIT"
    assert not isinstance(_send(agg, 1, c.ChooseBoard(side="silver")), Rejected)
    out = _send(agg, 0, c.ChooseBoard(side="silver"))
    assert not isinstance(out, Rejected)
    assert any(isinstance(e, c.TileDrawn) for e in out)


def test_a_non_active_seat_decides_its_count_and_can_be_timed_out() -> None:
    agg = _started(2)
    pick = random.Random(7)
    forced = accepted = False
    while agg.status == m.RUNNING and not (forced and accepted):
        seat = m.to_act(agg)[0]
        game = agg.game
        if game.phase == "count" and seat != game.active:
            # The pending choice belongs to a seat that is not the active player.
            wrong = _send(agg, game.active, RULES.legal_actions(game, seat)[0])
            assert isinstance(wrong, Rejected) and wrong.rule == "PRO-WAIT"
            if not forced:
                req = m.Request(payload=lc.ForceDefault(seat=seat, at_version=agg.version), admin=True)
                out = m.decide(agg, req, apply=True)
                assert not isinstance(out, Rejected), out
                assert isinstance(out[0], lc.DefaultActionForced) and out[0].seat == seat
                forced = True
                continue
            accepted = not isinstance(_send(agg, seat, pick.choice(RULES.legal_actions(game, seat))), Rejected)
            assert accepted
            continue
        out = _send(agg, seat, pick.choice(RULES.legal_actions(game, seat)))
        assert not isinstance(out, Rejected), out
    assert forced and accepted

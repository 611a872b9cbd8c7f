"""Prosperity's greedy playout (games/prosperity/playout.pyx) is the search's Python rollout: from
every position the same winners and the same draws from the search's generator, so a search picks
the same moves with it as without it."""

from __future__ import annotations

import functools
from collections import Counter
from typing import Any

import msgspec
import pytest

from games.catalog import SPECS
from games.offline import OfflineGame, new_game
from games.prosperity import RULES
from games.prosperity.bots import GreedyBot
from games.prosperity.components import ProsperityData
from games.prosperity.rules import ProsperityRules
from games.prosperity.state import ACTIONS, COUNT, FINAL, SETUP
from tests.games.compiled import why_not_built
from tests.games.playouts import rollout_both_ways, searches_both_ways, walk

SPEC = SPECS["prosperity"]


_NOT_BUILT = why_not_built("games.prosperity.playout")
pytestmark = pytest.mark.skipif(_NOT_BUILT is not None, reason=str(_NOT_BUILT))


def _kind(game: OfflineGame) -> str:
    s = game.match.game
    return f"{s.phase}:{s.symbol}" if s.phase in (COUNT, FINAL) else s.phase


def _compare(rules: ProsperityRules, game: OfflineGame, sample: str, seed: int, seen: Counter[str]) -> None:
    """The rollout from a determinization of `game`, both ways: the same returns, final points and
    money left, and each search's generator left in the same state (a forced move draws from it).
    `seen` counts what the rollout went through."""
    from games.prosperity import playout

    copy, _ = rollout_both_ways(SPEC, rules, game, sample, seed)
    end = copy.match.game
    full = playout.playout(playout.Tables(rules.data), game.clone(resample=True, rng_seed=sample).match.game)
    assert full is not None and (full[2], full[3]) == (end.final_scores, end.final_money), sample
    seen[_kind(game)] += 1
    data = rules.data
    seen["black board"] += any(p.side == "black" for p in end.players)
    seen["polluted"] += any(p.discs > data.boards[p.side].pollution_spaces for p in end.players)
    seen["research top"] += any(data.research_top in p.research for p in end.players)
    bought = set(end.drawn) - set(end.research_board)
    seen["special bought"] += any(data.tiles[t].special for t in bought)


def _walk(rules: ProsperityRules, games: int, every: float, tag: str) -> Counter[str]:
    """Games of 2-4 players played by a mix of random and greedy moves (both board sides, every
    phase), the playouts compared at about `every` of their positions; the kinds compared."""
    return walk(
        SPEC, rules, games, every, tag, lambda game: game.match.game.phase != SETUP, functools.partial(_compare, rules)
    )


def test_the_playout_rolls_out_as_the_python_search_does_from_every_kind_of_position() -> None:
    seen = _walk(RULES, 45, 0.2, "playout")
    assert sum(seen[k] for k in (ACTIONS, f"{COUNT}:energy", f"{COUNT}:research", f"{FINAL}:energy")) > 500
    # Actions, both count choices and the final energy count were all compared, and rollouts went
    # through the black board, a polluted country, a marker at the top and special tiles.
    for kind in (ACTIONS, f"{COUNT}:energy", f"{COUNT}:research", f"{FINAL}:energy", "black board", "polluted",
                 "research top", "special bought"):  # fmt: skip
        assert seen[kind] > 0, f"no {kind} position compared: {dict(seen)}"


def test_earlier_and_edited_data_are_played_as_the_python_rules_play_them() -> None:
    for version, file in SPEC.earlier_data.items():
        assert SPEC.with_data is not None
        rules = SPEC.with_data(SPEC.package_dir / file)
        assert isinstance(rules, ProsperityRules) and rules.data_version == version
        _walk(rules, 6, 0.15, f"playout-{version}")
    # Values no data file holds: every symbol of the placed tiles and of the printed faces moved
    # (energy and ecology up or down, the others up), specials that clean or score more, one more
    # symbol on each pollution track, a longer research track.
    data = RULES.data

    def moved(face: Any, i: int) -> Any:
        return msgspec.structs.replace(
            face,
            energy=face.energy + (i % 3 - 1),
            ecology=face.ecology + ((i + 1) % 3 - 1),
            capital=face.capital + i % 2,
            research=face.research + (i + 1) % 2,
            prosperity=face.prosperity + (i % 4 == 0),
        )

    tiles = {
        tid: msgspec.structs.replace(t, clean=t.clean + (t.clean > 0), points=t.points + (t.points > 0))
        if t.special
        else moved(t, i)
        for i, (tid, t) in enumerate(data.tiles.items())
    }
    boards = {
        bid: msgspec.structs.replace(
            b,
            pollution_prosperity=[*b.pollution_prosperity, 2],
            spaces=[
                msgspec.structs.replace(sp, printed=moved(sp.printed, j)) if sp.printed else sp
                for j, sp in enumerate(b.spaces)
            ],
        )
        for bid, b in data.boards.items()
    }
    edited = ProsperityRules(
        msgspec.structs.replace(data, tiles=tiles, boards=boards, research_top=16, data_version="playout-edit")
    )
    _walk(edited, 9, 0.15, "playout-edit")


def test_a_forced_move_draws_as_the_python_rollout_draws() -> None:
    """A seat with no disc, both markers at the top and no money has one command (Income): the
    Python rollout draws from the search's generator for it, so the playout's caller does too."""
    game = new_game(RULES, 2, "playout-forced", record_events=False)
    while game.match.game.phase != ACTIONS or game.match.game.turn < 20:
        seat = game.current_player()
        assert seat is not None
        game.apply(SPEC.greedy().choose(game.view(seat), game.legal_actions(seat), seat), seat)
    for p in game.match.game.players:
        p.discs, p.money, p.research = 0, 0, [RULES.data.research_top] * 2
    assert len(game.legal_actions(game.current_player())) == 1
    fast, _ = searches_both_ways(SPEC, RULES, 3)
    assert fast.playout is not None
    played = fast.playout(game.clone(resample=True, rng_seed="forced", keep_events=False))
    assert played is not None and played[1] > 0
    _compare(RULES, game, "forced", 3, Counter())


def test_positions_it_does_not_take_are_rolled_out_in_python() -> None:
    fast, _ = searches_both_ways(SPEC, RULES, 0)
    assert fast.playout is not None
    game = new_game(RULES, 3, "playout-declines", record_events=False)
    assert fast.playout(game) is None, "set-up is the Python rules'"
    while game.match.game.phase == SETUP:
        game.apply(game.legal_actions(game.current_player())[0], game.current_player())
    assert fast.playout(game) is not None
    hidden = game.clone(keep_events=False)
    hidden.match.game.deck[-1] = "?"
    assert fast.playout(hidden) is None, "a deck folded from public events is not dealt"
    # A count waiting with one choice only is no position the rules leave (PRO-R2): it would not draw
    # for a forced move as the Python rollout does.
    while game.match.game.phase != COUNT:
        seat = game.current_player()
        assert seat is not None
        game.apply(SPEC.greedy().choose(game.view(seat), game.legal_actions(seat), seat), seat)
    odd = game.clone(keep_events=False)
    odd.match.game.queue = [odd.match.game.active]
    head = odd.match.game.players[odd.match.game.active]
    head.energy, head.money, odd.match.game.symbol = -1, 0, "energy"
    assert len(odd.legal_actions(odd.current_player())) == 1
    assert fast.playout(odd) is None


def test_data_it_cannot_hold_gets_no_playout() -> None:
    assert SPEC.greedy_playout is not None
    tiles = {tid: msgspec.structs.replace(t, points=t.points and 2**40) for tid, t in RULES.data.tiles.items()}
    huge: ProsperityData = msgspec.structs.replace(RULES.data, tiles=tiles, data_version="playout-huge")
    assert SPEC.greedy_playout(ProsperityRules(huge), GreedyBot(huge)) is None
    assert SPEC.greedy_playout(ProsperityRules(RULES.data), SPEC.greedy()) is not None

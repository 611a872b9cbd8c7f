"""Artifacts, Inc.'s greedy playout (games/artifacts/playout.pyx) is the search's Python rollout: from
every position the same winners, final reputation and dollars, and the same draws from the search's
generator, so a search picks the same moves with it as without it."""

from __future__ import annotations

import functools
import math
from collections import Counter

import msgspec
import pytest

from contracts import artifacts as c
from contracts.limits import MAX_LIST, MAX_WORD
from games.artifacts import RULES
from games.artifacts.bots import GreedyBot
from games.artifacts.components import Action, ArtifactsData, PublicCard
from games.artifacts.legal import EXACT_SALES
from games.artifacts.rules import ArtifactsRules
from games.artifacts.state import HIDDEN_CARD, PLAY
from games.catalog import SPECS
from games.offline import OfflineGame, new_game
from tests.games.compiled import why_not_built
from tests.games.playouts import rollout_both_ways, searches_both_ways, walk

SPEC = SPECS["artifacts"]

_NOT_BUILT = why_not_built("games.artifacts.playout")
pytestmark = pytest.mark.skipif(_NOT_BUILT is not None, reason=str(_NOT_BUILT))


def _compare(rules: ArtifactsRules, game: OfflineGame, sample: str, seed: int, seen: Counter[str]) -> None:
    """The rollout from a determinization of `game`, both ways: the same returns, final reputation
    and dollars, and each search's generator left in the same state (a forced move draws from it).
    `seen` counts what the rollouts went through."""
    from games.artifacts import playout

    # The first choice, step by step: what the rules list there, and what the greedy bot picks.
    seat = game.current_player()
    assert seat is not None
    legal = game.legal_actions(seat)
    first = playout.decision(playout.Tables(rules.data), game.match)
    assert first is not None and first[0] == len(legal), sample
    maker = SPEC.bots_for(rules)
    assert maker is not None
    if len(legal) > 1:
        assert first[1] == maker.greedy().choose(game.view(seat), legal, seat), sample
    copy, played = rollout_both_ways(SPEC, rules, game, sample, seed)
    end = copy.match.game
    full = playout.playout(playout.Tables(rules.data), game.clone(resample=True, rng_seed=sample).match)
    assert full is not None, sample
    assert (full[2], full[3]) == ([p.reputation for p in end.players], [p.dollars for p in end.players]), sample
    seen["positions"] += 1
    seen["large holdings"] += math.prod(h + 1 for h in game.match.game.players[seat].artifacts) - 1 > EXACT_SALES
    seen["collectors listed"] += any(isinstance(a, c.SellToCollectors) for a in legal)
    seen["forced"] += full[1] > 0
    for kind in (c.Buy, c.Upgrade, c.SellToMuseum, c.SellToCollectors, c.Dive, c.UseAction):
        seen[kind.__name__] += any(isinstance(a, kind) for a in played)
    seen["mixed sale"] += any(isinstance(a, c.SellToCollectors) and sum(map(bool, (a.fossil, a.scroll, a.gem,
                              a.statue))) > 1 for a in played)  # fmt: skip
    seen["round cap"] += not end.triggered
    seen["majority"] += any(seat is not None for seat in end.majorities)
    seen["deck emptied"] += any(not deck for deck in end.decks)


def _walk(rules: ArtifactsRules, games: int, every: float, tag: str) -> Counter[str]:
    """Games of 2-4 players played by a mix of random and greedy moves, the playouts compared at about
    `every` of their play positions; what the rollouts went through."""
    return walk(
        SPEC, rules, games, every, tag, lambda game: game.match.game.phase == PLAY, functools.partial(_compare, rules)
    )


def test_the_playout_rolls_out_as_the_python_search_does() -> None:
    seen = _walk(RULES, 24, 0.1, "playout")
    assert seen["positions"] > 300, dict(seen)
    for kind in ("Buy", "Upgrade", "SellToMuseum", "SellToCollectors", "Dive", "UseAction", "mixed sale", "majority"):
        assert seen[kind] > 0, f"no rollout played a {kind}: {dict(seen)}"


def _edited(data: ArtifactsData) -> ArtifactsData:
    """Values and shapes no data file holds: a public card paying per find and another buying cards,
    two more museum boxes, fewer dice in the box, an earlier end, a round cap that ends games and
    large holdings of artifacts (Private Collectors' representative subset)."""
    public = dict(data.public)
    public["guide"] = PublicCard(
        id="guide", name="Guide Work",
        actions=[Action(die="even", effect="dollars_finds", amount=1, per=1, find="any"),
                 Action(die="6", effect="buy")],
    )  # fmt: skip
    museums = {
        mid: msgspec.structs.replace(m, boxes_3p=[*m.boxes_3p, 1, 2], boxes_2p=[*m.boxes_2p, 1])
        for mid, m in data.museums.items()
    }
    assets = dict(data.assets)
    canyon = assets["S-canyon"]
    # Three fossils a die on the starting Canyon Expedition: holdings past Private Collectors' exact list.
    rich = Action(die="!2", effect="artifact", kind="fossil", amount=3)
    assets["S-canyon"] = msgspec.structs.replace(canyon, lv1=msgspec.structs.replace(canyon.lv1, actions=[rich]))
    table = msgspec.structs.replace(data.table, dice_in_box=4, end_reputation=16, max_rounds=9)
    needs = dict(data.needs)
    for need in ("even", "6", "!2"):
        needs.setdefault(need, frozenset({"even": {2, 4, 6}, "6": {6}, "!2": {1, 3, 4, 5, 6}}[need]))
    return msgspec.structs.replace(
        data, public=public, museums=museums, assets=assets, table=table, needs=needs, data_version="playout-edit"
    )


def test_earlier_and_edited_data_are_played_as_the_python_rules_play_them() -> None:
    for version, file in SPEC.earlier_data.items():
        assert SPEC.with_data is not None
        rules = SPEC.with_data(SPEC.package_dir / file)
        assert isinstance(rules, ArtifactsRules) and rules.data_version == version
        _walk(rules, 6, 0.1, f"playout-{version}")
    seen = _walk(ArtifactsRules(_edited(RULES.data)), 9, 0.15, "playout-edit")
    for kind in ("round cap", "mixed sale", "Buy", "forced"):
        assert seen[kind] > 0, f"no edited rollout went through {kind}: {dict(seen)}"


def test_holdings_past_the_exact_list_of_sales_are_sold_as_the_python_rules_list_them() -> None:
    """Private Collectors lists a representative subset of mixes past EXACT_SALES (legal._sales):
    the playout lists as many commands there, picks the same one and rolls out the same."""
    seen: Counter[str] = Counter()
    for g in range(8):
        game = new_game(RULES, 2 + g % 3, f"playout-holdings-{g}", record_events=False)
        while game.match.game.phase != PLAY or game.match.game.round < 2 + g:
            seat = game.current_player()
            assert seat is not None
            game.apply(SPEC.greedy().choose(game.view(seat), game.legal_actions(seat), seat), seat)
        state = game.match.game
        assert state.current is not None
        # Past the exact list, and (from g = 4) holdings whose every mix would be millions of commands.
        state.players[state.current].artifacts = [9, 3 + g % 2, 4, 2 + g] if g < 4 else [40 + g, 1, 30, 25 * g]
        _compare(RULES, game, f"playout-holdings-{g}", g, seen)
    assert seen["collectors listed"] > 0 and seen["mixed sale"] > 0, dict(seen)


def test_positions_it_does_not_take_are_rolled_out_in_python() -> None:
    fast, _ = searches_both_ways(SPEC, RULES, 0)
    assert fast.playout is not None
    game = new_game(RULES, 3, "playout-declines", record_events=False)
    assert fast.playout(game) is None, "arranging the starting cards is the Python rules'"
    while game.match.game.phase != PLAY:
        seat = game.current_player()
        assert seat is not None
        game.apply(game.legal_actions(seat)[0], seat)
    assert fast.playout(game) is not None
    hidden = game.clone(keep_events=False)
    hidden.match.game.decks[2][-1] = HIDDEN_CARD
    assert fast.playout(hidden) is None, "a deck folded from public events is not dealt"
    rich = game.clone(keep_events=False)
    rich.match.game.players[0].dollars = 2**41
    assert fast.playout(rich) is None, "sums past a long long's reach over a game roll out in Python"


def test_data_it_cannot_hold_gets_no_playout() -> None:
    assert SPEC.greedy_playout is not None
    assets = {aid: msgspec.structs.replace(a, cost=2**40) if a.deck == "E" else a
              for aid, a in RULES.data.assets.items()}  # fmt: skip
    huge = msgspec.structs.replace(RULES.data, assets=assets, data_version="playout-huge")
    assert SPEC.greedy_playout(ArtifactsRules(huge), GreedyBot(huge)) is None
    # Data whose commands would be malformed (contracts/limits.py): a Dive of more than MAX_LIST dice,
    # an id longer than MAX_WORD. The Python rules refuse those commands; the playout must not play them.
    dice = msgspec.structs.replace(RULES.data.table, dice_in_box=MAX_LIST + 1)
    many = msgspec.structs.replace(RULES.data, table=dice)
    assert SPEC.greedy_playout(ArtifactsRules(many), GreedyBot(many)) is None
    long_id = "guide-" + "x" * MAX_WORD
    public = {(long_id if k == "guide" else k): msgspec.structs.replace(p, id=long_id) if k == "guide" else p
              for k, p in RULES.data.public.items()}  # fmt: skip
    public_ids = tuple(long_id if k == "guide" else k for k in RULES.data.public_ids)
    named = msgspec.structs.replace(RULES.data, public=public, public_ids=public_ids, data_version="playout-long-id")
    assert SPEC.greedy_playout(ArtifactsRules(named), GreedyBot(named)) is None
    assert SPEC.greedy_playout(ArtifactsRules(RULES.data), SPEC.greedy()) is not None

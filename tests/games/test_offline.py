"""The offline API: independent clones, refusals, returns, determinization (the referee's game
exactly: tests/games/test_one_loop.py)."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import msgspec
import pytest

from contracts.sentient import Acquire, Pass
from contracts.views.sentient import SentientView
from games import match as m
from games.base import Rejected, Result
from games.bots import Bot, RandomBot
from games.catalog import SPECS
from games.offline import IllegalAction, OfflineGame, determinizer_for, new_game, play
from games.rng import Rng
from games.sentient import RULES
from games.sentient.bots import GreedyBot
from games.sentient.determinize import determinize, unseen_cards
from games.sentient.rules import SentientRules
from games.sentient.spec import SPEC


def _bots(seed: int, n: int) -> list[Bot]:
    # Greedy at seat 0, random elsewhere: both kinds of choices, rebuilt identically per call.
    return [GreedyBot(RULES.data)] + [RandomBot(seed * 10 + s) for s in range(1, n)]


def _played(seed: str, n: int = 2) -> OfflineGame:
    return play(new_game(RULES, n, seed), _bots(0, n))


def test_replaying_the_history_reproduces_the_events() -> None:
    game = _played("off-replay")
    again = new_game(RULES, 2, "off-replay")
    for seat, cmd in game.history:
        assert again.current_player() == seat
        again.apply(cmd)
    assert again.events == game.events
    assert again.scores() == game.scores()


def test_clone_is_independent() -> None:
    game = new_game(RULES, 2, "off-clone")
    before_view, before_version = game.view(None), game.version
    copy = game.clone()
    copy.apply(Pass())
    # The copy moved on; the original did not (state, log, history).
    assert copy.version > before_version
    assert game.view(None) == before_view
    assert game.version == before_version
    assert game.history == []
    assert game.events is not None and copy.events is not None
    assert len(copy.events) > len(game.events)
    # A plain clone keeps the seed, so the same command gives the same outcome (draws included).
    game.apply(Pass())
    assert game.events == copy.events
    assert game.state == copy.state


def test_illegal_action_raises_with_the_rule_and_changes_nothing() -> None:
    game = new_game(RULES, 2, "off-illegal")
    seat = game.current_player()
    assert seat is not None
    version, view = game.version, game.view(None)
    with pytest.raises(IllegalAction) as info:
        game.apply(Acquire(factory_slot=9, network_slot=1))
    assert info.value.rejected.rule == "SEN-ACQUIRE-FACTORY"
    assert info.value.seat == seat
    with pytest.raises(IllegalAction) as info:
        game.apply(Pass(), seat=1 - seat)
    assert info.value.rejected.rule == "SEN-TURN"
    assert (game.version, game.view(None), game.history) == (version, view, [])


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_returns_are_win_shares(num_players: int) -> None:
    for i in range(5):
        game = new_game(RULES, num_players, f"off-returns-{i}")
        assert game.returns() == [0.0] * num_players  # nothing won before the end
        play(game, _bots(i, num_players))
        returns, winners = game.returns(), RULES.result(game.state).winners
        assert sum(returns) == pytest.approx(1.0)
        assert returns == [1 / len(winners) if s in winners else 0.0 for s in range(num_players)]
        assert game.scores() == RULES.result(game.state).scores
        assert game.current_player() is None and game.legal_actions() == []
        with pytest.raises(IllegalAction, match="OFFLINE-OVER"):
            game.apply(Pass())


class _TieRules:
    """Sentient with every result a tie between seats 0 and 1, to pin the shared-win share."""

    def __init__(self) -> None:
        self.name = "sentient-tie"

    def __getattr__(self, attr: str) -> Any:
        return getattr(RULES, attr)

    def result(self, state: Any) -> Result:
        return Result(scores=[5, 5, 1], winners=[0, 1])


def test_tied_winners_share_the_win() -> None:
    game = play(new_game(_TieRules(), 3, "off-tie"), _bots(1, 3))
    assert game.returns() == [0.5, 0.5, 0.0]


class _NoPassing(SentientRules):
    """A variant that overrides `decide` only: offline play must judge with it, not with the
    `decide_into` it inherits (which would skip the override)."""

    def decide(self, state: Any, seat: int, command: msgspec.Struct, rng: Rng) -> list[msgspec.Struct] | Rejected:
        if isinstance(command, Pass):
            return Rejected(rule="SEN-NO-PASSING", text="This variant has no passing.")
        return super().decide(state, seat, command, rng)


def test_a_variant_overriding_decide_is_judged_by_its_own_decide() -> None:
    game = new_game(_NoPassing(RULES.data), 2, "off-variant")
    with pytest.raises(IllegalAction) as refused:
        game.apply(Pass())
    assert refused.value.rejected.rule == "SEN-NO-PASSING"
    # The game still plays, through the variant's decide (and so on a copy).
    seat = game.current_player()
    assert seat is not None
    game.apply(next(a for a in game.legal_actions(seat) if isinstance(a, Acquire)))
    assert game.history and game.version > 0


def _mid_game(seed: str, moves: int) -> OfflineGame:
    game = new_game(RULES, 2, seed)
    bot = GreedyBot(RULES.data)
    for _ in range(moves):
        seat = game.current_player()
        assert seat is not None
        view = game.view(seat)
        assert isinstance(view, SentientView)
        game.apply(bot.choose(view, game.legal_actions(seat), seat))
    return game


def test_determinize_keeps_the_public_table_and_redeals_the_deck() -> None:
    game = _mid_game("off-det", 7)
    true_deck = list(game.state.deck)
    assert len(true_deck) > 1
    assert determinizer_for(RULES) is SPEC.determinize
    sample = game.clone(resample=True, rng_seed="sample-1")
    # Everything public is identical, for the spectator and for every seat.
    for seat in (None, 0, 1):
        assert sample.view(seat) == game.view(seat)
    assert sample.legal_actions() == game.legal_actions()
    # The deck holds the same cards (the unseen ones) in another order; the truth is untouched.
    assert Counter(sample.state.deck) == Counter(true_deck)
    assert sorted(unseen_cards(game.state, RULES.data)) == sorted(true_deck)
    assert sample.state.deck != true_deck
    assert game.state.deck == true_deck
    assert sample.seed == "sample-1" and game.seed == "off-det"
    # A determinization keeps no log: the log holds the true seed and the deck as dealt.
    assert sample.events is None and game.events is not None
    # Reproducible from its seed, and different seeds give different samples.
    assert game.clone(resample=True, rng_seed="sample-1").state == sample.state
    assert game.clone(resample=True, rng_seed="sample-2").state.deck != sample.state.deck


def test_determinize_ignores_the_true_order() -> None:
    # The sample is a function of public facts and the rng only: permuting the true deck changes nothing.
    state = _mid_game("off-det-order", 5).state
    permuted = RULES.clone(state)
    permuted.deck.reverse()
    assert determinize(state, Rng.for_version("x", 1)).deck == determinize(permuted, Rng.for_version("x", 1)).deck


def test_determinize_rebuilds_a_state_folded_from_public_events() -> None:
    game = _mid_game("off-det-public", 9)
    assert game.events is not None
    # The log, lifecycle included, folded as a spectator folds the public stream.
    seen = m.Match(game_id="public")
    for ev in game.events:
        shown = m.public_event(seen, ev)
        if shown is not None:
            m.evolve(seen, shown)
    public = seen.game
    assert "?" in public.deck
    sample = determinize(public, Rng.for_version("public", 0))
    assert "?" not in sample.deck
    assert Counter(sample.deck) == Counter(game.state.deck)
    assert RULES.view(sample, None) == game.view(None)


def test_resampled_future_differs_but_stays_playable() -> None:
    # Same commands, another seed: the future draws are a sample, not the truth.
    game = new_game(RULES, 2, "off-future")
    sample = game.clone(resample=True, rng_seed="guess")
    play(game, _bots(3, 2))
    for seat, cmd in game.history[:3]:
        sample.apply(cmd, seat)
    truth = new_game(RULES, 2, "off-future")
    for seat, cmd in game.history[:3]:
        truth.apply(cmd, seat)
    assert sample.view(None) != truth.view(None)  # other cards were drawn into the factory
    play(sample, _bots(3, 2))
    assert sample.is_terminal()


def test_with_seed_keeps_the_state() -> None:
    game = _mid_game("off-seed", 3)
    other = game.with_seed("other")
    assert other.state == game.state and other.seed == "other" and game.seed == "off-seed"
    assert other.history == game.history and other.history is not game.history


def test_clone_arguments_are_checked() -> None:
    game = new_game(RULES, 2, "off-args", record_events=False)
    assert game.events is None
    with pytest.raises(ValueError, match="rng_seed"):
        game.clone(resample=True)
    with pytest.raises(ValueError, match="with_seed"):
        game.clone(rng_seed="x")
    game.apply(Pass())
    assert game.events is None and game.version > 0


@pytest.mark.parametrize("name", sorted(SPECS))
def test_a_command_built_with_wrong_types_is_refused_as_malformed(name: str) -> None:
    """The offline API takes commands as Python objects, which nothing checked against their
    types: it refuses what the wire's decoding would (GAME-MALFORMED), and the game is unchanged."""
    rules = SPECS[name].rules
    game = new_game(rules, rules.max_players, f"off-malformed-{name}")
    pick, target = random.Random(name), None
    while target is None and not game.is_terminal():
        seat = game.to_act()[0]
        legal = game.legal_actions(seat)
        target = next((a for a in legal if any(type(v) is int for v in msgspec.structs.astuple(a))), None)
        if target is None:
            game.apply(pick.choice(legal), seat)
    assert target is not None, f"no {name} command with an int field was ever legal"
    field = next(
        f for f, v in zip(target.__struct_fields__, msgspec.structs.astuple(target), strict=True) if type(v) is int
    )
    before, version = game.clone().state, game.version
    for bad in (2.5, float("nan"), "1", None):
        with pytest.raises(IllegalAction) as refused:
            game.apply(msgspec.structs.replace(target, **{field: bad}), seat)
        assert refused.value.rejected.rule == "GAME-MALFORMED", (field, bad)
    assert game.version == version and game.state == before
    game.apply(target, seat)

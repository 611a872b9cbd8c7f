"""Sentient's native core (games/sentient/native.pyx) is the same game as the Python rules: the same
state, legal list, version and result at every step of seeded games, through refusals,
resignations, determinizations, inputs only the Python rules model, and other data."""

from __future__ import annotations

import random
from typing import Any

import msgspec
import pytest

from contracts import lifecycle as lc
from contracts.sentient import Acquire, Pass
from games.bots import RandomBot
from games.mcts import MCTSBot
from games.offline import IllegalAction, OfflineGame, new_game, play
from games.sentient import RULES, SentientRules
from tests.games.compiled import why_not_built

_NOT_BUILT = why_not_built("games.sentient.native")
pytestmark = pytest.mark.skipif(_NOT_BUILT is not None, reason=str(_NOT_BUILT))


def _pair(n: int, seed: str, rules: SentientRules = RULES) -> tuple[OfflineGame, OfflineGame]:
    python = new_game(rules, n, seed, record_events=False, native=False)
    native = new_game(rules, n, seed, record_events=False)
    assert native.native and not python.native
    return python, native


def _position(game: OfflineGame) -> Any:
    """The game's state, read from a copy so that a native game stays native."""
    return game.clone().match.game


def _same(python: OfflineGame, native: OfflineGame, where: str) -> None:
    assert native.version == python.version, where
    assert native.to_act() == python.to_act(), where
    assert native.current_player() == python.current_player(), where
    assert _position(native) == _position(python), where
    for seat in range(python.num_players):
        assert native.legal_actions(seat) == python.legal_actions(seat), f"{where}, seat {seat}"
    assert native.is_terminal() == python.is_terminal(), where
    assert native.scores() == python.scores(), where
    assert native.returns() == python.returns(), where
    assert native.view(0) == python.view(0), where


def _refused_alike(python: OfflineGame, native: OfflineGame, action: msgspec.Struct, seat: int | None) -> str:
    with pytest.raises(IllegalAction) as by_python:
        python.apply(action, seat)
    with pytest.raises(IllegalAction) as by_native:
        native.apply(action, seat)
    assert by_native.value.rejected == by_python.value.rejected
    assert native.native, "a refusal leaves the game on its core"
    return by_python.value.rejected.rule


def _lockstep(python: OfflineGame, native: OfflineGame, rng: random.Random, steps: int, where: str) -> None:
    for step in range(steps):
        if python.is_terminal():
            return
        seat = python.current_player()
        legal = python.legal_actions(seat)
        action = legal[rng.randrange(len(legal))]
        python.apply(action, seat)
        native.apply(action, seat)
        _same(python, native, f"{where}, step {step}")


@pytest.mark.parametrize("players", [2, 3, 4])
def test_random_games_reach_the_same_states_through_refusals_resignations_and_copies(players: int) -> None:
    rules_met: set[str] = set()
    copies = resignations = 0
    for g in range(12):
        python, native = _pair(players, f"native-{players}-{g}")
        rng = random.Random(g)
        played: list[tuple[int, msgspec.Struct]] = []
        step = 0
        _same(python, native, "set-up")
        while not python.is_terminal():
            where = f"game {g}, step {step}"
            seat = python.current_player()
            assert seat is not None
            roll = rng.random()
            if roll < 0.08 and played:
                # A move legal earlier, now stale, or sent by a seat out of turn.
                old_seat, old = played[rng.randrange(len(played))]
                other = rng.choice([s for s in range(players) if s != seat] or [old_seat])
                for s in (seat, other):
                    if old not in python.legal_actions(s):
                        rules_met.add(_refused_alike(python, native, old, s))
            elif roll < 0.10:
                bad = rng.choice([lc.StartGame(), lc.JoinSeat(seat=0, name="x"), Pass()])
                others = [s for s in range(players) if s != seat]
                rules_met.add(_refused_alike(python, native, bad, rng.choice([*others, players, -1])))
            elif roll < 0.12:
                resigning = rng.randrange(players)
                if python.match.seats[resigning].resigned:  # type: ignore[union-attr]
                    rules_met.add(_refused_alike(python, native, lc.Resign(), resigning))
                else:
                    python.apply(lc.Resign(), resigning)
                    native.apply(lc.Resign(), resigning)
                    resignations += 1
            elif roll < 0.16:
                # Determinizations (the search's samples) and copies with another future.
                sample = f"sample-{g}-{step}"
                pairs = [
                    (python.clone(resample=True, rng_seed=sample), native.clone(resample=True, rng_seed=sample)),
                    (python.with_seed(sample), native.with_seed(sample)),
                ]
                for a, b in pairs:
                    _same(a, b, where + ", copy")
                    _lockstep(a, b, random.Random(step), 8, where + ", copy")
                    copies += 1
            else:
                legal = python.legal_actions(seat)
                action = legal[rng.randrange(len(legal))]
                python.apply(action, seat)
                native.apply(action, seat)
                played.append((seat, action))
            assert native.native, f"{where}: the core handed over on a move it models"
            _same(python, native, where)
            step += 1
        assert native.history == python.history
    # The checks above met every kind of input.
    assert {"SEN-TURN", "GAME-AUTH", "GAME-NOT-OPEN"} <= rules_met, rules_met
    assert copies >= 20 and resignations >= 3, (copies, resignations)


def test_asking_for_the_match_hands_the_game_over_to_the_python_aggregate() -> None:
    python, native = _pair(3, "native-handover")
    _lockstep(python, native, random.Random(1), 20, "before")
    assert native.state == python.state
    assert not native.native
    _lockstep(python, native, random.Random(2), 1000, "after")
    assert native.is_terminal()
    assert native.match.result == python.match.result
    assert native.match.version == python.match.version and native.match.status == python.match.status


def test_malformed_commands_are_refused_alike_and_the_game_stays_native() -> None:
    python, native = _pair(2, "native-malformed")
    seat = python.current_player()
    legal = next(a for a in python.legal_actions(seat) if isinstance(a, Acquire) and a.block_left)
    odd: list[dict[str, Any]] = [
        {"block_left": -3},  # would give three assistants back
        {"block_left": 1},
        {"assistants": 2.5},
        {"assistants": float("nan")},
        {"assistants": True},
        {"network_slot": None},
    ]
    for fields in odd:
        rule = _refused_alike(python, native, msgspec.structs.replace(legal, **fields), seat)
        assert rule == "GAME-MALFORMED", fields
    _same(python, native, "after the malformed commands")


class _Declining:
    """A core that leaves every move to the Python rules, as it would an input it does not model."""

    def __init__(self, core: Any) -> None:
        self._core = core

    def __getattr__(self, name: str) -> Any:
        return getattr(self._core, name)

    def play(self, seat: int, action: msgspec.Struct) -> bool:
        return False


def test_a_move_the_core_declines_and_the_rules_accept_hands_the_game_over() -> None:
    python, native = _pair(2, "native-declined")
    _lockstep(python, native, random.Random(6), 5, "before")
    native._core = _Declining(native._core)
    seat = python.current_player()
    action = python.legal_actions(seat)[-1]
    python.apply(action, seat)
    native.apply(action, seat)
    assert not native.native
    assert native.state == python.state and native.version == python.version
    _lockstep(python, native, random.Random(7), 1000, "after")
    assert native.match.result == python.match.result


def test_an_rl_agents_numpy_seat_is_the_seat_it_numbers() -> None:
    np = pytest.importorskip("numpy")
    python, native = _pair(2, "native-numpy")
    seat = python.current_player()
    action = python.legal_actions(seat)[0]
    python.apply(action, seat)
    native.apply(action, np.int64(seat))
    assert native.native and native.history == python.history
    _same(python, native, "after")


def _answer(ask: Any, *args: Any) -> tuple[str, Any]:
    try:
        return "gave", ask(*args)
    except Exception as exc:
        return "raised", type(exc)


def test_seats_and_seeds_of_other_types_get_the_python_rules_answer() -> None:
    python, native = _pair(2, "native-odd-seats")
    seat = python.current_player()
    assert seat is not None
    for odd in (0.5, "0", 2**40, True, False, float(seat), None, -1):
        assert _answer(native.legal_actions, odd) == _answer(python.legal_actions, odd), odd
    assert native.native
    for seed in (5, None):
        for copies in ((python.with_seed(seed), native.with_seed(seed)),):  # type: ignore[arg-type]
            a, b = copies
            assert not b.native and native.native
            if seed is None:
                with pytest.raises(AssertionError, match="knows its seed"):
                    a.apply(a.legal_actions()[0])
                with pytest.raises(AssertionError, match="knows its seed"):
                    b.apply(b.legal_actions()[0])
            else:
                _lockstep(a, b, random.Random(4), 1000, f"seed {seed!r}")
    a = python.clone(resample=True, rng_seed=7)  # type: ignore[arg-type]
    b = native.clone(resample=True, rng_seed=7)  # type: ignore[arg-type]
    assert a.state == b.state
    _lockstep(a, b, random.Random(5), 1000, "resampled with an int seed")
    assert native.native


def test_other_data_is_read_by_the_core_too() -> None:
    data = RULES.data
    cards = {
        cid: msgspec.structs.replace(card, vp=card.vp + i % 3, offset=card.offset + i % 2)
        for i, (cid, card) in enumerate(data.cards.items())
    }
    other = SentientRules(msgspec.structs.replace(data, cards=cards, data_version="native-test"))
    for g in range(4):
        python, native = _pair(2 + g % 3, f"native-data-{g}", other)
        _lockstep(python, native, random.Random(g), 1000, f"game {g}")
        assert python.is_terminal() and native.scores() == python.scores()


def test_data_beyond_the_cores_bounds_runs_on_the_python_rules() -> None:
    data = RULES.data
    cards = {cid: msgspec.structs.replace(card, vp=card.vp and 2**30) for cid, card in data.cards.items()}
    big = SentientRules(msgspec.structs.replace(data, cards=cards, data_version="native-big"))
    game = new_game(big, 2, "native-big", record_events=False)
    assert not game.native
    play(game, [RandomBot(1), RandomBot(2)])
    assert max(game.scores()) >= 2**30
    # A value the data file would not hold (a float), put in by hand.
    cards = {cid: msgspec.structs.replace(card, vp=card.vp and 2.5) for cid, card in data.cards.items()}
    odd = SentientRules(msgspec.structs.replace(data, cards=cards, data_version="native-float"))
    assert not new_game(odd, 2, "native-float", record_events=False).native


def test_a_variant_runs_on_its_own_rules() -> None:
    class Variant(SentientRules):
        def legal_actions(self, state: Any, seat: int) -> list[msgspec.Struct]:
            return [a for a in super().legal_actions(state, seat) if not isinstance(a, Acquire) or a.assistants == 0]

    variant = Variant(RULES.data)
    assert not new_game(variant, 2, "native-variant", record_events=False).native
    # Data replaced after the rules were built: their legal lists still read the old corners.
    stale = SentientRules(RULES.data)
    corners = {cid: msgspec.structs.replace(card, left="=") for cid, card in RULES.data.cards.items()}
    stale.data = msgspec.structs.replace(RULES.data, cards=corners)
    assert not new_game(stale, 2, "native-stale", record_events=False).native
    # A method given to one instance makes it a variant too.
    patched = SentientRules(RULES.data)
    patched.legal_actions = variant.legal_actions  # type: ignore[method-assign]
    assert not new_game(patched, 2, "native-patched", record_events=False).native
    assert new_game(SentientRules(RULES.data), 2, "native-plain", record_events=False).native
    with pytest.raises(ValueError, match="no native core"):
        new_game(variant, 2, "native-variant", record_events=False, native=True)
    with pytest.raises(ValueError, match="writes no log"):
        new_game(RULES, 2, "native-log", native=True)
    assert not new_game(RULES, 2, "native-log").native


def test_a_search_chooses_the_same_moves_from_either() -> None:
    python, native = _pair(2, "native-search")
    for turn in range(6):
        seat = python.current_player()
        assert seat is not None
        picks = [MCTSBot(RULES, iterations=40, seed=turn).choose_from(g, seat) for g in (python, native)]
        assert picks[0] == picks[1]
        python.apply(picks[0], seat)
        native.apply(picks[0], seat)
        assert native.native
    _same(python, native, "after the search")

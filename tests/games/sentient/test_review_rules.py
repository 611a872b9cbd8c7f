"""Review tests: rulebook points not pinned down by the other Sentient tests.

Each test quotes the rulebook (shared/seeds/000_09f6116d9ab1585d.txt) or RULINGS.md line it checks.
"""

from __future__ import annotations

from collections import Counter

import msgspec
import pytest

from contracts import sentient as c
from games.rng import Rng
from games.sentient import RULES
from games.sentient.state import SentientState
from tests.games.sentient.given import DATA, act, card_where, fold, table_events


def _free(state: SentientState, seat: int) -> int:
    return next(i + 1 for i, cid in enumerate(state.players[seat].network) if cid is None)


def _take(state: SentientState, seat: int, factory_slot: int | None = None, **kw: object) -> None:
    slot = factory_slot or next(i + 1 for i, cid in enumerate(state.factory) if cid is not None)
    act(state, seat, c.Acquire(factory_slot=slot, network_slot=_free(state, seat), **kw))  # type: ignore[arg-type]


def _play_out(state: SentientState, *, plain_slot: int = 4) -> list[msgspec.Struct]:
    """Finish the round: everyone takes `plain_slot` (no assistants) until out of agents, then passes."""
    events: list[msgspec.Struct] = []
    round_no = state.round
    while state.round == round_no and not state.over:
        seat = RULES.to_act(state)[0]
        p = state.players[seat]
        if p.agents:
            events += act(state, seat, c.Acquire(factory_slot=plain_slot, network_slot=_free(state, seat)))
        else:
            events += act(state, seat, c.Pass())
    return events


def _with_first_card(card_id: str) -> list[str]:
    return [card_id, *[x for x in DATA.card_ids if x != card_id][:3]]


# ---- set-up and round preparation ---------------------------------------------------------


@pytest.mark.parametrize("n", [2, 3, 4])
def test_setup_gives_each_player_the_rulebook_kit(n: int) -> None:
    # "Dale a cada jugador 4 peones de Agente, 5 peones de Asistente ... 5 dados";
    # "reparta aleatoriamente a cada jugador un lado derecho, que muestra su inversor inicial";
    # "roba 4 cartas del mazo"; "Utilice las 5 fichas de inversor correspondientes a la ronda".
    state = fold(n, RULES.setup(n, Rng.for_version("setup", n)))
    assert state.round == 1
    assert sorted(state.turn_order) == list(range(n))
    assert RULES.to_act(state) == [state.turn_order[0]]
    starting = [p.starting_investor for p in state.players]
    assert len(set(starting)) == n  # distinct types
    for p in state.players:
        assert DATA.board_sides[p.board_side].starting_investor == p.starting_investor
        assert (p.agents, p.assistants, p.passed, p.vp) == (4, 5, False, 0)
        assert len(p.dice) == 5 and all(1 <= d <= 6 for d in p.dice)
    assert all(cid is not None for cid in state.factory)
    assert sorted(state.investors) == sorted(DATA.investors_by_round[0])  # type: ignore[type-var]
    assert {DATA.investors[i].type for i in state.investors if i} == {
        "information", "transport", "industry", "military", "service",
    }  # fmt: skip
    assert len(state.deck) == 56 and state.discard == []


def test_setup_stack_and_board_sides_are_random() -> None:
    # "crea una pila al azar"; "reparta aleatoriamente a cada jugador un lado derecho".
    firsts, sides = set(), set()
    for k in range(40):
        state = fold(3, RULES.setup(3, Rng.for_version("rand", k)))
        firsts.add(state.turn_order[0])
        sides.add(state.players[0].board_side)
    assert firsts == {0, 1, 2}
    assert len(sides) >= 4


@pytest.mark.parametrize("n", [2, 4])
def test_every_round_uses_its_own_investors_and_rerolls_all_dice(n: int) -> None:
    # Round prep, every round: "Utilice las 5 fichas de inversor correspondientes a la ronda que está
    # a punto de comenzar" and "Tira tus 5 dados". No 2-player exception exists in the rulebook.
    log = list(RULES.setup(n, Rng.for_version("rounds", n)))
    state = fold(n, log)
    while not state.over:
        seat = RULES.to_act(state)[0]
        log += act(state, seat, RULES.legal_actions(state, seat)[-1], seed=f"r{len(log)}")
    started = [e for e in log if isinstance(e, c.RoundStarted)]
    assert [e.round for e in started] == [1, 2, 3]
    for e in started:
        assert sorted(e.investors) == sorted(DATA.investors_by_round[e.round - 1])
        assert len(e.investors) == 5
    rolls = [e for e in log if isinstance(e, c.DiceRolled)]
    assert Counter(e.seat for e in rolls) == {s: 3 for s in range(n)}
    assert all(len(e.values) == 5 for e in rolls)
    refills_at_start = [log[log.index(e) + 1] for e in started]
    assert all(isinstance(r, c.FactoryRefilled) and r.slots == [1, 2, 3, 4] for r in refills_at_start)


# ---- acquire ------------------------------------------------------------------------------


def test_blocking_assistants_give_no_influence() -> None:
    # "Los asistentes tienen dos usos posibles: ... aumentar su influencia al colocar un Agente, o
    # ... evitar un efecto + o -". Blockers sit "encima del +/- en la carta" (the bot in the
    # network) and "permanecen en la tarjeta" = that card, not the factory slot: no influence.
    pm = card_where(left="+", right="-")
    state = fold(2, table_events(2, factory=_with_first_card(pm)))
    act(state, 0, c.Acquire(factory_slot=1, network_slot=1, assistants=1, block_left=True, block_right=True))
    assert state.influence[0] == [2, 0]  # agent + 1 influence assistant; the 2 blockers count for nothing
    assert state.agents_at[0] == [1, 0]
    assert state.players[0].assistants == 2


def test_blocked_corner_ignores_the_wrap_too() -> None:
    # Blocked + on a 6 stays 6; the unblocked - on a 1 wraps to 6.
    pm = card_where(left="+", right="-")
    state = fold(2, table_events(2, factory=_with_first_card(pm), dice=[[6, 1, 3, 3, 3], [3] * 5]))
    out = act(state, 0, c.Acquire(factory_slot=1, network_slot=1, block_left=True))
    cal = next(e for e in out if isinstance(e, c.DiceCalibrated))
    assert (cal.before, cal.after) == ([6, 1], [6, 6])


def test_calibration_touches_only_the_two_adjacent_dice() -> None:
    pm = card_where(left="+", right="-")
    state = fold(2, table_events(2, factory=_with_first_card(pm), dice=[[2, 2, 2, 2, 2], [3] * 5]))
    act(state, 0, c.Acquire(factory_slot=1, network_slot=3))
    assert state.players[0].dice == [2, 2, 3, 1, 2]
    assert state.players[1].dice == [3] * 5


def test_assistants_spent_on_blocks_come_back_next_round() -> None:
    # "Los asistentes permanecen en la tarjeta hasta el final de la ronda y luego se le devuelven."
    pm = card_where(left="+", right="-")
    state = fold(2, table_events(2, factory=_with_first_card(pm)))
    act(state, 0, c.Acquire(factory_slot=1, network_slot=1, assistants=3, block_left=True, block_right=True))
    assert state.players[0].assistants == 0
    _play_out(state)
    assert state.round == 2
    assert all(p.assistants == 5 and p.agents == 4 for p in state.players)


def test_influence_stays_on_a_slot_after_a_pass_discards_the_factory() -> None:
    # RULINGS: "Agents and assistants stay on the factory slot for the whole round".
    state = fold(2, table_events(2, order=[0, 1]))
    act(state, 0, c.Acquire(factory_slot=1, network_slot=1, assistants=2))
    act(state, 1, c.Pass())  # seat 1 holds agents: factory discarded and refilled
    assert state.influence[0] == [3, 0] and state.agents_at[0] == [1, 0]
    out = _play_out(state, plain_slot=4)
    awards = {e.position: e for e in out if isinstance(e, c.InvestorAwarded)}
    # Positions 0 and 1 touch slot 1, where only seat 0 ever had influence.
    assert awards[0].seat == 0 and awards[0].chip_seat is None
    assert awards[1].seat == 0 and awards[1].chip_seat is None


def test_refill_goes_into_the_slot_just_emptied_from_the_top_of_the_deck() -> None:
    # "Toma la carta en tu posesión y reemplázala con una carta de la parte superior de la baraja."
    state = fold(2, table_events(2))
    top = state.deck[0]
    others = [state.factory[0], state.factory[1], state.factory[3]]
    act(state, 0, c.Acquire(factory_slot=3, network_slot=2))
    assert state.factory[2] == top
    assert [state.factory[0], state.factory[1], state.factory[3]] == others


def test_deck_and_discard_both_empty_leave_the_slot_empty_without_crashing() -> None:
    # Unreachable with the 60 validated cards (at most 52 are ever out), but must not crash.
    state = fold(2, table_events(2))
    state.deck = []
    state.discard = []
    out = act(state, 0, c.Acquire(factory_slot=2, network_slot=1))
    assert not any(isinstance(e, (c.DeckShuffled, c.FactoryRefilled)) for e in out)
    assert state.factory[1] is None
    assert all(a.factory_slot != 2 for a in RULES.legal_actions(state, 1) if isinstance(a, c.Acquire))


# ---- pass -----------------------------------------------------------------------------------


def test_passing_with_agents_is_allowed_at_any_time_even_first_turn_of_everyone() -> None:
    # "Una vez por ronda, puedes optar por no tomar una carta": both pass at once, then both must
    # acquire all four agents; the round still ends with 4 cards each.
    state = fold(2, table_events(2, order=[0, 1]))
    act(state, 0, c.Pass())
    act(state, 1, c.Pass())
    assert state.next_order == [1, 0]
    for _ in range(4):
        assert all(isinstance(a, c.Acquire) for a in RULES.legal_actions(state, 0))
        _take(state, 0)
        _take(state, 1)
    assert state.round == 2 and state.turn_order == [1, 0]


# ---- round end ----------------------------------------------------------------------------


def test_investor_tie_uses_this_rounds_order_not_the_next_one() -> None:
    # "el jugador más alto en la pila de orden de jugadores para la ronda actual (no la siguiente)".
    # Seat 1 passes last, so it tops the next stack; seat 0 is first in the current one.
    state = fold(2, table_events(2, order=[0, 1]))
    act(state, 0, c.Acquire(factory_slot=1, network_slot=1, assistants=1))
    act(state, 1, c.Acquire(factory_slot=1, network_slot=1, assistants=1))
    for _ in range(3):
        _take(state, 0, factory_slot=4)
        _take(state, 1, factory_slot=4)
    act(state, 0, c.Pass())
    out = act(state, 1, c.Pass())
    ended = next(e for e in out if isinstance(e, c.RoundEnded))
    assert ended.next_turn_order == [1, 0]
    award0 = next(e for e in out if isinstance(e, c.InvestorAwarded) and e.position == 0)
    assert (award0.seat, award0.chip_seat) == (0, 1)


def test_investor_more_agents_beats_equal_influence_before_turn_order() -> None:
    # "Si hay un empate, el jugador con más Agentes es el ganador." Position 1 touches slots 1 and 2.
    state = fold(2, table_events(2, order=[0, 1]))
    act(state, 0, c.Acquire(factory_slot=1, network_slot=1, assistants=1))  # 2 influence, 1 agent
    act(state, 1, c.Acquire(factory_slot=1, network_slot=1))  # 1 + 1 = 2 influence, 2 agents
    act(state, 0, c.Acquire(factory_slot=4, network_slot=2))
    act(state, 1, c.Acquire(factory_slot=2, network_slot=2, assistants=0))
    for _ in range(2):
        _take(state, 0, factory_slot=4)
        _take(state, 1, factory_slot=4)
    act(state, 0, c.Pass())
    out = act(state, 1, c.Pass())
    award1 = next(e for e in out if isinstance(e, c.InvestorAwarded) and e.position == 1)
    assert (award1.seat, award1.chip_seat) == (1, 0)


def test_only_this_rounds_cards_are_scored_and_unclaimed_investors_leave() -> None:
    # "Solo se puntúan las cartas tomadas en la ronda actual"; clean-up removes "las fichas de
    # inversor no reclamadas o fichas VP".
    state = fold(2, table_events(2, order=[0, 1]))
    out1 = _play_out(state, plain_slot=4)
    unclaimed = [e.investor for e in out1 if isinstance(e, c.InvestorAwarded) and e.seat is None]
    assert unclaimed  # slot 1..3 were never used: positions 0..2 unclaimed
    assert not any(i in unclaimed for p in state.players for i in p.investors)
    assert all(i not in unclaimed for i in state.investors)
    out2 = _play_out(state, plain_slot=4)
    scored = [e for e in out2 if isinstance(e, c.CardsScored)]
    assert all(len(e.cards) == 4 and e.round == 2 for e in scored)
    assert all(len(p.collected) == 8 for p in state.players)


def test_final_score_counts_chips_card_vp_and_every_investor() -> None:
    log = list(RULES.setup(3, Rng.for_version("final", 3)))
    state = fold(3, log)
    while not state.over:
        seat = RULES.to_act(state)[0]
        log += act(state, seat, RULES.legal_actions(state, seat)[-1], seed=f"f{len(log)}")
    card_vp = [0, 0, 0]
    chips = [0, 0, 0]
    for e in log:
        if isinstance(e, c.CardsScored):
            card_vp[e.seat] += e.total
        if isinstance(e, c.InvestorAwarded) and e.chip_seat is not None:
            chips[e.chip_seat] += 1
    finished = log[-1]
    assert isinstance(finished, c.GameFinished)
    for s, p in enumerate(state.players):
        assert p.vp == card_vp[s] + chips[s]
        types: Counter[str] = Counter(DATA.cards[x].type for x in p.collected)
        held = [p.starting_investor] + [DATA.investors[i].type for i in p.investors]
        assert finished.scores[s] == p.vp + sum(types[t] for t in held)
    top = max(finished.scores)
    assert finished.winners == [s for s, v in enumerate(finished.scores) if v == top]

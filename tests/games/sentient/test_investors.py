"""The rulebook's five investor examples (red starts, white second, yellow third)."""

from __future__ import annotations

import pytest

from contracts import sentient as c
from games.sentient.scoring import investor_slots, rank_investor
from tests.games.sentient.given import ROUND1_INVESTORS, act, fold, table_events

RED, WHITE, YELLOW = 0, 1, 2
ORDER = [RED, WHITE, YELLOW]

# (seat, factory slot, assistants for influence), in turn order R, W, Y, R, W, Y, ...
# Resulting influence per slot (R, W, Y): slot1 3,2,4  slot2 1,2,0  slot3 2,0,2  slot4 1,3,3;
# agents per slot: slot1 1,1,2  slot2 1,1,0  slot3 1,0,1  slot4 1,2,1.
PLACEMENTS = [
    (RED, 1, 2), (WHITE, 1, 1), (YELLOW, 1, 1),
    (RED, 2, 0), (WHITE, 2, 1), (YELLOW, 1, 1),
    (RED, 3, 1), (WHITE, 4, 1), (YELLOW, 3, 1),
    (RED, 4, 0), (WHITE, 4, 0), (YELLOW, 4, 2),
]  # fmt: skip


def _play_example_round() -> list[c.InvestorAwarded]:
    state = fold(3, table_events(3, order=ORDER, investors=ROUND1_INVESTORS))
    for seat, slot, assistants in PLACEMENTS:
        free = next(i + 1 for i, cid in enumerate(state.players[seat].network) if cid is None)
        act(state, seat, c.Acquire(factory_slot=slot, network_slot=free, assistants=assistants))
    act(state, RED, c.Pass())
    act(state, WHITE, c.Pass())
    out = act(state, YELLOW, c.Pass())
    return [e for e in out if isinstance(e, c.InvestorAwarded)]


@pytest.mark.parametrize(
    ("position", "investor_type", "winner", "chip"),
    [
        # Information: yellow has the majority (four); red is second.
        (0, "information", YELLOW, RED),
        # Industry: all three have 4 and equal agents; red is first in turn order, white next.
        (1, "industry", RED, WHITE),
        # Military: red most; white and yellow tied, white earlier in turn order.
        (2, "military", RED, WHITE),
        # Service: yellow most; red and white tied, red earlier in turn order.
        (3, "service", YELLOW, RED),
        # Transport: yellow and white have 3, white has more agents; yellow gets the chip.
        (4, "transport", WHITE, YELLOW),
    ],
)
def test_rulebook_investor_examples(position: int, investor_type: str, winner: int, chip: int) -> None:
    awards = _play_example_round()
    award = awards[position]
    assert award.position == position
    assert award.investor_type == investor_type
    assert (award.seat, award.chip_seat) == (winner, chip)


def test_example_influence_as_described() -> None:
    state = fold(3, table_events(3, order=ORDER, investors=ROUND1_INVESTORS))
    for seat, slot, assistants in PLACEMENTS:
        free = next(i + 1 for i, cid in enumerate(state.players[seat].network) if cid is None)
        act(state, seat, c.Acquire(factory_slot=slot, network_slot=free, assistants=assistants))

    def around(pos: int) -> list[int]:
        return [sum(state.influence[i][s] for i in investor_slots(pos)) for s in ORDER]

    assert around(0)[YELLOW] == 4
    assert around(1) == [4, 4, 4]
    assert around(4)[WHITE] == around(4)[YELLOW] == 3


def test_chips_are_victory_points() -> None:
    awards = _play_example_round()
    chips = [a.chip_seat for a in awards]
    assert chips.count(RED) == 2 and chips.count(WHITE) == 2 and chips.count(YELLOW) == 1


def test_no_influence_no_investor_and_single_contender_no_chip() -> None:
    assert rank_investor([0, 0, 0], [0, 0, 0], ORDER) == (None, None)
    assert rank_investor([0, 2, 0], [0, 1, 0], ORDER) == (WHITE, None)


def test_tie_break_uses_current_round_order_not_seat_number() -> None:
    assert rank_investor([2, 2], [1, 1], [1, 0]) == (1, 0)
    assert rank_investor([2, 2], [1, 2], [0, 1]) == (1, 0)


def test_end_investors_touch_one_slot() -> None:
    assert investor_slots(0) == (0,)
    assert investor_slots(2) == (1, 2)
    assert investor_slots(4) == (3,)

"""Pure scoring: a card from its two adjacent dice, investor majorities, final totals."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from games.sentient.components import Card


def _value(card: Card, measured: int) -> int:
    return max(0, measured - card.offset)


def _if(ok: bool, card: Card) -> int:
    return card.vp if ok else 0


_KINDS: dict[str, Callable[[Card, int, int], int]] = {
    # Information
    "match": lambda c, a, b: (
        c.points_both if a == c.number and b == c.number else c.points_one if a == c.number or b == c.number else 0
    ),
    # Transport
    "left_greater": lambda c, a, b: _if(a > b, c),
    "left_less": lambda c, a, b: _if(a < b, c),
    "equal": lambda c, a, b: _if(a == b, c),
    "differ_by_one": lambda c, a, b: _if(abs(a - b) == 1, c),
    # Industry
    "both_odd": lambda c, a, b: _if(a % 2 == 1 and b % 2 == 1, c),
    "both_even": lambda c, a, b: _if(a % 2 == 0 and b % 2 == 0, c),
    "odd_and_even": lambda c, a, b: _if(a % 2 != b % 2, c),
    "left_odd_right_even": lambda c, a, b: _if(a % 2 == 1 and b % 2 == 0, c),
    "left_even_right_odd": lambda c, a, b: _if(a % 2 == 0 and b % 2 == 1, c),
    # Military
    "sum_at_least": lambda c, a, b: _if(a + b >= c.threshold, c),
    "sum_at_most": lambda c, a, b: _if(a + b <= c.threshold, c),
    "difference_at_least": lambda c, a, b: _if(abs(a - b) >= c.threshold, c),
    "difference_at_most": lambda c, a, b: _if(abs(a - b) <= c.threshold, c),
    # Service: a measured value minus the printed offset, never negative.
    "sum_minus": lambda c, a, b: _value(c, a + b),
    "left_die": lambda c, a, b: _value(c, a),
    "right_die": lambda c, a, b: _value(c, b),
    "lower_die": lambda c, a, b: _value(c, min(a, b)),
    "higher_die": lambda c, a, b: _value(c, max(a, b)),
    "difference": lambda c, a, b: _value(c, abs(a - b)),
}

SCORING_KINDS: frozenset[str] = frozenset(_KINDS)


def score_card(card: Card, left_die: int, right_die: int) -> int:
    """Points of `card` connected between dice showing `left_die` and `right_die`."""
    points: int = _KINDS[card.kind](card, left_die, right_die)
    return points


def calibrate(value: int, modifier: str) -> int:
    """One die after a + / - / = corner: 6 + 1 wraps to 1 and 1 - 1 wraps to 6."""
    if modifier == "+":
        return 1 if value == 6 else value + 1
    if modifier == "-":
        return 6 if value == 1 else value - 1
    return value


def investor_slots(position: int, num_slots: int = 4) -> tuple[int, ...]:
    """0-based factory slot indexes adjacent to investor `position` (0..num_slots); ends touch one."""
    return tuple(s for s in (position - 1, position) if 0 <= s < num_slots)


def rank_investor(
    influence: Sequence[int], agents: Sequence[int], turn_order: Sequence[int]
) -> tuple[int | None, int | None]:
    """(investor seat, 1-VP chip seat) from per-seat influence and agents on the adjacent slots.

    Only influence > 0 counts; ties go to more agents, then to the seat higher in `turn_order`.
    """
    rank = {seat: i for i, seat in enumerate(turn_order)}
    contenders = sorted(
        (s for s in range(len(influence)) if influence[s] > 0),
        key=lambda s: (-influence[s], -agents[s], rank.get(s, len(rank))),
    )
    first = contenders[0] if contenders else None
    second = contenders[1] if len(contenders) > 1 else None
    return first, second

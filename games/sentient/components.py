"""Sentient component data: loaded from data/sentient.toml, validated, indexed.

The rules read every card, investor and board value from here, so correcting a reconstructed
face means editing the TOML file only.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any, Literal

import msgspec

from games.kit import DataError, fail, read_toml
from games.kit import published as kit_published

DATA_FILE = Path(__file__).parent / "data" / "sentient.toml"

CardType = Literal["information", "transport", "industry", "military", "service"]
Modifier = Literal["+", "-", "="]

CARD_TYPES: tuple[str, ...] = ("information", "transport", "industry", "military", "service")
ROUNDS = 3
CARDS_PER_TYPE = 12

# Which scoring kinds each type may use, and the parameters each kind needs.
KINDS_BY_TYPE: dict[str, frozenset[str]] = {
    "information": frozenset({"match"}),
    "transport": frozenset({"left_greater", "left_less", "equal", "differ_by_one"}),
    "industry": frozenset({"both_odd", "both_even", "odd_and_even", "left_odd_right_even", "left_even_right_odd"}),
    "military": frozenset({"sum_at_least", "sum_at_most", "difference_at_least", "difference_at_most"}),
    "service": frozenset({"sum_minus", "left_die", "right_die", "lower_die", "higher_die", "difference"}),
}


class Card(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    id: str
    type: CardType
    left: Modifier
    right: Modifier
    kind: str
    # Fixed award of the condition kinds (transport, industry, military).
    vp: int = 0
    # Information: the printed number and the points for one / both adjacent dice showing it.
    number: int = 0
    points_one: int = 0
    points_both: int = 0
    # Military thresholds.
    threshold: int = 0
    # Service: subtracted from the measured value (points never go below 0).
    offset: int = 0


class Investor(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    id: str
    type: CardType
    round: int


class BoardSide(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    id: str
    name: str
    starting_investor: CardType


class _File(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    data_version: str
    cards: list[Card]
    investors: list[Investor]
    board_sides: list[BoardSide]


class SentientData(msgspec.Struct, frozen=True, kw_only=True):
    data_version: str
    cards: dict[str, Card]
    investors: dict[str, Investor]
    board_sides: dict[str, BoardSide]
    # Investor ids per round (index 0 = round 1), in file order.
    investors_by_round: tuple[tuple[str, ...], ...]
    # Card ids in file order: the deck before its first shuffle.
    card_ids: tuple[str, ...]
    side_ids: tuple[str, ...]


def _check_card(path: Path, index: int, card: Card) -> None:
    where = f"cards[{index}] (id {card.id!r})"
    if card.kind not in KINDS_BY_TYPE[card.type]:
        allowed = ", ".join(sorted(KINDS_BY_TYPE[card.type]))
        raise fail(path, where + ".kind", f"{card.kind!r} is not a {card.type} kind (one of: {allowed})")
    if card.kind == "match":
        if not 1 <= card.number <= 6:
            raise fail(path, where + ".number", "must be a die face 1..6")
        if card.points_one <= 0 or card.points_both <= 0:
            raise fail(path, where + ".points_one/points_both", "must be positive")
    elif card.type == "military":
        if not 0 <= card.threshold <= 12:
            raise fail(path, where + ".threshold", "must be within 0..12")
        if card.vp <= 0:
            raise fail(path, where + ".vp", "must be positive")
    elif card.type == "service":
        if card.offset < 0:
            raise fail(path, where + ".offset", "must not be negative")
    elif card.vp <= 0:
        raise fail(path, where + ".vp", "must be positive")


def parse(raw: dict[str, Any], path: Path = DATA_FILE) -> SentientData:
    """Validate decoded TOML into `SentientData`, raising `DataError` naming file and field."""
    try:
        f = msgspec.convert(raw, _File)
    except msgspec.ValidationError as exc:
        # msgspec's message ends with the path, e.g. "... - at `$.cards[3].left`".
        raise DataError(f"{path}: {exc}") from exc

    ids = [c.id for c in f.cards] + [i.id for i in f.investors] + [s.id for s in f.board_sides]
    dupes = sorted(k for k, n in Counter(ids).items() if n > 1)
    if dupes:
        raise fail(path, "id", f"duplicate ids {dupes}")
    if len(f.cards) != CARDS_PER_TYPE * len(CARD_TYPES):
        raise fail(path, "cards", f"expected {CARDS_PER_TYPE * len(CARD_TYPES)} cards, found {len(f.cards)}")
    per_type: Counter[str] = Counter(c.type for c in f.cards)
    for t in CARD_TYPES:
        if per_type[t] != CARDS_PER_TYPE:
            raise fail(path, "cards", f"expected {CARDS_PER_TYPE} {t} cards, found {per_type[t]}")
    for i, card in enumerate(f.cards):
        _check_card(path, i, card)

    pairs = Counter((inv.round, inv.type) for inv in f.investors)
    expected = {(r, t) for r in range(1, ROUNDS + 1) for t in CARD_TYPES}
    if len(f.investors) != len(expected) or set(pairs) != expected:
        raise fail(path, "investors", "expected exactly one investor of each type for each round 1..3")

    side_types = [s.starting_investor for s in f.board_sides]
    if len(side_types) != len(CARD_TYPES) or set(side_types) != set(CARD_TYPES):
        raise fail(path, "board_sides", "expected 5 sides, each with a different starting investor type")

    by_round = tuple(tuple(inv.id for inv in f.investors if inv.round == r) for r in range(1, ROUNDS + 1))
    return SentientData(
        data_version=f.data_version,
        cards={c.id: c for c in f.cards},
        investors={i.id: i for i in f.investors},
        board_sides={s.id: s for s in f.board_sides},
        investors_by_round=by_round,
        card_ids=tuple(c.id for c in f.cards),
        side_ids=tuple(s.id for s in f.board_sides),
    )


def load(path: Path = DATA_FILE) -> SentientData:
    return parse(read_toml(path)[0], path)


def published(path: Path = DATA_FILE) -> dict[str, Any]:
    """The data file as GET /v1/catalog/<game> publishes it (games.kit.published)."""
    return kit_published(path, _File)

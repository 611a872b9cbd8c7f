"""Artifacts, Inc. commands and events. On the wire each type is named "artifacts." + the class name.

Events record outcomes (dice values, cards drawn, dollars paid and earned, reputation marked) so
that folding them rebuilds the state with no randomness and no rules logic. Numbers are as players
count them: card rows 1 (top) and 2 (bottom), columns are integers (the starting cards sit in
columns 1..4), action slots on a card 1..n in printed order, museum order boxes 1..n in reading
order (top-left first). Dice are named by their face value: two dice showing the same value are
interchangeable, so a command says "a 5", not "the third die".
"""

from __future__ import annotations

import msgspec

from contracts.command import Command
from contracts.limits import Ints, Word, Words

# ---- commands ---------------------------------------------------------------------------


class ArrangeStart(Command, frozen=True, kw_only=True):
    """Set-up: lay your four starting cards in the top row, left to right (columns 1..4)."""

    cards: Words


class UseAction(Command, frozen=True, kw_only=True):
    """Place a die on an action without parameters (an expedition, a dollar action, Guide Work)."""

    die: int
    card: Word
    action: int = 1


class Buy(Command, frozen=True, kw_only=True):
    """Place a die on a buy action and buy `market` (a face-up A-E card), laid at (row, col)."""

    die: int
    card: Word
    action: int
    market: Word
    row: int
    col: int


class Upgrade(Command, frozen=True, kw_only=True):
    """Place a die on a buy action and turn your own Level 1 card `target` to Level 2."""

    die: int
    card: Word
    action: int
    target: Word


class SellToMuseum(Command, frozen=True, kw_only=True):
    """Place a die on a museum and fill order box `box` with that many artifacts of its kind."""

    die: int
    museum: Word
    box: int


class SellToCollectors(Command, frozen=True, kw_only=True):
    """Place a die on Private Collectors and sell any mix of artifacts (at least one)."""

    die: int
    fossil: int = 0
    scroll: int = 0
    gem: int = 0
    statue: int = 0


class Dive(Command, frozen=True, kw_only=True):
    """Place one or more dice on Dive; their sum must reach the top underwater card's number."""

    dice: Ints


class EndTurn(Command, frozen=True, kw_only=True):
    """Stop placing dice (unplaced dice are lost); the next player rolls."""


# ---- events -----------------------------------------------------------------------------


class TableSet(msgspec.Struct, frozen=True, kw_only=True):
    """Public cards laid out; museums on the side for the player count ("2p" or "3p": `boxes` order
    boxes each); the underwater stack, top first."""

    museum_side: str
    public: list[str]
    museums: list[str]
    boxes: list[int]
    underwater: list[str]


class DeckShuffled(msgspec.Struct, frozen=True, kw_only=True):
    """An asset deck (A..E) shuffled. `cards` (top first) is secret: the public copy has None."""

    deck: str
    size: int
    cards: list[str] | None = None


class MarketRefilled(msgspec.Struct, frozen=True, kw_only=True):
    """Cards drawn face up from the top of `deck` into its market slots (same length lists)."""

    deck: str
    slots: list[int]
    cards: list[str]


class FirstPlayerRolled(msgspec.Struct, frozen=True, kw_only=True):
    """Each of `seats` rolled two dice (`rolls[i]` for `seats[i]`); a tie for highest rolls again."""

    seats: list[int]
    rolls: list[list[int]]


class PlayersSeated(msgspec.Struct, frozen=True, kw_only=True):
    """Turn order (clockwise from the first player) and each seat's starting dollars."""

    order: list[int]
    dollars: list[int]


class StartArranged(msgspec.Struct, frozen=True, kw_only=True):
    """A seat's four starting cards, Level 1 up, in the top row at columns 1..4 (left to right)."""

    seat: int
    cards: list[str]


class TurnStarted(msgspec.Struct, frozen=True, kw_only=True):
    """The active seat rolled one die per adventurer symbol it owns (at most the dice in the box)."""

    seat: int
    round: int
    dice: list[int]


class DicePlaced(msgspec.Struct, frozen=True, kw_only=True):
    """Dice (face values) put on an action slot: a card's `action` (1-based), or "dive"."""

    seat: int
    dice: list[int]
    card: str
    action: int


class ArtifactsFound(msgspec.Struct, frozen=True, kw_only=True):
    seat: int
    kind: str
    count: int


class DollarsEarned(msgspec.Struct, frozen=True, kw_only=True):
    seat: int
    amount: int


class AssetBought(msgspec.Struct, frozen=True, kw_only=True):
    """`card` taken from `deck`'s market slot `slot`, paid for, and laid at (row, col)."""

    seat: int
    card: str
    deck: str
    slot: int
    row: int
    col: int
    dollars: int
    scrolls: int


class AssetUpgraded(msgspec.Struct, frozen=True, kw_only=True):
    """An owned card turned to its Level 2 side for its cost again (dice and cubes stay)."""

    seat: int
    card: str
    dollars: int
    scrolls: int


class MuseumOrderFilled(msgspec.Struct, frozen=True, kw_only=True):
    """A cube on order box `box`; `count` artifacts of `kind` sold for `dollars` (1 each + bonus)."""

    seat: int
    museum: str
    box: int
    kind: str
    count: int
    dollars: int


class CollectorsPaid(msgspec.Struct, frozen=True, kw_only=True):
    """Artifacts sold to Private Collectors: `sold` per kind (fossil, scroll, gem, statue)."""

    seat: int
    sold: list[int]
    dollars: int


class UnderwaterFound(msgspec.Struct, frozen=True, kw_only=True):
    """The top underwater card taken by a dive; it sits aside, not in the rows."""

    seat: int
    card: str
    number: int
    find: str


class ReputationMarked(msgspec.Struct, frozen=True, kw_only=True):
    """The seat's cube moved on the reputation track to the visible total."""

    seat: int
    reputation: int


class EndTriggered(msgspec.Struct, frozen=True, kw_only=True):
    """A seat reached the end reputation: the round is finished, then the game ends."""

    seat: int
    round: int
    reputation: int


class TurnEnded(msgspec.Struct, frozen=True, kw_only=True):
    """Dice leave the cards; `next_seat` is None when the game ends after this turn."""

    seat: int
    unplaced: list[int]
    next_seat: int | None


class MuseumMajority(msgspec.Struct, frozen=True, kw_only=True):
    """End of game: the museum's majority reputation to `seat` (None: no cube on it)."""

    museum: str
    seat: int | None
    cubes: list[int]
    reputation: int


class GameFinished(msgspec.Struct, frozen=True, kw_only=True):
    reputation: list[int]
    dollars: list[int]
    winners: list[int]


COMMANDS: tuple[type[msgspec.Struct], ...] = (
    ArrangeStart,
    UseAction,
    Buy,
    Upgrade,
    SellToMuseum,
    SellToCollectors,
    Dive,
    EndTurn,
)

EVENTS: tuple[type[msgspec.Struct], ...] = (
    TableSet,
    DeckShuffled,
    MarketRefilled,
    FirstPlayerRolled,
    PlayersSeated,
    StartArranged,
    TurnStarted,
    DicePlaced,
    ArtifactsFound,
    DollarsEarned,
    AssetBought,
    AssetUpgraded,
    MuseumOrderFilled,
    CollectorsPaid,
    UnderwaterFound,
    ReputationMarked,
    EndTriggered,
    TurnEnded,
    MuseumMajority,
    GameFinished,
)

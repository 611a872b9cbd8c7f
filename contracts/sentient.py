"""Sentient commands and events. On the wire each type is named "sentient." + the class name.

Events record outcomes (cards drawn, dice values, points, who won what) so that folding them
rebuilds the state with no randomness and no scoring logic. Slots are 1-based as players count
them: factory slots 1..4, network slots 1..4 (slot i sits between die i-1 and die i, dice 0..4),
investor positions 0..4 (position i sits between factory slots i and i+1).
"""

from __future__ import annotations

import msgspec

from contracts.command import Command

# ---- commands ---------------------------------------------------------------------------


class Acquire(Command, frozen=True, kw_only=True):
    """Place an agent on a factory card, connect that card to a network slot, calibrate."""

    factory_slot: int
    network_slot: int
    # Assistants placed with the agent, each +1 influence on that factory slot.
    assistants: int = 0
    # One assistant each: ignore the card's left / right corner (only a + or - corner).
    block_left: bool = False
    block_right: bool = False


class Pass(Command, frozen=True, kw_only=True):
    """Once per round: move the spare turn marker to the next round's stack."""


# ---- events -----------------------------------------------------------------------------


class BoardsDealt(msgspec.Struct, frozen=True, kw_only=True):
    """Right-hand board side per seat; each prints that seat's starting investor type."""

    sides: list[str]
    starting_investors: list[str]


class DeckShuffled(msgspec.Struct, frozen=True, kw_only=True):
    """A new draw pile. `cards` (top first) is secret: the public copy has None and keeps `size`."""

    size: int
    # True when the discard pile was shuffled to make the deck (the discard pile is then empty).
    from_discard: bool = False
    cards: list[str] | None = None


class RoundStarted(msgspec.Struct, frozen=True, kw_only=True):
    """Agents and assistants back in hand; the round's investors (with chips) laid out."""

    round: int
    # Seats top of the stack first: the order of play for the whole round.
    turn_order: list[int]
    # Investor ids for positions 0..4.
    investors: list[str]


class FactoryRefilled(msgspec.Struct, frozen=True, kw_only=True):
    """Cards drawn from the top of the deck into factory slots (same length lists)."""

    slots: list[int]
    cards: list[str]


class DiceRolled(msgspec.Struct, frozen=True, kw_only=True):
    seat: int
    values: list[int]


class CardAcquired(msgspec.Struct, frozen=True, kw_only=True):
    """An agent (and `assistants` for influence) placed on a factory slot; the card connected."""

    seat: int
    factory_slot: int
    card: str
    network_slot: int
    assistants: int = 0
    blocked_left: bool = False
    blocked_right: bool = False


class DiceCalibrated(msgspec.Struct, frozen=True, kw_only=True):
    """The two dice next to `network_slot` (dice slot-1 and slot) before and after."""

    seat: int
    network_slot: int
    before: list[int]
    after: list[int]


class PlayerPassed(msgspec.Struct, frozen=True, kw_only=True):
    """Marker put on top of the next round's stack; `discarded` factory cards went to the discard pile."""

    seat: int
    discarded: list[str] = msgspec.field(default_factory=list)


class TurnEnded(msgspec.Struct, frozen=True, kw_only=True):
    """`next_seat` is None when nobody has anything left to do this round."""

    seat: int
    next_seat: int | None


class CardsScored(msgspec.Struct, frozen=True, kw_only=True):
    """Round-end points of one seat's network, card by card (slot order); cards go to the pile."""

    seat: int
    round: int
    cards: list[str]
    points: list[int]
    total: int


class InvestorAwarded(msgspec.Struct, frozen=True, kw_only=True):
    """Investor at `position` to `seat` (None: nobody had influence); its 1-VP chip to `chip_seat`."""

    position: int
    investor: str
    investor_type: str
    seat: int | None
    chip_seat: int | None


class RoundEnded(msgspec.Struct, frozen=True, kw_only=True):
    """Factory leftovers went to the discard pile; `next_turn_order` is the passing stack."""

    round: int
    discarded: list[str]
    next_turn_order: list[int]


class GameFinished(msgspec.Struct, frozen=True, kw_only=True):
    scores: list[int]
    winners: list[int]
    vp: list[int]
    investor_points: list[int]


COMMANDS: tuple[type[msgspec.Struct], ...] = (Acquire, Pass)

EVENTS: tuple[type[msgspec.Struct], ...] = (
    BoardsDealt,
    DeckShuffled,
    RoundStarted,
    FactoryRefilled,
    DiceRolled,
    CardAcquired,
    DiceCalibrated,
    PlayerPassed,
    TurnEnded,
    CardsScored,
    InvestorAwarded,
    RoundEnded,
    GameFinished,
)

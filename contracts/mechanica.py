"""Mechanica commands and events. On the wire each type is named "mechanica." + the class name.

Events record outcomes (improvements drawn, where every bot moved, what each improvement made,
money paid) so that folding them rebuilds the state with no randomness and no rule logic.
Coordinates are 1-based as players count them: factory rows 1..5 from the top, columns 1..5
from the start zone (column 1) to the loading dock (column 5), holes 1.. in belt order within a
square. Trucks are named by their dock row; shop spaces by their printed price (7, 5, 3, 1).
Bot models are "basic", "plus", "deluxe".
"""

from __future__ import annotations

import msgspec

from contracts.command import Command
from contracts.limits import Ints, Word

# ---- shared shapes ----------------------------------------------------------------------


class Spot(msgspec.Struct, frozen=True, kw_only=True):
    """One hole of one square of a seat's factory."""

    row: int
    col: int
    hole: int


class BotMove(msgspec.Struct, frozen=True, kw_only=True):
    """A bot carried by the belt from one hole to the first free hole along the arrows."""

    model: str
    source: Spot
    target: Spot


class PlacedBot(msgspec.Struct, frozen=True, kw_only=True):
    """A bot from the supply put into a seat's hole."""

    seat: int
    model: str
    spot: Spot


# ---- commands ---------------------------------------------------------------------------


class Sell(Command, frozen=True, kw_only=True):
    """Step 1 of a turn: sell one bot of `model` from the truck on dock row `row`."""

    row: int
    model: Word


class Install(Command, frozen=True, kw_only=True):
    """Buy the improvement on shop space `price` and install it on square (`row`, `col`);
    whatever stood there is demolished."""

    price: int
    row: int
    col: int


class Recycle(Command, frozen=True, kw_only=True):
    """Buy the improvement on shop space `price` and recycle it: its recycle bots go, in order,
    into the start-zone holes of `rows` (as many as there are free holes, at most one per bot)."""

    price: int
    rows: Ints = msgspec.field(default_factory=list)


class CompleteBlueprint(Command, frozen=True, kw_only=True):
    """Any time in your turn: hand in the face-up blueprint of `pile` (1 or 2); bot i of the
    blueprint comes from the truck on dock row rows[i]."""

    pile: int
    rows: Ints


class BuyTruck(Command, frozen=True, kw_only=True):
    """Any time in your turn: a "big" or "huge" truck replaces the small truck on dock row `row`."""

    row: int
    size: Word


class UpgradeTruck(Command, frozen=True, kw_only=True):
    """Any time in your turn: the big truck on dock row `row` becomes a huge one."""

    row: int


class BuyFork(Command, frozen=True, kw_only=True):
    """Any time in your turn: a fork on floor square (`row`, `col`) with its output arrow
    `direction` ("up", "down" or "right")."""

    row: int
    col: int
    direction: Word


class SetFork(Command, frozen=True, kw_only=True):
    """Any time in your turn: turn your fork on (`row`, `col`) to a new output arrow."""

    row: int
    col: int
    direction: Word


class EndTurn(Command, frozen=True, kw_only=True):
    """Steps 3 and 4: make bots, rotate the shop. `rows` place the recycle bots of an
    improvement that falls into the Recycler (empty when none falls)."""

    rows: Ints = msgspec.field(default_factory=list)


# ---- events -----------------------------------------------------------------------------


class GameSetUp(msgspec.Struct, frozen=True, kw_only=True):
    """Every seat gets a factory, a vault, `money` in the wallet and a `starting_bot` in the
    hole of its Basic Fabricator; `first_player` takes the first player card."""

    first_player: int
    money: int
    starting_bot: str


class ImprovementsShuffled(msgspec.Struct, frozen=True, kw_only=True):
    """The improvements, shuffled: the stack (top first) and the Extras. The order is secret:
    the public copy has None and keeps the sizes."""

    stack_size: int
    extras_size: int
    stack: list[str] | None = None
    extras: list[str] | None = None


class BlueprintsShuffled(msgspec.Struct, frozen=True, kw_only=True):
    """The blueprints in their two piles, top first; the top card of each is face up
    (`face_up`). The rest of each pile is secret: the public copy has `piles` None."""

    sizes: list[int]
    face_up: list[str]
    piles: list[list[str]] | None = None


class ImprovementDrawn(msgspec.Struct, frozen=True, kw_only=True):
    """The top improvement of the stack or the Extras (`source`) onto shop space `price`."""

    improvement: str
    price: int
    source: str


class WorkdayStarted(msgspec.Struct, frozen=True, kw_only=True):
    workday: int


class BotsMoved(msgspec.Struct, frozen=True, kw_only=True):
    """Step 1 of a factory run: every bot that moved, in the order they moved."""

    seat: int
    moves: list[BotMove]


class ImprovementActivated(msgspec.Struct, frozen=True, kw_only=True):
    """Step 2 of a factory run: the improvement on (`row`, `col`) destroyed the bots of its input
    holes (`consumed`, models) and made `made` into its free output holes; bots it made that found
    no free output hole are `lost`. `wallet` and `vault` money went to the owner."""

    seat: int
    row: int
    col: int
    improvement: str
    consumed: list[Spot]
    consumed_models: list[str]
    made: list[PlacedBot] = msgspec.field(default_factory=list)
    lost: list[str] = msgspec.field(default_factory=list)
    wallet: int = 0
    vault: int = 0


class TurnStarted(msgspec.Struct, frozen=True, kw_only=True):
    seat: int


class BotSold(msgspec.Struct, frozen=True, kw_only=True):
    seat: int
    row: int
    hole: int
    model: str
    money: int


class ImprovementBought(msgspec.Struct, frozen=True, kw_only=True):
    seat: int
    improvement: str
    price: int


class ImprovementInstalled(msgspec.Struct, frozen=True, kw_only=True):
    """Installed on (`row`, `col`). `replaced` is what stood there (an improvement id, or a
    printed/bought piece such as "basic_fabricator", "small", "big", "huge"; "" for nothing);
    bots in holes the new piece lacks went back to the supply (`lost`)."""

    seat: int
    improvement: str
    row: int
    col: int
    replaced: str = ""
    lost: list[str] = msgspec.field(default_factory=list)


class ImprovementRecycled(msgspec.Struct, frozen=True, kw_only=True):
    """Recycled (bought, or fallen into the Recycler on `seat`'s turn): `placed` bots went into
    start-zone holes, the rest of its recycle value found no free hole (`lost`)."""

    seat: int
    improvement: str
    placed: list[PlacedBot]
    lost: list[str] = msgspec.field(default_factory=list)
    from_rotation: bool = False


class BlueprintCompleted(msgspec.Struct, frozen=True, kw_only=True):
    """The bots left the trucks (`spots`, `models`) and `money` went into the vault; both
    blueprints are now sideways."""

    seat: int
    pile: int
    blueprint: str
    spots: list[Spot]
    models: list[str]
    money: int


class TruckBought(msgspec.Struct, frozen=True, kw_only=True):
    seat: int
    row: int
    size: str
    cost: int
    replaced: str


class ForkBought(msgspec.Struct, frozen=True, kw_only=True):
    seat: int
    row: int
    col: int
    direction: str
    cost: int


class ForkSet(msgspec.Struct, frozen=True, kw_only=True):
    seat: int
    row: int
    col: int
    direction: str


class BotsMade(msgspec.Struct, frozen=True, kw_only=True):
    """Step 3: one bot in the centre hole of each of `seat`'s fabricators that had it free, and
    the bots an Overactive Fabricator gives the other players."""

    seat: int
    bots: list[PlacedBot]


class ShopRotated(msgspec.Struct, frozen=True, kw_only=True):
    """One notch: every improvement moves to the next cheaper space; `fell` (or "") dropped into
    the Recycler. `second` marks the 2-3 player double rotation."""

    seat: int
    fell: str = ""
    second: bool = False


class TurnEnded(msgspec.Struct, frozen=True, kw_only=True):
    """`next_seat` is None when the round is complete and the workday ends."""

    seat: int
    next_seat: int | None


class BlueprintsReplaced(msgspec.Struct, frozen=True, kw_only=True):
    """End of a workday with sideways blueprints: each face-up card went to the bottom of its
    pile and the next card (`face_up`, per pile) was turned up."""

    face_up: list[str]


class WorkdayEnded(msgspec.Struct, frozen=True, kw_only=True):
    workday: int


class GameFinished(msgspec.Struct, frozen=True, kw_only=True):
    """Totals = wallet + vault + end values of installed improvements; ties go to the larger
    vault, then the win is shared."""

    scores: list[int]
    winners: list[int]
    wallet: list[int]
    vault: list[int]
    improvements: list[int]


COMMANDS: tuple[type[msgspec.Struct], ...] = (
    Sell,
    Install,
    Recycle,
    CompleteBlueprint,
    BuyTruck,
    UpgradeTruck,
    BuyFork,
    SetFork,
    EndTurn,
)

EVENTS: tuple[type[msgspec.Struct], ...] = (
    GameSetUp,
    ImprovementsShuffled,
    BlueprintsShuffled,
    ImprovementDrawn,
    WorkdayStarted,
    BotsMoved,
    ImprovementActivated,
    TurnStarted,
    BotSold,
    ImprovementBought,
    ImprovementInstalled,
    ImprovementRecycled,
    BlueprintCompleted,
    TruckBought,
    ForkBought,
    ForkSet,
    BotsMade,
    ShopRotated,
    TurnEnded,
    BlueprintsReplaced,
    WorkdayEnded,
    GameFinished,
)

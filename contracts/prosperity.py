"""Prosperity commands and events. On the wire each type is named "prosperity." + the class name.

Events record outcomes (tiles drawn, euros and discs gained or lost, points, research steps) so
that folding them rebuilds the state with no randomness and no scoring logic. Seats are 0-based
like every dicestream game; tile, board-side and board-space ids are those of
games/prosperity/data/prosperity.toml. Research tracks are "energy" and "ecology".
"""

from __future__ import annotations

import msgspec

from contracts.command import Command
from contracts.limits import Word

# ---- commands ---------------------------------------------------------------------------


class ChooseBoard(Command, frozen=True, kw_only=True):
    """Set-up: play the individual board with this side up ("silver" normal, "black" hard)."""

    side: Word


class SettleEnergy(Command, frozen=True, kw_only=True):
    """A pending negative-energy count: take `discs` pollution discs, pay 100 euros per other level."""

    discs: int


class SplitResearch(Command, frozen=True, kw_only=True):
    """A pending research count: `energy` steps on the energy track, the rest on the ecology track."""

    energy: int


class Income(Command, frozen=True, kw_only=True):
    """Action: take 100 euros from the bank."""


class CleanUp(Command, frozen=True, kw_only=True):
    """Action: remove the highest disc of your pollution track."""


class Research(Command, frozen=True, kw_only=True):
    """Action: advance one space on the "energy" or "ecology" research track."""

    track: Word


class BuyTile(Command, frozen=True, kw_only=True):
    """Action: buy a tile from the research board and place it on board space `space` (None for a
    special tile, which is applied and discarded)."""

    tile: Word
    space: Word | None = None


# ---- events -----------------------------------------------------------------------------


class TableSet(msgspec.Struct, frozen=True, kw_only=True):
    """The undated tiles face up on the research board; every player's money, discs and research
    markers; the first player (drawn at random)."""

    research_board: list[str]
    first_player: int
    money: int
    discs: int
    research: int


class DeckBuilt(msgspec.Struct, frozen=True, kw_only=True):
    """The decade deck, top first. `backs` (the decade printed on each back) is public; `tiles` is
    secret: the public copy has None."""

    size: int
    backs: list[int]
    tiles: list[str] | None = None


class BoardChosen(msgspec.Struct, frozen=True, kw_only=True):
    """A seat's board side and the energy/ecology totals of its printed symbols (the red square)."""

    seat: int
    side: str
    energy: int
    ecology: int


class TileDrawn(msgspec.Struct, frozen=True, kw_only=True):
    """Turn `turn` (1..36) of `seat`: the top tile and the symbol it highlights for the count."""

    seat: int
    turn: int
    tile: str
    symbol: str


class Counted(msgspec.Struct, frozen=True, kw_only=True):
    """One seat's count of `symbol`. `level`: the total or number of symbols counted (times
    `times`); then the outcome: euros gained (+) or paid (-), discs added (+) or removed (-),
    prosperity points and research steps actually taken."""

    seat: int
    symbol: str
    final: bool = False
    times: int = 1
    level: int = 0
    money: int = 0
    discs: int = 0
    points: int = 0
    energy_steps: int = 0
    ecology_steps: int = 0


class TileFiled(msgspec.Struct, frozen=True, kw_only=True):
    """The drawn tile joins the research board (by its side and level); the actions begin."""

    tile: str


class IncomeTaken(msgspec.Struct, frozen=True, kw_only=True):
    seat: int
    amount: int


class CleanedUp(msgspec.Struct, frozen=True, kw_only=True):
    """The highest disc of the seat's pollution track went back to the reserve."""

    seat: int


class ResearchAdvanced(msgspec.Struct, frozen=True, kw_only=True):
    seat: int
    track: str


class TileBought(msgspec.Struct, frozen=True, kw_only=True):
    """A tile bought for `price` and placed on `space`, on top of `covered` (a tile id, or None for
    an empty or printed space); `energy`/`ecology` are the seat's recomputed totals."""

    seat: int
    tile: str
    price: int
    space: str
    covered: str | None
    energy: int
    ecology: int


class SpecialApplied(msgspec.Struct, frozen=True, kw_only=True):
    """A special tile bought for `price`, applied (points gained, discs removed) and discarded."""

    seat: int
    tile: str
    price: int
    points: int = 0
    discs_removed: int = 0


class TurnEnded(msgspec.Struct, frozen=True, kw_only=True):
    """`next_seat` is None after the turn that drew the last tile: final scoring follows."""

    seat: int
    next_seat: int | None


class FinalScoringStarted(msgspec.Struct, frozen=True, kw_only=True):
    """Seats in counting order (from the player who drew the last tile, clockwise)."""

    order: list[int]


class MoneyConverted(msgspec.Struct, frozen=True, kw_only=True):
    """`money` euros discarded for `points` (one per 300); `money_left` stays for tie-breaks."""

    seat: int
    money: int
    points: int
    money_left: int


class ResearchMajority(msgspec.Struct, frozen=True, kw_only=True):
    """One research track's final positions and the points each seat scores for them."""

    track: str
    positions: list[int]
    points: list[int]


class GameFinished(msgspec.Struct, frozen=True, kw_only=True):
    scores: list[int]
    money: list[int]
    winners: list[int]


COMMANDS: tuple[type[msgspec.Struct], ...] = (
    ChooseBoard,
    SettleEnergy,
    SplitResearch,
    Income,
    CleanUp,
    Research,
    BuyTile,
)

EVENTS: tuple[type[msgspec.Struct], ...] = (
    TableSet,
    DeckBuilt,
    BoardChosen,
    TileDrawn,
    Counted,
    TileFiled,
    IncomeTaken,
    CleanedUp,
    ResearchAdvanced,
    TileBought,
    SpecialApplied,
    TurnEnded,
    FinalScoringStarted,
    MoneyConverted,
    ResearchMajority,
    GameFinished,
)

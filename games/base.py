"""The contract every game's rules fulfil: a pure decider plus what bots and views need."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Generic, Protocol, TypeVar

import msgspec

from games.rng import Rng

S = TypeVar("S")


class Rejected(msgspec.Struct, frozen=True, kw_only=True):
    """A refusal: which rule (id as in docs/rules/<game>.md), its text, and what was wrong."""

    rule: str
    text: str
    detail: str = ""


class Result(msgspec.Struct, frozen=True, kw_only=True):
    scores: list[int]
    winners: list[int]
    # Per-seat breakdown for people (e.g. {"vp": 31, "investors": 12}); not used to rank.
    breakdown: list[dict[str, int]] = msgspec.field(default_factory=list)


class Rules(Protocol, Generic[S]):
    """One game. Every method is pure: no I/O, no clock, randomness only through `rng`."""

    name: str
    rules_version: str
    data_version: str
    min_players: int
    max_players: int
    command_types: Sequence[type[msgspec.Struct]]
    event_types: Sequence[type[msgspec.Struct]]

    def setup(self, num_players: int, rng: Rng) -> list[msgspec.Struct]:
        """Events that set the table (shuffles, deals, rolls), outcomes included."""
        ...

    def initial_state(self, num_players: int) -> S:
        """The state before the setup events are folded in."""
        ...

    def decide(self, state: S, seat: int, command: msgspec.Struct, rng: Rng) -> list[msgspec.Struct] | Rejected:
        """The events `command` of `seat` produces, or the rule that refuses it. Called by
        `games.match.decide` only while the game runs and with one of `command_types`: it answers
        GAME-NOT-RUNNING and GAME-UNKNOWN-TYPE itself, so a game does not check either again."""
        ...

    def evolve(self, state: S, event: msgspec.Struct) -> S:
        """May update `state` in place and return it: the caller owns the state it folds into."""
        ...

    def clone(self, state: S) -> S:
        """An independent copy, for look-ahead (the referee's end-of-command checks, search bots)."""
        ...

    def to_act(self, state: S) -> list[int]:
        """Seats whose decision the game is waiting for (empty once over)."""
        ...

    def legal_actions(self, state: S, seat: int) -> list[msgspec.Struct]:
        """Every command `seat` may send now; each one `decide` accepts."""
        ...

    def default_action(self, state: S, seat: int) -> msgspec.Struct:
        """What the referee plays for a seat that timed out or resigned (documented per game)."""
        ...

    def view(self, state: S, seat: int | None) -> msgspec.Struct:
        """What `seat` may see (None: a spectator), as the game's view struct (its spec's
        `view`, in contracts/views/). Never includes hidden information."""
        ...

    def public_event(self, event: msgspec.Struct) -> msgspec.Struct | None:
        """The event as every audience may see it: secrets removed, or None to withhold it."""
        ...

    def is_over(self, state: S) -> bool: ...

    def result(self, state: S) -> Result: ...


class DecidesInPlace(Protocol):
    """What a game may add to `Rules` for offline self-play and search, where the caller owns the
    state alone: `decide` folding its events straight into `state` instead of into a copy."""

    def decide_into(self, state: Any, seat: int, command: msgspec.Struct, rng: Rng) -> list[msgspec.Struct] | Rejected:
        """As `decide`, with the events folded into `state`. A refusal leaves `state` unchanged: a
        game offers this only if it refuses before it emits."""
        ...

"""Commands and events every game shares: creating, joining, starting, resigning, ending."""

from __future__ import annotations

import msgspec

from contracts.command import Command
from contracts.limits import Name, Word
from contracts.outcome import PayloadDigest

# ---- commands ---------------------------------------------------------------------------


class CreateGame(Command, frozen=True, kw_only=True):
    game_type: Word
    num_players: int
    # Seconds a seat may take per decision; None: no limit. Past it the default action is played.
    move_timeout_s: float | None = None


class JoinSeat(Command, frozen=True, kw_only=True):
    seat: int
    name: Name
    kind: Word = "human"  # "human" | "bot"


class StartGame(Command, frozen=True, kw_only=True):
    pass


class Resign(Command, frozen=True, kw_only=True):
    pass


class ForceDefault(Command, frozen=True, kw_only=True):
    """Sent by the timer service: play the default action for `seat` if it is still waited on."""

    seat: int
    at_version: int


# ---- events -----------------------------------------------------------------------------


class GameCreated(msgspec.Struct, frozen=True, kw_only=True):
    game_type: str
    num_players: int
    rules_version: str
    data_version: str
    seed_commitment: str
    # Private: removed from every public projection until SeedRevealed.
    seed: str | None = None
    move_timeout_s: float | None = None


class SeatJoined(msgspec.Struct, frozen=True, kw_only=True):
    seat: int
    name: str
    kind: str
    # Private: the public projection drops them. `reply_client`: the client named by the JoinSeat's
    # reply_to; the seat's later commands may only name reply streams of that client.
    token_hash: str | None = None
    reply_client: str | None = None


class GameStarted(msgspec.Struct, frozen=True, kw_only=True):
    pass


class PlayerResigned(msgspec.Struct, frozen=True, kw_only=True):
    seat: int


class DefaultActionForced(msgspec.Struct, frozen=True, kw_only=True):
    """The next events were played for `seat` by the referee (timeout or resignation)."""

    seat: int
    reason: str  # "timeout" | "resigned"
    command_type: str


class GameEnded(msgspec.Struct, frozen=True, kw_only=True):
    scores: list[int]
    winners: list[int]
    breakdown: list[dict[str, int]] = msgspec.field(default_factory=list)


class SeedRevealed(msgspec.Struct, frozen=True, kw_only=True):
    seed: str


class CommandRejected(msgspec.Struct, frozen=True, kw_only=True):
    """A refusal is part of the audit trail: what was asked, by whom, and which rule refused it."""

    command_id: str
    command_type: str
    seat: int | None
    rule: str
    text: str
    detail: str = ""
    authenticated: bool = False
    expected_version: int | None = None
    correlation_id: str | None = None
    # What was asked, bounded: the payload's SHA-256, size and first 256 bytes. (Before schema 3
    # this event carried the whole payload; the upcaster turns it into this digest.)
    payload_digest: PayloadDigest


class GameArchived(msgspec.Struct, frozen=True, kw_only=True):
    """Written by `dicestream archive` in place of a finished game's log, at the version after its
    last event: the whole history (events 1..`events` and `outcomes` command records) is in
    `file`, a JSON Lines export (gzip) of the archive, whose SHA-256 is `sha256`. What follows is
    what listing and refusing the game need without opening the file."""

    file: str
    sha256: str
    events: int
    outcomes: int
    game_type: str
    num_players: int
    players: list[str | None]
    kinds: list[str | None]
    scores: list[int]
    winners: list[int]
    seed_commitment: str
    seed: str
    created_at_ms: int = 0
    # What the game was created under (GameCreated's): the web page draws an archived game with
    # the data it was played with. "" in markers written before these fields.
    rules_version: str = ""
    data_version: str = ""


COMMANDS: tuple[type[msgspec.Struct], ...] = (CreateGame, JoinSeat, StartGame, Resign, ForceDefault)
EVENTS: tuple[type[msgspec.Struct], ...] = (
    GameCreated,
    SeatJoined,
    GameStarted,
    PlayerResigned,
    DefaultActionForced,
    GameEnded,
    SeedRevealed,
    CommandRejected,
    GameArchived,
)

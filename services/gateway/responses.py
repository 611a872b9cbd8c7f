"""What the gateway answers: msgspec structs, so Litestar encodes them and documents them in OpenAPI."""

from __future__ import annotations

from typing import Any

import msgspec

from contracts.outcome import CommandOutcome, OutcomeStatus
from contracts.protocol import Action
from services.readmodel import GameSummary


class Outcome(msgspec.Struct, frozen=True, kw_only=True):
    """The referee's verdict on a command (the token is never recorded)."""

    command_id: str
    command_type: str
    game_id: str
    status: OutcomeStatus
    seat: int | None = None
    authenticated: bool = False
    expected_version: int | None = None
    correlation_id: str | None = None
    received_at_ms: int = 0
    # The version the command was judged at, and the last version its events took.
    judged_at_version: int = 0
    to_version: int = 0
    # For a refusal: the rule broken (docs/rules), its text, and what was wrong.
    rule: str | None = None
    text: str | None = None
    detail: str | None = None
    payload: Any = None

    @classmethod
    def of(cls, o: CommandOutcome) -> Outcome:
        try:
            payload = msgspec.json.decode(o.payload)
        except msgspec.DecodeError:
            payload = None
        return cls(
            command_id=o.command_id,
            command_type=o.command_type,
            game_id=o.game_id,
            status=o.status,
            seat=o.seat,
            authenticated=o.authenticated,
            expected_version=o.expected_version,
            correlation_id=o.correlation_id,
            received_at_ms=o.received_at_ms,
            judged_at_version=o.judged_at_version,
            to_version=o.to_version,
            rule=o.rule,
            text=o.text,
            detail=o.detail,
            payload=payload,
        )


class CommandResult(msgspec.Struct, frozen=True, kw_only=True):
    """An accepted command: the game is now at `version`."""

    game_id: str
    command_id: str
    version: int
    outcome: Outcome


class Created(msgspec.Struct, frozen=True, kw_only=True):
    game_id: str
    command_id: str
    version: int
    outcome: Outcome


class Joined(msgspec.Struct, frozen=True, kw_only=True):
    """The seat is yours: `token` is shown this once. Send it as `Authorization: Bearer <token>`."""

    game_id: str
    seat: int
    token: str
    command_id: str
    version: int
    outcome: Outcome


class PublicState(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """A game as every spectator may see it: `view` is the game's `view(state, None)`; `seed` only
    once the game is over (it is revealed then)."""

    summary: GameSummary
    view: dict[str, Any] | None = None
    seed: str | None = None


class ListedGame(GameSummary, frozen=True, kw_only=True):
    """A game in the list: its summary (`created_at_ms`, when GameCreated was recorded, orders
    the list, newest first)."""


class GameList(msgspec.Struct, frozen=True, kw_only=True):
    games: list[ListedGame]
    # Pass as `cursor` for the next page; null on the last page.
    next: str | None = None
    # Games matching the filters, all pages together.
    total: int = 0


class RatedPlayer(msgspec.Struct, frozen=True, kw_only=True):
    """A player (by the name it joined with; a hosted bot's is its kind unless named) in one
    title: OpenSkill (Plackett-Luce) over its finished games, oldest first."""

    title: str
    name: str
    games: int
    wins: float  # a win shared by k seats counts 1/k
    mu: float
    sigma: float
    rating: float  # mu - 3 sigma: what the table is ordered by


class Ratings(msgspec.Struct, frozen=True, kw_only=True):
    ratings: list[RatedPlayer]
    # Finished games rated (those with two or more players of different names).
    games: int = 0


class EventItem(msgspec.Struct, frozen=True, kw_only=True):
    """A public event (EventEnvelope, payload without secrets) or a CommandRejected record;
    `cursor` is its stream entry id (`<version>-<n>`): pass it as `after` to read what follows."""

    cursor: str
    event: dict[str, Any]


class EventPage(msgspec.Struct, frozen=True, kw_only=True):
    events: list[EventItem]
    # The cursor of the last event returned (or the `after` given, when there was none).
    next: str | None = None


class SeatView(msgspec.Struct, frozen=True, kw_only=True):
    """What one seat may see now, and what it may do (`legal_actions` when it is to act)."""

    game_id: str
    seat: int
    version: int
    status: str
    to_act: list[int]
    view: dict[str, Any] | None = None
    legal_actions: list[Action] = []
    # The component data the game was created under (a TurnRequest's `data_version`).
    data_version: str = ""


class RuleText(msgspec.Struct, frozen=True, kw_only=True):
    id: str
    text: str
    # The rules document that states it, relative to the repository root.
    doc: str


class AuditReport(msgspec.Struct, frozen=True, kw_only=True):
    """`services.history.audit` of one command, plus the text of the rule a refusal cites."""

    game_id: str
    command: dict[str, Any]
    verdict: dict[str, Any]
    state_before: dict[str, Any]
    legal_actions: list[dict[str, Any]]
    events: list[dict[str, Any]]
    rule: RuleText | None = None


class BotQueued(msgspec.Struct, frozen=True, kw_only=True):
    """The bot runner was asked to join `seat`; watch the game (or its events) for its SeatJoined."""

    game_id: str
    seat: int
    kind: str
    name: str


class Status(msgspec.Struct, frozen=True, kw_only=True):
    status: str


class VersionedState(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """A game's public state (as `PublicState`) at `version`."""

    version: int
    summary: GameSummary
    view: dict[str, Any] | None = None
    seed: str | None = None


class StatePage(msgspec.Struct, frozen=True, kw_only=True):
    """Public states at consecutive versions, from `from_version`; `version` is the game's last."""

    game_id: str
    version: int
    states: list[VersionedState]


class FairnessFinding(msgspec.Struct, frozen=True, kw_only=True):
    check: str
    version: int | None = None
    problem: str


class Fairness(msgspec.Struct, frozen=True, kw_only=True):
    """What `dicestream verify` says of a finished game: the revealed seed matches the commitment,
    and every command, judged again from the seed, yields the recorded events (every roll and
    shuffle reproduced) and the recorded result. Before the end: `over` false, nothing else."""

    game_id: str
    over: bool
    ok: bool = False
    seed_verified: bool = False
    seed_commitment: str = ""
    seed: str | None = None
    events: int = 0
    commands: int = 0
    findings: list[FairnessFinding] = []


class FileHeader(msgspec.Struct, frozen=True, kw_only=True):
    game_id: str
    game_type: str
    rules_version: str
    data_version: str
    seats: list[str | None]
    events: int
    outcomes: int


class GameFile(msgspec.Struct, frozen=True, kw_only=True):
    """An opened game file (the JSON Lines `dicestream export` writes), as the page draws it: its
    header, the summary at its end, its public events (as `/events` lists them: refusals too)
    and its fairness report. Only what the public stream would hold."""

    header: FileHeader
    summary: GameSummary
    version: int
    events: list[EventItem]
    fairness: Fairness


class CatalogEntry(msgspec.Struct, frozen=True, kw_only=True):
    title: str
    name: str
    min_players: int
    max_players: int
    rules_version: str
    data_version: str


class Catalog(CatalogEntry, frozen=True, kw_only=True):
    """A game's component data (every card, tile, board value) as its TOML data file holds it."""

    data: dict[str, Any]

"""The headless bot protocol: what a seat's stream carries (see docs/bots.md)."""

from __future__ import annotations

from typing import Any, Final, Literal

import msgspec


class Action(msgspec.Struct, frozen=True, kw_only=True):
    """A legal command, ready to send: put `type` and `payload` into a CommandEnvelope."""

    type: str
    payload: dict[str, Any]


class TurnRequest(msgspec.Struct, frozen=True, kw_only=True, tag="turn"):
    game_id: str
    seat: int
    # Send it back as the command's expected_version: a stale answer is refused (GAME-STALE).
    version: int
    # What this seat sees: the game's view, tagged by `game` (schema/views/<game>.json; the
    # TurnRequest of one game with its view typed: schema/protocol/turn-request.<game>.json).
    view: dict[str, Any]
    legal_actions: list[Action]
    # Epoch milliseconds after which the referee plays the seat's default action; None: no limit.
    deadline_ms: int | None = None
    # The component data the game was created under (GameCreated's): a bot that values tiles or
    # cards reads them from that data, which after an upgrade may be an earlier file than the
    # build's current one. "" from a turn service older than this field.
    data_version: str = ""


class GameOver(msgspec.Struct, frozen=True, kw_only=True, tag="over"):
    game_id: str
    version: int
    scores: list[int]
    winners: list[int]


SeatMessage = TurnRequest | GameOver


class LegalAction(msgspec.Struct, frozen=True, kw_only=True):
    """An `Action` as the turn service writes it: the command struct itself as `payload`, which
    encodes to the same JSON object as the `Action`'s dict (no dict is built per legal action)."""

    type: str
    payload: msgspec.Struct


class TurnRequestOut(msgspec.Struct, frozen=True, kw_only=True, tag="turn"):
    """A `TurnRequest` as the turn service encodes it: the same fields, the same bytes
    (tests/platform/test_turn_wire.py keeps the two equal). Read seat messages as `TurnRequest`."""

    game_id: str
    seat: int
    version: int
    # The game's view struct (contracts/views/), which encodes to the JSON object `view` is.
    view: msgspec.Struct
    legal_actions: list[LegalAction]
    deadline_ms: int | None = None
    data_version: str = ""


class HostBot(msgspec.Struct, frozen=True, kw_only=True):
    """Asks a bot runner (on `<prefix>:bots:lobby`) to join `seat` of `game_id` with a bot of `kind`
    and play it; the answer, a `HostReply`, goes to `reply_to` when given."""

    game_id: str
    seat: int
    kind: str
    game_type: str = "sentient"
    name: str | None = None
    seed: int = 0
    reply_to: str | None = None


# A bot runner's verdict on a HostBot: the bot joined the seat and plays it (`hosted`), or not
# (`refused`, with `reason`, and `rule` when the referee refused the bot's JoinSeat).
HostStatus = Literal["hosted", "refused"]
HOSTED: Final = "hosted"
REFUSED: Final = "refused"


class HostReply(msgspec.Struct, frozen=True, kw_only=True):
    """A bot runner's answer to a `HostBot`: `hosted`, or `refused` with the reason (and the
    referee's rule when the JoinSeat was refused)."""

    game_id: str
    seat: int
    status: HostStatus
    reason: str | None = None
    rule: str | None = None


class TurnNotice(msgspec.Struct, frozen=True, kw_only=True):
    """On `<prefix>:turns:{shard}`: seat `seat` of `game_id` was sent a request (or GameOver) for
    `version` on its seat stream. For hosts of many seats; the seat stream stays the record."""

    game_id: str
    seat: int
    version: int

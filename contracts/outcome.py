"""What became of a command: kept in the game's audit trail and sent to its `reply_to` stream."""

from __future__ import annotations

import hashlib
from typing import Final, Literal

import msgspec

from contracts.limits import HEAD_BYTES

# What became of a command: played (`accepted`) or refused with a rule (`rejected`). The only two
# values, listed as an enum in schema/ (`status` of protocol/reply.json, export/line.json).
OutcomeStatus = Literal["accepted", "rejected"]
ACCEPTED: Final = "accepted"
REJECTED: Final = "rejected"
NULL = msgspec.Raw(b"null")


class PayloadDigest(msgspec.Struct, frozen=True, kw_only=True):
    """What a refusal keeps of the payload it refused: bounded, whatever was sent."""

    # SHA-256 (hex) of the payload's bytes as received.
    sha256: str
    # Their number.
    size: int
    # The first HEAD_BYTES (256) bytes as text; bytes that are not UTF-8 show as U+FFFD. When
    # `size` is at most 256 and the text re-encodes to `sha256`, it is the whole payload.
    head: str

    def whole(self) -> bytes | None:
        """The payload itself, when the head holds all of it."""
        if self.size > HEAD_BYTES:
            return None
        data = self.head.encode()
        return data if hashlib.sha256(data).hexdigest() == self.sha256 else None


def digest(payload: bytes) -> PayloadDigest:
    return PayloadDigest(
        sha256=hashlib.sha256(payload).hexdigest(),
        size=len(payload),
        head=payload[:HEAD_BYTES].decode("utf-8", "replace"),
    )


class CommandOutcome(msgspec.Struct, frozen=True, kw_only=True):
    command_id: str
    command_type: str
    game_id: str
    # "accepted": the command was played, its events are versions judged_at_version + 1 ..
    # to_version. "rejected": refused, `rule` (docs/rules/) and `text` say why; nothing changed.
    status: OutcomeStatus
    seat: int | None = None
    authenticated: bool = False
    # Sent by the referee's own services (a deadline's ForceDefault).
    admin: bool = False
    correlation_id: str | None = None
    expected_version: int | None = None
    received_at_ms: int = 0
    # The game version the command was judged at, and the last version its events took.
    judged_at_version: int = 0
    to_version: int = 0
    rule: str | None = None
    text: str | None = None
    detail: str | None = None
    # SHA-256 of the message as received: tells a redelivery from another message reusing its id.
    envelope_sha256: str = ""
    # The client named by the command's reply_to (`<prefix>:reply:<client>:...`), if any.
    reply_client: str | None = None
    # Accepted: the payload as received (verify and audit re-judge it; the token is never
    # recorded). Refused: null, and `payload_digest` says what it was.
    payload: msgspec.Raw
    payload_digest: PayloadDigest | None = None


class StoredOutcome(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """A `CommandOutcome` as its game's audit stream holds it: without the game id (the stream's
    key names the game) and without the members at their defaults (most are null or false), a
    quarter of a record's bytes. Records written before hold every member, the game id too, and
    read the same. Read them with `decode_outcome`, never as a CommandOutcome."""

    command_id: str
    command_type: str
    status: OutcomeStatus
    game_id: str = ""
    seat: int | None = None
    authenticated: bool = False
    admin: bool = False
    correlation_id: str | None = None
    expected_version: int | None = None
    received_at_ms: int = 0
    judged_at_version: int = 0
    to_version: int = 0
    rule: str | None = None
    text: str | None = None
    detail: str | None = None
    envelope_sha256: str = ""
    reply_client: str | None = None
    payload: msgspec.Raw
    payload_digest: PayloadDigest | None = None


_FIELDS = tuple(f for f in CommandOutcome.__struct_fields__ if f != "game_id")
_encoder = msgspec.json.Encoder()
_stored = msgspec.json.Decoder(StoredOutcome)


def stored_outcome(o: CommandOutcome) -> bytes:
    """The audit record of `o`, for the audit stream of `o.game_id` only."""
    return _encoder.encode(StoredOutcome(**{f: getattr(o, f) for f in _FIELDS}))


def decode_outcome(data: bytes, game_id: str) -> CommandOutcome:
    """An audit record (a StoredOutcome, or a whole CommandOutcome written before) of the audit
    stream of `game_id`."""
    s = _stored.decode(data)
    return CommandOutcome(game_id=s.game_id or game_id, **{f: getattr(s, f) for f in _FIELDS})


class Reply(msgspec.Struct, frozen=True, kw_only=True):
    """Posted on a command's `reply_to` stream; `token` only for an accepted JoinSeat."""

    outcome: CommandOutcome
    token: str | None = None

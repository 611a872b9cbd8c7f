"""Reading one raw intake entry: a command to judge, or a dead letter with its reason.

Whatever the bytes (10,000 levels of nesting, megabytes, binary, invalid UTF-8, no `data`, JSON
that is not an object), reading an entry returns one of the two and never raises: every exception
of parsing one entry is contained to that entry, so no entry can leave its batch pending.

1. The entry's limits (contracts/limits.py) are checked before anything is parsed: over one, the
   entry is dead-lettered unread (and deleted from the intake, see Referee.handle_many).
2. The envelope is decoded strictly. If that fails, its members are read undecoded to find out
   whether it can be answered: with a valid game id and command id, and a reply_to that is absent
   or a valid reply stream of this installation, it becomes a command refused with
   GAME-MALFORMED (judged like any refusal: replied to, recorded in the game's audit); otherwise
   it is dead-lettered.
3. An unknown type is refused with GAME-UNKNOWN-TYPE, a payload that does not decode as its type
   with GAME-MALFORMED: both are refusals, not dead letters.

A dead letter is bounded: the reason, the entry's size, the SHA-256 of `data`, and the first
DEAD_HEAD_BYTES of each field (at most MAX_FIELDS), with anything shaped like a seat token blanked.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

import msgspec

from contracts import codec
from contracts.envelope import CommandEnvelope
from contracts.limits import (
    DEAD_HEAD_BYTES,
    MAX_DATA_BYTES,
    MAX_DETAIL,
    MAX_ENTRY_BYTES,
    MAX_FIELDS,
    MAX_TYPE,
    Id,
    Seat,
    Token,
)
from contracts.outcome import NULL
from contracts.registry import command_type
from games import match as m
from games.base import Rejected
from services.eventstore.keys import Keys, valid_game_id

Fields = dict[bytes, bytes]


class Item(msgspec.Struct, kw_only=True):
    """A command to judge."""

    stream: str
    entry_id: bytes
    env: CommandEnvelope
    digest: str = ""  # SHA-256 of the message as received
    payload: msgspec.Struct | None = None
    # Refused before it reaches the aggregate (envelope or payload not matching its schema,
    # unknown type).
    early: Rejected | None = None
    # The client part of env.reply_to (`<prefix>:reply:<client>:<rest>`), None without one.
    reply_client: str | None = None


class Dead(msgspec.Struct, frozen=True, kw_only=True):
    """An entry for the dead-letter stream."""

    reason: str
    # Over an entry limit: stored nowhere else, so also deleted from the intake once acked.
    oversized: bool = False
    # What the envelope said, when it could be read (for the log line).
    said: dict[str, str] = {}


def cut(text: str, limit: int = MAX_DETAIL) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def over_limits(fields: Fields) -> str | None:
    """Why an entry is too big to read, or None."""
    if len(fields) == 1:  # the usual entry: one field, `data`
        data = fields.get(b"data")
        if data is not None and len(data) <= MAX_DATA_BYTES:
            return None
    if len(fields) > MAX_FIELDS:
        return f"entry has {len(fields)} fields, at most {MAX_FIELDS}"
    size = sum(len(k) + len(v) for k, v in fields.items())
    data = fields.get(b"data")
    if data is not None and len(data) > MAX_DATA_BYTES:
        return f"data is {len(data)} bytes, at most {MAX_DATA_BYTES}"
    if size > MAX_ENTRY_BYTES:
        return f"entry is {size} bytes, at most {MAX_ENTRY_BYTES}"
    return None


def read(keys: Keys, stream: str, entry_id: bytes, fields: Fields) -> Item | Dead:
    """Never raises (see the module docstring)."""
    try:
        return _read(keys, stream, entry_id, fields)
    except Exception as exc:  # contained to this entry, whatever it is
        return Dead(reason=cut(f"unreadable entry: {type(exc).__name__}: {exc}"))


def _reply_to_reason(keys: Keys) -> str:
    return f"reply_to must be a stream {keys.reply_prefix()}<client>:<rest> (docs/bots.md)"


def _said(game_id: str, command_id: str, correlation_id: str | None) -> dict[str, str]:
    return {
        "game_id": game_id[:120],
        "command_id": command_id[:120],
        "correlation_id": (correlation_id or command_id)[:120],
    }


def _read(keys: Keys, stream: str, entry_id: bytes, fields: Fields) -> Item | Dead:
    problem = over_limits(fields)
    if problem is not None:
        return Dead(reason=problem, oversized=True)
    data = fields.get(b"data")
    if data is None:
        return Dead(reason="no 'data' field")
    try:
        env = codec.decode_command(data)
    except Exception as exc:
        return _malformed(keys, stream, entry_id, data, exc)
    said = _said(env.game_id, env.command_id, env.correlation_id)
    if not valid_game_id(env.game_id):
        return Dead(reason=f"invalid game id {env.game_id[:120]!r}", said=said)
    reply_client = None
    if env.reply_to is not None:
        reply_client = keys.reply_client(env.reply_to)
        if reply_client is None:
            return Dead(reason=_reply_to_reason(keys), said=said)
    item = Item(
        stream=stream,
        entry_id=entry_id,
        env=env,
        digest=hashlib.sha256(data).hexdigest(),
        reply_client=reply_client,
    )
    cls = command_type(env.type)
    if cls is None:
        item.early = m.rejected("GAME-UNKNOWN-TYPE", env.type)
        return _sent_by(keys, item)
    try:
        item.payload = codec.decode_command_payload(cls, env.payload)
    except Exception as exc:
        item.early = m.rejected("GAME-MALFORMED", cut(f"payload: {exc}"))
    return _sent_by(keys, item)


def _sent_by(keys: Keys, item: Item) -> Item:
    """On a client's own intake the sender is known (only its Redis user writes there): it is the
    command's client whatever reply_to says, and it may name only its own reply streams, seat or
    no seat (refused unanswered otherwise). Elsewhere the client is the one reply_to names."""
    sender = keys.intake_client(item.stream)
    if sender is None:
        return item
    if item.reply_client not in (None, sender):
        item.early = m.rejected(
            "GAME-REPLY-TO", f"reply_to names client {item.reply_client!r}; this intake is client {sender!r}'s"
        )
    item.reply_client = sender
    return item


_MEMBERS: dict[str, msgspec.json.Decoder[Any]] = {
    "type": msgspec.json.Decoder(str),
    "game_id": msgspec.json.Decoder(str),
    "command_id": msgspec.json.Decoder(Id),
    "seat": msgspec.json.Decoder(Seat),
    "token": msgspec.json.Decoder(Token),
    "expected_version": msgspec.json.Decoder(int),
    "correlation_id": msgspec.json.Decoder(Id),
    "reply_to": msgspec.json.Decoder(str),
}


def _member(members: dict[str, msgspec.Raw], name: str) -> Any:
    """The member decoded as the envelope declares it, or None (absent, null or not that)."""
    raw = members.get(name)
    if raw is None:
        return None
    try:
        return _MEMBERS[name].decode(raw)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None


def _malformed(keys: Keys, stream: str, entry_id: bytes, data: bytes, exc: Exception) -> Item | Dead:
    """An envelope that does not match its schema: refused if it can be answered, else dead."""
    reason = cut(f"malformed envelope: {exc}")
    try:
        members = codec.decode_members(data)
    except Exception:
        return Dead(reason=reason)  # not a JSON object, or too deep to read at all
    game_id, command_id = _member(members, "game_id"), _member(members, "command_id")
    if isinstance(game_id, str) and not valid_game_id(game_id):
        return Dead(reason=f"invalid game id {game_id[:120]!r}")
    if game_id is None or command_id is None:
        return Dead(reason=reason)
    correlation_id = _member(members, "correlation_id")
    said = _said(game_id, command_id, correlation_id)
    reply_to = _member(members, "reply_to")
    raw_reply_to = members.get("reply_to")
    reply_client = None
    if reply_to is not None:
        reply_client = keys.reply_client(reply_to)
    if (raw_reply_to is not None and bytes(raw_reply_to) != b"null") and reply_client is None:
        return Dead(reason=_reply_to_reason(keys), said=said)
    env = CommandEnvelope(
        type=(_member(members, "type") or "")[:MAX_TYPE],
        game_id=game_id,
        command_id=command_id,
        seat=_member(members, "seat"),
        token=_member(members, "token"),
        expected_version=_member(members, "expected_version"),
        correlation_id=correlation_id,
        reply_to=reply_to if reply_client is not None else None,
        payload=members.get("payload") or NULL,
    )
    item = Item(
        stream=stream,
        entry_id=entry_id,
        env=env,
        digest=hashlib.sha256(data).hexdigest(),
        reply_client=reply_client,
        early=m.rejected("GAME-MALFORMED", cut(f"envelope: {exc}")),
    )
    return _sent_by(keys, item)


# A seat token's value, also when the bytes stop inside it (a cut head).
_TOKEN = re.compile(rb'("token"\s*:\s*")(?:[^"\\]|\\.)*\\?("|$)')


def redacted(head: bytes) -> bytes:
    return _TOKEN.sub(rb"\1<redacted>\2", head)


def dead_record(stream: str, entry_id: bytes, fields: Fields, reason: str) -> dict[str, bytes | str]:
    """What the dead-letter stream keeps of an entry: bounded whatever the entry's size."""
    try:
        record: dict[str, bytes | str] = {
            "reason": cut(reason),
            "stream": stream,
            "entry_id": entry_id,
            "fields": str(len(fields)),
            "bytes": str(sum(len(k) + len(v) for k, v in fields.items())),
        }
        data = fields.get(b"data")
        if data is not None:
            record["sha256"] = hashlib.sha256(data).hexdigest()
        for k, v in list(fields.items())[:MAX_FIELDS]:
            # Operators read dead letters; players must not be able to replay a token from them.
            record[f"field:{k[:64].decode(errors='replace')}"] = redacted(v[:DEAD_HEAD_BYTES])
        return record
    except Exception as exc:  # an entry of another shape than Redis returns: keep what is sure
        return {"reason": cut(f"{reason}; record failed: {type(exc).__name__}"), "stream": stream, "entry_id": entry_id}

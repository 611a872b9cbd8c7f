"""Request bodies, decoded strictly: no unknown field at any depth, no type coercion, bounded sizes.

Command payloads are the contracts' structs, mirrored with `forbid_unknown_fields` (a misspelt
field is refused, never silently dropped and played with its default). Bodies are decoded here,
not by Litestar (whose parameter conversion is lax: it turns "1" into 1); the OpenAPI document
gets their schemas from `schemas()`.
"""

from __future__ import annotations

import types
import typing
from typing import Annotated, Any, Literal, Union

import msgspec
from msgspec import Meta

from contracts.registry import command_types
from services.gateway.problems import FieldError, Problem

CommandId = Annotated[
    str,
    Meta(
        pattern=r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,99}$",
        description="Your id for this command (1-100 of A-Z a-z 0-9 _ . : -); the gateway picks one when "
        "absent. Sending the same id and the same body again gets the same outcome.",
    ),
]
GameId = Annotated[
    str,
    Meta(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$", description="1-100 of A-Z a-z 0-9 _ . -"),
]
Name = Annotated[str, Meta(min_length=1, max_length=64)]
CorrelationId = Annotated[str, Meta(max_length=100, pattern=r"^[\x21-\x7e]*$")]
Version = Annotated[int, Meta(ge=0, le=1 << 53)]

# Handled by their own endpoints (CreateGame, JoinSeat) or only ever sent by the referee's own
# services (ForceDefault): refused as a command type here.
NOT_COMMANDS = frozenset({"lifecycle.CreateGame", "lifecycle.JoinSeat", "lifecycle.ForceDefault"})


class CreateGameBody(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A new game. `game_id` is yours to choose (or the gateway picks one); keep it and the
    `command_id` to retry safely after a timeout."""

    game_type: Annotated[
        str,
        Meta(max_length=32, description="a game of GET /v1/catalog, e.g. sentient"),
    ]
    num_players: Annotated[int, Meta(ge=1, le=8)]
    move_timeout_s: Annotated[float, Meta(gt=0, le=86400)] | None = None
    game_id: GameId | None = None
    command_id: CommandId | None = None


class JoinBody(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    name: Name
    kind: Literal["human", "bot"] = "human"
    command_id: CommandId | None = None


class HostBotBody(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Seat a reference bot (hosted by the bot runner) of `kind`: random, greedy, ismcts or a game's own
    (Mechanica's planner), as the runner's DICESTREAM_BOTS lists."""

    kind: Annotated[str, Meta(min_length=1, max_length=32)]
    name: Name | None = None
    seed: Annotated[int, Meta(ge=0, le=(1 << 31) - 1)] = 0


# ---- command bodies --------------------------------------------------------------------------

_mirrors: dict[type[Any], type[msgspec.Struct]] = {}


def _namespace(cls: type[Any]) -> str:
    return cls.__module__.rsplit(".", 1)[-1].capitalize()


def strict(tp: Any) -> Any:
    """`tp` with every Struct in it replaced by a mirror that refuses unknown fields."""
    if isinstance(tp, type) and issubclass(tp, msgspec.Struct):
        return _mirror(tp)
    origin = typing.get_origin(tp)
    if origin is None:
        return tp
    args = typing.get_args(tp)
    if origin is Annotated:
        return Annotated[(strict(args[0]), *tp.__metadata__)]
    if origin in (Union, types.UnionType):
        return Union[tuple(strict(a) for a in args)]  # noqa: UP007
    if origin is Literal:
        return tp
    return origin[tuple(strict(a) for a in args)]


def _mirror(cls: type[msgspec.Struct]) -> type[msgspec.Struct]:
    if cls not in _mirrors:
        fields: list[tuple[str, Any, Any]] = []
        for f in msgspec.structs.fields(cls):
            if f.default is not msgspec.NODEFAULT:
                fields.append((f.name, strict(f.type), f.default))
            elif f.default_factory is not msgspec.NODEFAULT:
                fields.append((f.name, strict(f.type), msgspec.field(default_factory=f.default_factory)))
            else:
                fields.append((f.name, strict(f.type), msgspec.NODEFAULT))
        required = [x for x in fields if x[2] is msgspec.NODEFAULT]
        optional = [x for x in fields if x[2] is not msgspec.NODEFAULT]
        mirror = msgspec.defstruct(
            f"{_namespace(cls)}{cls.__name__}",
            [*((n, t) for n, t, _ in required), *optional],
            kw_only=True,
            frozen=True,
            forbid_unknown_fields=True,
            module=__name__,
        )
        mirror.__doc__ = cls.__doc__
        _mirrors[cls] = mirror
    return _mirrors[cls]


def _constructible(cls: type[msgspec.Struct]) -> bool:
    return all(f.required is False for f in msgspec.structs.fields(cls))


def _command_body(name: str, cls: type[msgspec.Struct]) -> type[msgspec.Struct]:
    payload_type = _mirror(cls)
    payload: tuple[str, Any] | tuple[str, Any, Any] = (
        ("payload", payload_type, msgspec.field(default_factory=payload_type))
        if _constructible(cls)
        else ("payload", payload_type)
    )
    body = msgspec.defstruct(
        f"{_namespace(cls)}{cls.__name__}Command",
        [
            payload,
            ("expected_version", Version | None, None),
            ("command_id", CommandId | None, None),
            ("correlation_id", CorrelationId | None, None),
        ],
        tag_field="type",
        tag=name,
        kw_only=True,
        frozen=True,
        forbid_unknown_fields=True,
        module=__name__,
    )
    body.__doc__ = (
        f"`{name}`: {(cls.__doc__ or '').strip()} Send `expected_version` = the version of the turn "
        "request you answer (a stale answer is refused with GAME-STALE)."
    )
    return body


COMMAND_BODIES: dict[str, type[msgspec.Struct]] = {
    name: _command_body(name, cls) for name, cls in sorted(command_types().items()) if name not in NOT_COMMANDS
}
# Every command body, the tag `type` telling which (what the OpenAPI document shows).
CommandBody = Union[tuple(COMMAND_BODIES.values())]  # type: ignore[valid-type]  # noqa: UP007


class _Head(msgspec.Struct):
    type: str


_head = msgspec.json.Decoder(_Head)
_body_decoders = {name: msgspec.json.Decoder(cls) for name, cls in COMMAND_BODIES.items()}


def _invalid(exc: msgspec.ValidationError) -> Problem:
    message, _, at = str(exc).partition(" - at `")
    return Problem(
        422,
        "invalid-body",
        "The body does not match its schema",
        str(exc),
        errors=[FieldError(message=message, at=at.rstrip("`") or None)],
    )


def malformed(exc: Exception) -> Problem:
    return Problem(400, "malformed-json", "The body is not valid JSON", str(exc)[:200])


def decode(raw: bytes, decoder: msgspec.json.Decoder[Any]) -> Any:
    """Decode a body with a strict decoder; malformed JSON is 400, a schema mismatch 422."""
    try:
        return decoder.decode(raw)
    except msgspec.ValidationError as exc:
        raise _invalid(exc) from None
    except (msgspec.DecodeError, RecursionError, UnicodeDecodeError) as exc:
        raise malformed(exc) from None


def decode_command(raw: bytes) -> tuple[str, Any]:
    """(type name, body) of a command body; an unknown `type` is 422 `unknown-command-type`."""
    head = decode(raw, _head)
    decoder = _body_decoders.get(head.type)
    if decoder is None:
        why = (
            "has its own endpoint or is not for clients"
            if head.type in NOT_COMMANDS
            else "is not a command type (see /openapi.json, CommandBody)"
        )
        raise Problem(422, "unknown-command-type", "Unknown command type", f"{head.type[:100]!r} {why}")
    return head.type, decode(raw, decoder)


def strict_types() -> list[type[msgspec.Struct]]:
    """Every body struct, nested ones included: all refuse unknown fields."""
    return [CreateGameBody, JoinBody, HostBotBody, *COMMAND_BODIES.values(), *_mirrors.values()]


DECODERS: dict[type[Any], msgspec.json.Decoder[Any]] = {
    CreateGameBody: msgspec.json.Decoder(CreateGameBody),
    JoinBody: msgspec.json.Decoder(JoinBody),
    HostBotBody: msgspec.json.Decoder(HostBotBody),
}


def decode_as(raw: bytes, cls: type[Any]) -> Any:
    return decode(raw, DECODERS[cls])

"""Reference bots behind the wire protocol: a seat's `TurnRequest` in, a command payload out."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

from contracts import codec
from contracts.protocol import Action, GameOver
from contracts.registry import command_type, type_name, view_types


class RawAction(msgspec.Struct, frozen=True, kw_only=True):
    """A legal action read with its payload left as the JSON bytes it came as."""

    type: str
    payload: msgspec.Raw


class RawTurnRequest(msgspec.Struct, frozen=True, kw_only=True, tag="turn"):
    """A `TurnRequest` as the bot runner reads it: each legal action's payload decodes straight
    into its command struct (no dict per action), and the one chosen is sent as it came."""

    game_id: str
    seat: int
    version: int
    # Decoded by the bot into its game's view struct, never into dicts.
    view: msgspec.Raw
    legal_actions: list[RawAction]
    deadline_ms: int | None = None


RawSeatMessage = RawTurnRequest | GameOver
_decoders: dict[str, msgspec.json.Decoder[Any]] = {}


def _command(name: str) -> type[msgspec.Struct]:
    cls = command_type(name)
    if cls is None:
        raise ValueError(f"unknown command type {name!r} in a turn request")
    return cls


def _decoder(name: str) -> msgspec.json.Decoder[Any]:
    dec = _decoders.get(name)
    if dec is None:
        dec = _decoders[name] = msgspec.json.Decoder(_command(name))
    return dec


class WireBot:
    """Adapts a rules-level bot (`choose(view, legal_commands, seat)`, the view being its game's
    view struct) to the wire."""

    def __init__(self, bot: Any, view_type: type[msgspec.Struct]) -> None:
        self.bot = bot
        self.view_type = view_type
        self._view = msgspec.json.Decoder(view_type)

    def choose_action(self, view: dict[str, Any] | msgspec.Struct, legal: list[Action], seat: int) -> Action:
        """The same choice from decoded protocol `Action`s (a client holding dicts)."""
        typed = view if isinstance(view, msgspec.Struct) else msgspec.convert(view, self.view_type)
        commands = [msgspec.convert(a.payload, _command(a.type)) for a in legal]
        choice = self.bot.choose(typed, commands, seat)
        return Action(type=type_name(choice), payload=msgspec.to_builtins(choice))

    def choose(self, req: RawTurnRequest) -> tuple[str, bytes]:
        """The chosen command's type and encoded payload."""
        commands = [_decoder(a.type).decode(a.payload) for a in req.legal_actions]
        choice = self.bot.choose(self._view.decode(req.view), commands, req.seat)
        for action, command in zip(req.legal_actions, commands, strict=True):
            if command is choice:
                return action.type, bytes(action.payload)
        return type_name(choice), codec.encode(choice)


def _kinds(game_type: str) -> dict[str, Callable[[int], Any]]:
    from games.bots import RandomBot
    from games.catalog import GREEDY

    kinds: dict[str, Callable[[int], Any]] = {"random": RandomBot}
    if game_type in GREEDY:
        greedy = GREEDY[game_type]
        kinds["greedy"] = lambda seed: greedy()
    return kinds


def make_bot(kind: str, game_type: str, seed: int = 0) -> WireBot:
    views = view_types()
    if game_type not in views:
        raise ValueError(f"no game {game_type!r}; known: {', '.join(views)}")
    kinds = _kinds(game_type)
    if kind not in kinds:
        raise ValueError(f"no bot {kind!r} for {game_type}; known: {', '.join(kinds)}")
    return WireBot(kinds[kind](seed), view_types()[game_type])

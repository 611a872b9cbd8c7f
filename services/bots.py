"""Reference bots behind the wire protocol: `Action`s in, an `Action` out."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

from contracts.protocol import Action
from contracts.registry import command_type, type_name


class WireBot:
    """Adapts a rules-level bot (`choose(view, legal_commands, seat)`) to protocol actions."""

    def __init__(self, bot: Any) -> None:
        self.bot = bot

    def choose_action(self, view: dict[str, Any], legal: list[Action], seat: int) -> Action:
        commands = []
        for a in legal:
            cls = command_type(a.type)
            assert cls is not None, a.type
            commands.append(msgspec.convert(a.payload, cls))
        choice = self.bot.choose(view, commands, seat)
        return Action(type=type_name(choice), payload=msgspec.to_builtins(choice))


def _kinds(game_type: str) -> dict[str, Callable[[int], Any]]:
    from games.bots import RandomBot
    from games.catalog import GREEDY

    kinds: dict[str, Callable[[int], Any]] = {"random": RandomBot}
    if game_type in GREEDY:
        greedy = GREEDY[game_type]
        kinds["greedy"] = lambda seed: greedy()
    return kinds


def make_bot(kind: str, game_type: str, seed: int = 0) -> WireBot:
    kinds = _kinds(game_type)
    if kind not in kinds:
        raise ValueError(f"no bot {kind!r} for {game_type}; known: {', '.join(kinds)}")
    return WireBot(kinds[kind](seed))

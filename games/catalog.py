"""The games this build can referee, by the name used in CreateGame, and their reference bots."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from games import artifacts, mechanica, prosperity, sentient
from games.artifacts import bots as artifacts_bots
from games.base import Rules
from games.bots import Bot
from games.mechanica import bots as mechanica_bots
from games.prosperity import bots as prosperity_bots
from games.sentient import bots as sentient_bots

GAMES: dict[str, Rules[Any]] = {g.RULES.name: g.RULES for g in (sentient, prosperity, mechanica, artifacts)}

# Each game's greedy reference bot, by game name (games.bots.RandomBot plays every game).
GREEDY: dict[str, Callable[[], Bot]] = {
    sentient.RULES.name: lambda: sentient_bots.GreedyBot(sentient.RULES.data),
    prosperity.RULES.name: lambda: prosperity_bots.GreedyBot(prosperity.RULES.data),
    mechanica.RULES.name: lambda: mechanica_bots.GreedyBot(mechanica.RULES.data),
    artifacts.RULES.name: lambda: artifacts_bots.GreedyBot(artifacts.RULES.data),
}


def rules_for(name: str) -> Rules[Any] | None:
    return GAMES.get(name)

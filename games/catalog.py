"""The games this build can referee, by the name used in CreateGame."""

from __future__ import annotations

from typing import Any

from games.base import Rules
from games.sentient import RULES as SENTIENT

GAMES: dict[str, Rules[Any]] = {SENTIENT.name: SENTIENT}


def rules_for(name: str) -> Rules[Any] | None:
    return GAMES.get(name)

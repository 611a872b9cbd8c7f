"""Sentient as the platform sees it: the one declaration `games.catalog` reads (docs/adding-a-game.md)."""

from __future__ import annotations

from typing import Any

from contracts import sentient as wire
from contracts.views.sentient import SentientView
from games.rng import Rng
from games.sentient import RULES
from games.sentient.bots import GreedyBot
from games.sentient.components import published
from games.sentient.determinize import determinize
from games.sentient.rule_ids import RULES_TEXT
from games.spec import GameSpec


def _determinize(state: Any, rng: Rng) -> Any:
    return determinize(state, rng, RULES.data)


SPEC = GameSpec(
    rules=RULES,
    title="Sentient",
    contracts=wire,
    view=SentientView,
    greedy=lambda: GreedyBot(RULES.data),
    determinize=_determinize,
    rules_doc="docs/rules/sentient.md",
    rule_texts=RULES_TEXT,
    golden_players=3,
    catalog_data=published,
    data_files=("data/sentient.toml",),
)

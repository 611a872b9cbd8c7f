"""Prosperity as the platform sees it: the one declaration `games.catalog` reads (docs/adding-a-game.md)."""

from __future__ import annotations

from typing import Any

from contracts import prosperity as wire
from contracts.views.prosperity import ProsperityView
from games.prosperity import RULES
from games.prosperity.bots import GreedyBot
from games.prosperity.components import published
from games.prosperity.determinize import determinize
from games.prosperity.rule_ids import RULES_TEXT
from games.rng import Rng
from games.spec import GameSpec


def _determinize(state: Any, rng: Rng) -> Any:
    return determinize(state, rng, RULES.data)


SPEC = GameSpec(
    rules=RULES,
    title="Prosperity",
    contracts=wire,
    view=ProsperityView,
    greedy=lambda: GreedyBot(RULES.data),
    determinize=_determinize,
    rules_doc="docs/rules/prosperity.md",
    rule_texts=RULES_TEXT,
    golden_players=3,
    catalog_data=published,
    data_files=("data/prosperity.toml",),
)

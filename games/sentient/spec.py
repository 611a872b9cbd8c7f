"""Sentient as the platform sees it: the one declaration `games.catalog` reads (docs/adding-a-game.md)."""

from __future__ import annotations

import weakref
from typing import Any

from contracts import sentient as wire
from contracts.views.sentient import SentientView
from games.base import Rules
from games.rng import Rng
from games.sentient import RULES, SentientRules
from games.sentient.bots import GreedyBot
from games.sentient.components import published
from games.sentient.determinize import determinize
from games.sentient.rule_ids import RULES_TEXT
from games.spec import GameSpec


def _determinize(state: Any, rng: Rng) -> Any:
    return determinize(state, rng, RULES.data)


_TABLES: weakref.WeakKeyDictionary[SentientRules, Any] = weakref.WeakKeyDictionary()


def native_core(rules: Rules[Any], num_players: int, seed: str, version: int) -> Any:
    """games/sentient/native.pyx set up as StartGame at `version` would; None when it is not built
    (no C compiler at install) or for a variant of the rules (a subclass may change anything)."""
    if type(rules) is not SentientRules:
        return None
    try:
        from games.sentient import native
    except ImportError:
        return None
    tables = _TABLES.get(rules)
    if tables is None:
        try:
            tables = _TABLES[rules] = native.Tables(rules.data)
        except native.NotNative:
            return None
    return native.Core.started(tables, num_players, seed, version)


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
    native=native_core,
)

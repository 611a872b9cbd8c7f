"""Sentient as the platform sees it: the one declaration `games.catalog` reads (docs/adding-a-game.md)."""

from __future__ import annotations

import functools
import weakref
from pathlib import Path
from typing import Any, cast

import msgspec

from contracts import sentient as wire
from contracts.views.sentient import SentientView
from games.base import Rules
from games.sentient import RULES, SentientRules
from games.sentient.bots import GreedyBot
from games.sentient.components import load, published
from games.sentient.determinize import determinize
from games.sentient.rule_ids import RULES_TEXT
from games.spec import DataBots, GameSpec


def _bots_on(rules: Rules[Any]) -> DataBots:
    data = cast(SentientRules, rules).data
    return DataBots(greedy=functools.partial(GreedyBot, data), determinize=functools.partial(determinize, data=data))


def _with_data(path: Path) -> SentientRules:
    return SentientRules(load(path))


# Per rules object: the data its tables were built from, and the tables.
_TABLES: weakref.WeakKeyDictionary[SentientRules, tuple[Any, Any]] = weakref.WeakKeyDictionary()
# What a SentientRules instance holds of its own; anything more (a method set on the instance) makes
# it a variant the core does not know.
_OWN = frozenset({"data", "data_version", "_corners"})


def native_core(rules: Rules[Any], num_players: int, seed: str, version: int) -> Any:
    """games/sentient/native.pyx set up as StartGame at `version` would; None when it is not built
    (no C compiler at install), for a variant of the rules (a subclass, or an instance given its
    own methods), or for data the core cannot hold."""
    if type(rules) is not SentientRules or not _OWN.issuperset(vars(rules)):
        return None
    try:
        from games.sentient import native
    except ImportError:
        return None
    cached = _TABLES.get(rules)
    if cached is None or cached[0] is not rules.data:
        if rules._corners != SentientRules(rules.data)._corners:
            # `data` replaced after the rules were built: their legal lists still read the old
            # corners, which the core would not.
            return None
        try:
            cached = _TABLES[rules] = (rules.data, native.Tables(rules.data))
        except native.NotNative:
            return None
    return native.Core.started(cached[1], num_players, seed, version)


# The catalog's rules' own bots: the same makers as over any other data.
_BOTS = _bots_on(RULES)


def _acquisition(event: msgspec.Struct) -> tuple[int, str] | None:
    return (event.seat, event.card) if isinstance(event, wire.CardAcquired) else None


SPEC = GameSpec(
    rules=RULES,
    title="Sentient",
    contracts=wire,
    view=SentientView,
    greedy=_BOTS.greedy,
    determinize=_BOTS.determinize,
    rules_doc="docs/rules/sentient.md",
    rule_texts=RULES_TEXT,
    golden_players=3,
    catalog_data=published,
    data_files=("data/sentient.toml",),
    native=native_core,
    with_data=_with_data,
    bots_on=_bots_on,
    acquisition=_acquisition,
)

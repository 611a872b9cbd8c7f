"""Artifacts, Inc. as the platform sees it: the one declaration `games.catalog` reads (docs/adding-a-game.md)."""

from __future__ import annotations

import functools
import weakref
from typing import Any, cast

import msgspec

from contracts import artifacts as wire
from contracts.views.artifacts import ArtifactsView
from games.artifacts import RULES
from games.artifacts.bots import GreedyBot
from games.artifacts.components import load, published
from games.artifacts.determinize import determinize
from games.artifacts.rule_ids import RULES_TEXT, rule_text
from games.artifacts.rules import ArtifactsRules
from games.base import Rules
from games.bots import Bot
from games.spec import DataBots, GameSpec, Playout


def _bots_on(rules: Rules[Any]) -> DataBots:
    data = cast(ArtifactsRules, rules).data
    return DataBots(greedy=functools.partial(GreedyBot, data), determinize=functools.partial(determinize, data=data))


# Per rules object: the data its playout tables were built from, and the tables.
_TABLES: weakref.WeakKeyDictionary[ArtifactsRules, tuple[Any, Any]] = weakref.WeakKeyDictionary()
# What an ArtifactsRules instance holds of its own; anything more makes it a variant the playout
# does not know.
_OWN = frozenset({"data", "data_version"})


def _greedy_playout(rules: Rules[Any], policy: Bot) -> Playout | None:
    """games/artifacts/playout.pyx over `rules`' data: `policy`'s rollout, in C, where `policy` is
    the greedy bot over the same data. None when it is not built (no C compiler at install), for a
    variant of the rules (a subclass, or an instance given its own attributes), for another bot or a
    greedy bot over other data, or for data it cannot hold; the search then rolls out in Python."""
    if type(rules) is not ArtifactsRules or not _OWN.issuperset(vars(rules)):
        return None
    if type(policy) is not GreedyBot or policy.data is not rules.data:
        return None
    try:
        from games.artifacts import playout
    except ImportError:
        return None
    cached = _TABLES.get(rules)
    if cached is None or cached[0] is not rules.data:
        try:
            cached = _TABLES[rules] = (rules.data, playout.Tables(rules.data))
        except playout.NotNative:
            return None
    data, tables = cached

    def play(game: Any) -> tuple[list[int], int] | None:
        if game.is_terminal() or rules.data is not data:
            # Over, or the rules' data replaced since: the bot still values with what it was given.
            return None
        match = game.match
        if any(seat is not None and seat.resigned for seat in match.seats):
            # The referee plays resigned seats' defaults, which the playout does not model.
            return None
        played = playout.playout(tables, match)
        return None if played is None else (played[0], played[1])

    return play


# The catalog's rules' own bots: the same makers as over any other data.
_BOTS = _bots_on(RULES)


def _acquisition(event: msgspec.Struct) -> tuple[int, str] | None:
    # An upgrade turns a card owned since set-up or bought earlier: named apart from the purchase.
    if isinstance(event, wire.AssetBought):
        return event.seat, event.card
    if isinstance(event, wire.AssetUpgraded):
        return event.seat, f"{event.card} upgraded"
    return None


SPEC = GameSpec(
    rules=RULES,
    title="Artifacts, Inc.",
    contracts=wire,
    view=ArtifactsView,
    greedy=_BOTS.greedy,
    determinize=_BOTS.determinize,
    rules_doc="docs/rules/artifacts.md",
    # With the data's values in place of the placeholders, as refusals cite them.
    rule_texts={rule: rule_text(rule, RULES.data) for rule in RULES_TEXT},
    golden_players=3,
    catalog_data=published,
    data_files=("data/artifacts.toml", "data/artifacts-data-2.toml", "data/artifacts-data-3.toml"),
    earlier_data={
        "artifacts-data-2": "data/artifacts-data-2.toml",
        "artifacts-data-3": "data/artifacts-data-3.toml",
    },
    with_data=lambda path: ArtifactsRules(load(path)),
    bots_on=_bots_on,
    acquisition=_acquisition,
    greedy_playout=_greedy_playout,
)

"""Artifacts, Inc. as the platform sees it: the one declaration `games.catalog` reads (docs/adding-a-game.md)."""

from __future__ import annotations

import functools
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
from games.spec import DataBots, GameSpec, greedy_playout


def _bots_on(rules: Rules[Any]) -> DataBots:
    data = cast(ArtifactsRules, rules).data
    return DataBots(greedy=functools.partial(GreedyBot, data), determinize=functools.partial(determinize, data=data))


# The playout reads the offline game's whole aggregate: each turn's roll is drawn from its seed and
# version (games/artifacts/playout.pyx).
_greedy_playout = greedy_playout(ArtifactsRules, GreedyBot, "games.artifacts.playout", lambda match: match)


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

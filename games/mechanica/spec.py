"""Mechanica as the platform sees it: the one declaration `games.catalog` reads (docs/adding-a-game.md)."""

from __future__ import annotations

import functools
from typing import Any, cast

import msgspec

from contracts import mechanica as wire
from contracts.views.mechanica import MechanicaView
from games.base import Rules
from games.mechanica import RULES
from games.mechanica.bots import GreedyBot
from games.mechanica.components import load, published
from games.mechanica.determinize import determinize
from games.mechanica.planner import PlannerBot
from games.mechanica.rule_ids import RULES_TEXT
from games.mechanica.rules import MechanicaRules
from games.mechanica.state import SMALL
from games.spec import DataBots, GameSpec


def _bots_on(rules: Rules[Any]) -> DataBots:
    ruled = cast(MechanicaRules, rules)
    return DataBots(
        greedy=functools.partial(GreedyBot, ruled.data),
        determinize=functools.partial(determinize, data=ruled.data),
        bots={"planner": functools.partial(PlannerBot, ruled)},
    )


# The catalog's rules' own bots: the same makers as over any other data.
_BOTS = _bots_on(RULES)


def _acquisition(event: msgspec.Struct) -> tuple[int, str] | None:
    if isinstance(event, wire.ImprovementBought):
        # By kind: the three copies of a kind ("duplicator-1" .. "-3") are one thing to a buyer.
        kind = RULES.data.tiles.get(event.improvement)
        return event.seat, kind.id if kind is not None else event.improvement
    if isinstance(event, wire.TruckBought):
        # A big truck turned huge replaces a bought truck; a truck bought outright, the small one.
        upgraded = event.replaced != SMALL
        return event.seat, f"{event.size} truck" + (" upgraded" if upgraded else "")
    if isinstance(event, wire.ForkBought):
        return event.seat, "fork"
    return None


SPEC = GameSpec(
    rules=RULES,
    title="Mechanica",
    contracts=wire,
    view=MechanicaView,
    greedy=_BOTS.greedy,
    bots=_BOTS.bots,
    determinize=_BOTS.determinize,
    rules_doc="docs/rules/mechanica.md",
    rule_texts=RULES_TEXT,
    golden_players=2,
    catalog_data=published,
    data_files=("data/mechanica.toml", "data/mechanica-data-1.toml"),
    # Mechanica's data_version carries the file's content hash (components.load).
    earlier_data={"mechanica-data-1+6fb506c3b340": "data/mechanica-data-1.toml"},
    with_data=lambda path: MechanicaRules(load(path)),
    bots_on=_bots_on,
    acquisition=_acquisition,
)

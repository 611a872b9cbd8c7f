"""Prosperity as the platform sees it: the one declaration `games.catalog` reads (docs/adding-a-game.md)."""

from __future__ import annotations

import functools
from typing import Any, cast

import msgspec

from contracts import prosperity as wire
from contracts.views.prosperity import ProsperityView
from games.base import Rules
from games.prosperity import RULES
from games.prosperity.bots import GreedyBot
from games.prosperity.components import load, published
from games.prosperity.determinize import determinize
from games.prosperity.rule_ids import RULES_TEXT
from games.prosperity.rules import ProsperityRules
from games.spec import DataBots, GameSpec, greedy_playout


def _bots_on(rules: Rules[Any]) -> DataBots:
    data = cast(ProsperityRules, rules).data
    return DataBots(greedy=functools.partial(GreedyBot, data), determinize=functools.partial(determinize, data=data))


def _turn_order(state: Any) -> list[int]:
    # Play goes round from the first player (PRO-SETUP), who is fixed for the whole game.
    n = len(state.players)
    return [(state.first_player + k) % n for k in range(n)]


# The playout reads the game state only: its one chance, the deck order, is already dealt there
# in a determinization (games/prosperity/playout.pyx).
_greedy_playout = greedy_playout(ProsperityRules, GreedyBot, "games.prosperity.playout", lambda match: match.game)


# The catalog's rules' own bots: the same makers as over any other data.
_BOTS = _bots_on(RULES)


def _acquisition(event: msgspec.Struct) -> tuple[int, str] | None:
    return (event.seat, event.tile) if isinstance(event, wire.TileBought) else None


SPEC = GameSpec(
    rules=RULES,
    title="Prosperity",
    contracts=wire,
    view=ProsperityView,
    greedy=_BOTS.greedy,
    determinize=_BOTS.determinize,
    rules_doc="docs/rules/prosperity.md",
    rule_texts=RULES_TEXT,
    golden_players=3,
    catalog_data=published,
    data_files=(
        "data/prosperity.toml",
        "data/prosperity-data-1.toml",
        "data/prosperity-data-2.toml",
        "data/prosperity-data-3.toml",
    ),
    earlier_data={
        "prosperity-data-1": "data/prosperity-data-1.toml",
        "prosperity-data-2": "data/prosperity-data-2.toml",
        "prosperity-data-3": "data/prosperity-data-3.toml",
    },
    with_data=lambda path: ProsperityRules(load(path)),
    turn_order=_turn_order,
    bots_on=_bots_on,
    acquisition=_acquisition,
    greedy_playout=_greedy_playout,
)

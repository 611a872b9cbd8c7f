"""Prosperity as the platform sees it: the one declaration `games.catalog` reads (docs/adding-a-game.md)."""

from __future__ import annotations

import functools
import weakref
from typing import Any, cast

import msgspec

from contracts import prosperity as wire
from contracts.views.prosperity import ProsperityView
from games.base import Rules
from games.bots import Bot
from games.prosperity import RULES
from games.prosperity.bots import GreedyBot
from games.prosperity.components import load, published
from games.prosperity.determinize import determinize
from games.prosperity.rule_ids import RULES_TEXT
from games.prosperity.rules import ProsperityRules
from games.spec import DataBots, GameSpec, Playout


def _bots_on(rules: Rules[Any]) -> DataBots:
    data = cast(ProsperityRules, rules).data
    return DataBots(greedy=functools.partial(GreedyBot, data), determinize=functools.partial(determinize, data=data))


def _turn_order(state: Any) -> list[int]:
    # Play goes round from the first player (PRO-SETUP), who is fixed for the whole game.
    n = len(state.players)
    return [(state.first_player + k) % n for k in range(n)]


# Per rules object: the data its playout tables were built from, and the tables.
_TABLES: weakref.WeakKeyDictionary[ProsperityRules, tuple[Any, Any]] = weakref.WeakKeyDictionary()
# What a ProsperityRules instance holds of its own; anything more makes it a variant the playout
# does not know.
_OWN = frozenset({"data", "data_version"})


def _greedy_playout(rules: Rules[Any], policy: Bot) -> Playout | None:
    """games/prosperity/playout.pyx over `rules`' data: `policy`'s rollout, in C, where `policy` is
    the greedy bot over the same data. None when it is not built (no C compiler at install), for a
    variant of the rules (a subclass, or an instance given its own attributes), for another bot or a
    greedy bot over other data, or for data it cannot hold; the search then rolls out in Python."""
    if type(rules) is not ProsperityRules or not _OWN.issuperset(vars(rules)):
        return None
    if type(policy) is not GreedyBot or policy.data is not rules.data:
        return None
    try:
        from games.prosperity import playout
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
        played = playout.playout(tables, match.game)
        return None if played is None else (played[0], played[1])

    return play


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

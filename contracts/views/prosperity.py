"""Prosperity's view: the whole table; the deck's backs and the counts still to come, never its order."""

from __future__ import annotations

import msgspec


class Pending(msgspec.Struct, frozen=True, kw_only=True):
    """The decision a count waits on: `seat` picks one of `options` for `symbol`."""

    seat: int
    symbol: str
    final: bool
    options: list[int]


class Research(msgspec.Struct, frozen=True, kw_only=True):
    energy: int
    ecology: int


class SymbolCounts(msgspec.Struct, frozen=True, kw_only=True):
    energy: int
    ecology: int
    capital: int
    research: int
    prosperity: int


class LaidTile(msgspec.Struct, frozen=True, kw_only=True):
    tile: str
    side: str
    level: int
    type: str


class SpaceView(msgspec.Struct, frozen=True, kw_only=True):
    id: str
    colour: str
    # The stack on this space, bottom first.
    tiles: list[str]
    # The tile on top, or the printed symbol's name, or null.
    shows: str | None
    usable: bool
    # The space whose tile this one needs first (null: none).
    needs: str | None


class ProsperityPlayer(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    seat: int
    # "" until the seat has chosen a board side; the fields after `ecology` are absent until then.
    side: str
    money: int
    discs: int
    points: int
    research: Research
    energy: int
    ecology: int
    capital: int | None = None
    research_symbols: int | None = None
    prosperity_symbols: int | None = None
    track_prosperity: int | None = None
    pollution_spaces: int | None = None
    polluted: bool | None = None
    spaces: list[SpaceView] | None = None


class ProsperityView(msgspec.Struct, frozen=True, kw_only=True, tag_field="game", tag="prosperity"):
    you: int | None
    # "setup", "actions", "count" or "final".
    phase: str
    over: bool
    turn: int
    turns: int
    active: int
    first_player: int
    to_act: list[int]
    actions_left: int
    counting: str | None
    drawn_tile: str | None
    pending: Pending | None
    deck_size: int
    # The decade printed on the back of each tile left, top first.
    deck_backs: list[int]
    counts_left: SymbolCounts
    decade_counts_left: SymbolCounts
    drawn: list[str]
    research_board: list[str]
    research_board_layout: list[LaidTile]
    players: list[ProsperityPlayer]
    final_scores: list[int]
    money_left: list[int]
    winners: list[int]

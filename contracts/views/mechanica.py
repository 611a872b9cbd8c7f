"""Mechanica's view: every factory, the shop, the face-up blueprints; never the order of the
improvement stack, the Extras or the blueprint piles."""

from __future__ import annotations

import msgspec


class Board(msgspec.Struct, frozen=True, kw_only=True):
    """The printed factory board, row 1 first: arrows (> ^ v, T dock, # none) and areas per square."""

    rows: int
    cols: int
    arrows: list[list[str]]
    areas: list[list[str]]


class ShopSpace(msgspec.Struct, frozen=True, kw_only=True):
    price: int
    # Improvement tile id, "" for an empty space; `kind` its kind's id.
    improvement: str
    kind: str


class BlueprintPile(msgspec.Struct, frozen=True, kw_only=True):
    pile: int
    size: int
    # The face-up card ("" for none), the bots it asks for and what it pays.
    face_up: str
    bots: list[str]
    money: int
    # Seats that completed this card (now or when it was up before): they may not again.
    completed_by: list[int]


class Square(msgspec.Struct, frozen=True, kw_only=True):
    row: int
    col: int


class Fork(msgspec.Struct, frozen=True, kw_only=True):
    row: int
    col: int
    # The direction its output arrow points: "right", "up" or "down".
    direction: str


class Factory(msgspec.Struct, frozen=True, kw_only=True):
    """Row-major lists, index (row - 1) * cols + (col - 1): the piece on each square ("" bare, a
    truck size, or an improvement id) and its holes in belt order ("" free, or a bot model)."""

    pieces: list[str]
    holes: list[list[str]]
    forks: list[Fork]
    # Squares whose fork was turned this turn (once per turn each).
    forks_turned: list[Square]


class MechanicaPlayer(msgspec.Struct, frozen=True, kw_only=True):
    seat: int
    wallet: int
    vault: int
    improvements_value: int
    blueprints_done: list[str]
    factory: Factory


class MechanicaView(msgspec.Struct, frozen=True, kw_only=True, tag_field="game", tag="mechanica"):
    board: Board
    you: int | None
    workday: int
    over: bool
    to_act: list[int]
    first_player: int
    bought_this_turn: bool
    stack_size: int
    extras_size: int
    shop: list[ShopSpace]
    blueprints: list[BlueprintPile]
    sideways: bool
    discard: list[str]
    players: list[MechanicaPlayer]
    final_scores: list[int]
    winners: list[int]

"""Artifacts, Inc.'s view: the whole table, never the order of the A-E decks; the Level 2 side of
the market cards only for the active seat once it has a die on a buy action (ART-R11)."""

from __future__ import annotations

from typing import Any

import msgspec


class MuseumView(msgspec.Struct, frozen=True, kw_only=True):
    museum: str
    kind: str
    # Per order box: the seat that filled it, or null.
    boxes: list[int | None]


class UnderwaterTop(msgspec.Struct, frozen=True, kw_only=True):
    card: str
    number: int


class Kinds(msgspec.Struct, frozen=True, kw_only=True):
    fossil: int
    scroll: int
    gem: int
    statue: int


class CardAt(msgspec.Struct, frozen=True, kw_only=True):
    card: str
    level: int
    row: int
    col: int


class ArtifactsPlayer(msgspec.Struct, frozen=True, kw_only=True):
    seat: int
    dollars: int
    reputation: int
    artifacts: Kinds
    underwater: list[str]
    cards: list[CardAt]


class ArtifactsView(msgspec.Struct, frozen=True, kw_only=True, tag_field="game", tag="artifacts"):
    you: int | None
    # "arrange", "play" or "over".
    phase: str
    round: int
    over: bool
    to_act: list[int]
    order: list[int]
    end_triggered: bool
    end_reputation: int
    dice: list[int]
    # Actions with a die on them this turn, "<card>#<slot>".
    used: list[str]
    dived: bool
    museum_side: str
    museums: list[MuseumView]
    # Per deck A..E: the face-up card ids per market slot (null: empty slot).
    market: dict[str, list[str | None]]
    deck_sizes: dict[str, int]
    # Per deck, per market slot: the card's Level 2 face as the data file prints it (a `Face` of
    # GET /v1/catalog/artifacts); null unless this seat may look (ART-R11).
    market_level_2: dict[str, list[dict[str, Any] | None]] | None
    underwater: list[str]
    underwater_top: UnderwaterTop | None
    players: list[ArtifactsPlayer]
    # Per museum: the seat that won its majority at the end (null: nobody); empty before the end.
    majorities: list[int | None]
    winners: list[int]

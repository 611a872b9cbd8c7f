"""Artifacts, Inc.'s view: the whole table, never the order of the A-E decks; the Level 2 side of
the market cards only for the active seat once it has a die on a buy action (ART-R11)."""

from __future__ import annotations

import msgspec


# A card face as the data file prints it (games/artifacts/components.py reads the file strictly
# into its own structs); lenient here, like every view, so that a newer data file's field or
# effect does not make an older bot refuse a whole turn request.
class CardActionView(msgspec.Struct, frozen=True, kw_only=True):
    die: str
    # "artifact", "artifact_adjacent", "dollars", "dollars_adjacent", "dollars_finds", "buy",
    # "museum" or "collectors" (docs/rules/artifacts.md).
    effect: str
    kind: str = ""
    amount: int = 0
    per: int = 0
    category: str = ""
    find: str = ""


class CardAbilityView(msgspec.Struct, frozen=True, kw_only=True):
    effect: str
    per: int
    category: str = ""
    find: str = ""


class FaceView(msgspec.Struct, frozen=True, kw_only=True):
    name: str
    reputation: int = 0
    adventurers: int = 0
    actions: list[CardActionView] = []
    abilities: list[CardAbilityView] = []


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
    market_level_2: dict[str, list[FaceView | None]] | None
    underwater: list[str]
    underwater_top: UnderwaterTop | None
    players: list[ArtifactsPlayer]
    # Per museum: the seat that won its majority at the end (null: nobody); empty before the end.
    majorities: list[int | None]
    winners: list[int]

"""Artifacts, Inc.'s view: the whole table, never the order of the A-E decks; the Level 2 side of
the market cards only for the active seat once it has a die on a buy action (ART-R11)."""

from __future__ import annotations

from typing import Literal

import msgspec

# A card face as data/artifacts.toml prints it (the rules and the view read the same structs).
Effect = Literal[
    "artifact",
    "artifact_adjacent",
    "dollars",
    "dollars_adjacent",
    "dollars_finds",
    "buy",
    "museum",
    "collectors",
]
AbilityEffect = Literal["rep_adjacent", "rep_finds"]


class Action(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """One action slot: the die it takes and what it does.

    artifact          `amount` cubes of `kind`
    artifact_adjacent `amount` + `per` per orthogonally adjacent own card of `category` ("any")
    dollars           `amount` dollars
    dollars_adjacent  `amount` + `per` per adjacent own card of `category` ("any")
    dollars_finds     `amount` + `per` per own underwater card with `find` ("any")
    buy               buy a new asset card or upgrade an owned one
    museum            sell to this museum (public museum cards only)
    collectors        Private Collectors: `amount` per artifact, `per` per kind beyond the first
    """

    die: str
    effect: Effect
    kind: str = ""
    amount: int = 0
    per: int = 0
    category: str = ""
    find: str = ""


class Ability(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Printed reputation that depends on the table: `per` per adjacent card / per find."""

    effect: AbilityEffect
    per: int
    category: str = ""
    find: str = ""


class Face(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    name: str
    reputation: int = 0
    adventurers: int = 0
    actions: list[Action] = msgspec.field(default_factory=list)
    abilities: list[Ability] = msgspec.field(default_factory=list)


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
    # Per deck, per market slot: the card's Level 2 face as the data file prints it (as in GET
    # /v1/catalog/artifacts); null unless this seat may look (ART-R11).
    market_level_2: dict[str, list[Face | None]] | None
    underwater: list[str]
    underwater_top: UnderwaterTop | None
    players: list[ArtifactsPlayer]
    # Per museum: the seat that won its majority at the end (null: nobody); empty before the end.
    majorities: list[int | None]
    winners: list[int]

"""Artifacts, Inc. component data: loaded from data/artifacts.toml, validated, indexed.

The rules read every card face, museum, underwater card and set-up number from here, so correcting
a reconstructed face means editing the TOML file only.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any, Literal

import msgspec

from games.kit import DataError, fail, read_toml
from games.kit import published as kit_published

DATA_FILE = Path(__file__).parent / "data" / "artifacts.toml"

KINDS: tuple[str, ...] = ("fossil", "scroll", "gem", "statue")
FINDS: tuple[str, ...] = ("pottery", "doubloons", "sunken_city")
CATEGORIES: tuple[str, ...] = ("expedition", "business", "vehicle", "facility")
MARKET_DECKS: tuple[str, ...] = ("A", "B", "C", "D", "E")
STARTING_DECK = "S"
TOTAL_CARDS = 72
PUBLIC_CARDS = 6

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
# Effects a UseAction command resolves (no parameters).
SIMPLE_EFFECTS: frozenset[str] = frozenset(
    {"artifact", "artifact_adjacent", "dollars", "dollars_adjacent", "dollars_finds"}
)
# Effects only a player's own asset card may print: cubes sit on the expedition card that found
# them, and adjacency counts the neighbours of a card in the player's rows.
PRIVATE_EFFECTS: frozenset[str] = frozenset({"artifact", "artifact_adjacent", "dollars_adjacent"})
_NEED = re.compile(r"^(any|odd|even|[1-6]|[1-6]\+|[1-6]-|![1-6])$")


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


class Asset(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    id: str
    deck: Literal["S", "A", "B", "C", "D", "E"]
    category: str
    # Printed at the top right: paid to buy the card and again to upgrade it.
    cost: int
    scrolls: int = 0
    lv1: Face
    lv2: Face


class Museum(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    id: str
    name: str
    kind: str
    die: str
    # Top left: dollars added to every sale; top right: end-of-game majority reputation.
    bonus: int
    majority: int
    # Order boxes in reading order (top-left first) on each side of the card.
    boxes_2p: list[int]
    boxes_3p: list[int]


class PublicCard(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    id: str
    name: str
    actions: list[Action]


class Underwater(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    id: str
    number: int
    find: str


class Table(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    # Starting dollars by position in turn order (first player first).
    starting_money: list[int]
    end_reputation: int
    # Own ruling ART-ROUND-CAP: the game also ends after this round (see docs/rules/artifacts.md).
    max_rounds: int
    dice_in_box: int
    first_player_dice: int
    dive_reputation: int
    market_slots: dict[str, int]
    starting_copies: int


class _File(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    data_version: str
    table: Table
    museums: list[Museum]
    public: list[PublicCard]
    underwater: list[Underwater]
    assets: list[Asset]


class ArtifactsData(msgspec.Struct, frozen=True, kw_only=True):
    data_version: str
    table: Table
    museums: dict[str, Museum]
    public: dict[str, PublicCard]
    underwater: dict[str, Underwater]
    assets: dict[str, Asset]
    # Museum ids in file order, then the other public cards: the row above the reputation board.
    public_ids: tuple[str, ...]
    museum_ids: tuple[str, ...]
    # Underwater ids lowest number first (the top of the stack).
    underwater_ids: tuple[str, ...]
    starting_ids: tuple[str, ...]
    # Per market deck, card ids in file order (before the shuffle).
    decks: dict[str, tuple[str, ...]]
    # Every die requirement used, as the set of faces that meet it.
    needs: dict[str, frozenset[int]]
    # Private Collectors: the public card and the (1-based) slot of its one collectors action.
    collectors: tuple[str, int]

    def face(self, card: str, level: int) -> Face:
        asset = self.assets[card]
        return asset.lv2 if level == 2 else asset.lv1

    def actions_of(self, card: str, level: int) -> list[Action]:
        """The action slots of an owned asset (at `level`) or a public card (level ignored)."""
        if card in self.assets:
            return self.face(card, level).actions
        if card in self.museums:
            m = self.museums[card]
            return [Action(die=m.die, effect="museum", kind=m.kind, amount=m.bonus)]
        return self.public[card].actions


def faces_meeting(need: str) -> frozenset[int]:
    """Die faces 1..6 that meet a requirement: any, odd, even, N, N+ (N or more), N- (N or
    less), !N (anything but N)."""
    if need == "any":
        return frozenset(range(1, 7))
    if need == "odd":
        return frozenset({1, 3, 5})
    if need == "even":
        return frozenset({2, 4, 6})
    if need.startswith("!"):
        return frozenset(range(1, 7)) - {int(need[1:])}
    if need.endswith("+"):
        return frozenset(range(int(need[:-1]), 7))
    if need.endswith("-"):
        return frozenset(range(1, int(need[:-1]) + 1))
    return frozenset({int(need)})


def _check_action(path: Path, where: str, a: Action, public: bool) -> None:
    if not _NEED.match(a.die):
        raise fail(path, where + ".die", f"{a.die!r} is not a die requirement (any, odd, even, N, N+, N-, !N)")
    if a.effect == "collectors" and not public:
        raise fail(path, where + ".effect", f"{a.effect} is an action of a public card only")
    if a.effect == "museum":
        raise fail(path, where + ".effect", "museum actions come from the [[museums]] tables, not from a card")
    if public and a.effect in PRIVATE_EFFECTS:
        raise fail(
            path, where + ".effect",
            f"{a.effect} is not possible on a public card: artifact cubes sit on the player's own expedition "
            "cards, and a public card has no neighbours in a player's rows",
        )  # fmt: skip
    if a.effect in ("artifact", "artifact_adjacent") and a.kind not in KINDS:
        raise fail(path, where + ".kind", f"{a.kind!r} is not one of {KINDS}")
    if a.effect.endswith("_adjacent") and a.category not in (*CATEGORIES, "any"):
        raise fail(path, where + ".category", f"{a.category!r} is not a category or 'any'")
    if a.effect == "dollars_finds" and a.find not in (*FINDS, "any"):
        raise fail(path, where + ".find", f"{a.find!r} is not a find or 'any'")
    if a.amount < 0 or a.per < 0:
        raise fail(path, where, "amount and per must not be negative")
    if a.effect in ("artifact", "dollars") and a.amount <= 0:
        raise fail(path, where + ".amount", "must be positive")


def _check_face(path: Path, where: str, f: Face) -> None:
    if f.reputation < 0 or f.adventurers < 0:
        raise fail(path, where, "reputation and adventurers must not be negative")
    for i, a in enumerate(f.actions):
        _check_action(path, f"{where}.actions[{i}]", a, public=False)
    for i, ab in enumerate(f.abilities):
        w = f"{where}.abilities[{i}]"
        if ab.per <= 0:
            raise fail(path, w + ".per", "must be positive")
        if ab.effect == "rep_adjacent" and ab.category not in (*CATEGORIES, "any"):
            raise fail(path, w + ".category", f"{ab.category!r} is not a category or 'any'")
        if ab.effect == "rep_finds" and ab.find not in (*FINDS, "any"):
            raise fail(path, w + ".find", f"{ab.find!r} is not a find or 'any'")


def _check_kind(path: Path, i: int, asset: Asset) -> None:
    """A cube's kind is the card it sits on: every artifact action of a card, on both sides,
    gives the same kind (so cubes on an upgraded card keep their meaning), and only expedition
    cards give artifacts (Private Collectors pays per cube discarded from an expedition card)."""
    card = f"assets[{i}] (id {asset.id!r})"
    first: tuple[str, str] | None = None
    for side, face in (("lv1", asset.lv1), ("lv2", asset.lv2)):
        for j, a in enumerate(face.actions):
            if a.effect not in ("artifact", "artifact_adjacent"):
                continue
            where = f"{card}.{side}.actions[{j}].kind"
            if first is None:
                first = (a.kind, where)
            elif a.kind != first[0]:
                raise fail(
                    path, where,
                    f"{a.kind!r} differs from {first[0]!r} at {first[1]}: a card gives one kind of artifact, "
                    "the same on both sides",
                )  # fmt: skip
    if first is not None and asset.category != "expedition":
        raise fail(
            path, card + ".category",
            f"{asset.category!r}: a card giving artifacts ({first[0]}) must be an 'expedition'",
        )  # fmt: skip


def _collectors(path: Path, public: list[PublicCard]) -> tuple[str, int]:
    """The one Private Collectors action: exactly one public card with exactly one of them."""
    found = [(p.id, j + 1) for p in public for j, a in enumerate(p.actions) if a.effect == "collectors"]
    if len(found) != 1:
        where = ", ".join(f"{pid} action {slot}" for pid, slot in found) or "none"
        raise fail(
            path, "public.actions.effect",
            "expected exactly one public card with exactly one 'collectors' action (Private Collectors); "
            f"found {where}",
        )  # fmt: skip
    return found[0]


def _check_counts(path: Path, f: _File) -> None:
    ids = [m.id for m in f.museums] + [p.id for p in f.public] + [u.id for u in f.underwater]
    ids += [a.id for a in f.assets]
    dupes = sorted(k for k, n in Counter(ids).items() if n > 1)
    if dupes:
        raise fail(path, "id", f"duplicate ids {dupes}")
    if sorted(m.kind for m in f.museums) != sorted(KINDS):
        raise fail(path, "museums", f"expected one museum per artifact kind {KINDS}")
    if len(f.museums) + len(f.public) != PUBLIC_CARDS:
        raise fail(path, "public", f"expected {PUBLIC_CARDS} public cards with the museums")
    starting = [a for a in f.assets if a.deck == STARTING_DECK]
    total = PUBLIC_CARDS + len(f.underwater) + len(f.assets) + len(starting) * (f.table.starting_copies - 1)
    if total != TOTAL_CARDS:
        raise fail(path, "assets", f"the cards add up to {total}, not {TOTAL_CARDS}")
    if len(f.table.starting_money) < f.table.starting_copies:
        raise fail(path, "table.starting_money", "needs one amount per seat")
    if sorted(f.table.market_slots) != sorted(MARKET_DECKS):
        raise fail(path, "table.market_slots", f"expected slots for decks {MARKET_DECKS}")
    if min(f.table.market_slots.values()) < 1:
        raise fail(path, "table.market_slots", "every deck shows at least one face-up card")
    numbers = sorted(u.number for u in f.underwater)
    if numbers != list(range(2, 2 + len(numbers))):
        raise fail(path, "underwater", "numbers must run from 2 upwards without gaps")


def parse(raw: dict[str, Any], path: Path = DATA_FILE) -> ArtifactsData:
    """Validate decoded TOML into `ArtifactsData`, raising `DataError` naming file and field."""
    try:
        f = msgspec.convert(raw, _File)
    except msgspec.ValidationError as exc:
        raise DataError(f"{path}: {exc}") from exc
    _check_counts(path, f)
    for i, m in enumerate(f.museums):
        if not _NEED.match(m.die):
            raise fail(path, f"museums[{i}].die", f"{m.die!r} is not a die requirement")
        if not m.boxes_2p or not m.boxes_3p or min(m.boxes_2p + m.boxes_3p) <= 0:
            raise fail(path, f"museums[{i}].boxes", "order boxes must be positive, on both sides")
    for i, p in enumerate(f.public):
        for j, a in enumerate(p.actions):
            _check_action(path, f"public[{i}].actions[{j}]", a, public=True)
    for i, u in enumerate(f.underwater):
        if u.find not in FINDS:
            raise fail(path, f"underwater[{i}].find", f"{u.find!r} is not one of {FINDS}")
    for i, asset in enumerate(f.assets):
        if asset.category not in CATEGORIES:
            raise fail(path, f"assets[{i}].category", f"{asset.category!r} is not one of {CATEGORIES}")
        if asset.cost < 0 or asset.scrolls < 0:
            raise fail(path, f"assets[{i}].cost", "cost and scrolls must not be negative")
        _check_face(path, f"assets[{i}] (id {asset.id!r}).lv1", asset.lv1)
        _check_face(path, f"assets[{i}] (id {asset.id!r}).lv2", asset.lv2)
        _check_kind(path, i, asset)
    collectors = _collectors(path, f.public)
    needs = {m.die for m in f.museums} | {a.die for p in f.public for a in p.actions}
    needs |= {x.die for a in f.assets for face in (a.lv1, a.lv2) for x in face.actions}
    return ArtifactsData(
        data_version=f.data_version,
        table=f.table,
        museums={m.id: m for m in f.museums},
        public={p.id: p for p in f.public},
        underwater={u.id: u for u in f.underwater},
        assets={a.id: a for a in f.assets},
        public_ids=tuple([m.id for m in f.museums] + [p.id for p in f.public]),
        museum_ids=tuple(m.id for m in f.museums),
        underwater_ids=tuple(u.id for u in sorted(f.underwater, key=lambda u: u.number)),
        starting_ids=tuple(a.id for a in f.assets if a.deck == STARTING_DECK),
        decks={d: tuple(a.id for a in f.assets if a.deck == d) for d in MARKET_DECKS},
        needs={n: faces_meeting(n) for n in needs},
        collectors=collectors,
    )


def load(path: Path = DATA_FILE) -> ArtifactsData:
    return parse(read_toml(path)[0], path)


def published(path: Path = DATA_FILE) -> dict[str, Any]:
    """The data file as GET /v1/catalog/<game> publishes it (games.kit.published)."""
    return kit_published(path, _File)

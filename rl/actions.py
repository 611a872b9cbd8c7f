"""A FIXED action encoding per game: every command a game could issue, enumerated once, in a
deterministic order, from the command structs' parameter domains and the game's data.

Index i <-> command `codec.commands[i]`; the legal mask of a state is the set of indices of
`legal_actions(seat)`. Commands are matched by their canonical JSON encoding (msgspec), so a
command with list fields (Mechanica's rows, Artifacts' dice) maps too.

Per game (sizes: `encoding_sizes()`; docs/bots.md lists them):

* sentient: Pass, then Acquire(factory_slot 1..4, network_slot 1..4, assistants 0..5,
  block_left, block_right): exact.
* prosperity: ChooseBoard(side) per board, SettleEnergy(discs 0..2 x spaces x the most negative
  energy a tile shows), SplitResearch(energy 0..research top), Income, CleanUp, Research(track),
  BuyTile(tile, space | None) for every tile and board space: exact.
* mechanica: Sell(row, model), Install(price, row, col), Recycle(price, rows), CompleteBlueprint
  (pile, rows), BuyTruck, UpgradeTruck, BuyFork, SetFork, EndTurn(rows), rows over the factory's
  rows, rows lists every sequence up to the longest recycle list / blueprint: exact.
* artifacts: exact except two bounded parameters, since a tableau can grow without a bound and
  artifacts pile up: Buy's `col` is limited to ARTIFACTS_COLS (-6..11; the starting row is 1..4)
  and Private Collectors sales to at most COLLECTORS_CAP of each kind. A legal command outside the
  encoding (`within_bounds`) has no index: `legal_indices` leaves it out (an agent cannot pick it); EndTurn is
  always encoded, so a PLAY turn always has a legal index. Dive dice are listed in ascending
  order, as the rules list them.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Sequence
from functools import cache
from typing import Any

import msgspec

from contracts import artifacts as ca
from contracts import mechanica as cm
from contracts import prosperity as cp
from contracts import sentient as cs
from games.catalog import SPECS

Command = msgspec.Struct

ARTIFACTS_COLS = range(-6, 12)
COLLECTORS_CAP = 8
_ENCODER = msgspec.json.Encoder()


def within_bounds(cmd: Command) -> bool:
    """Whether `cmd` lies inside the encoding's documented bounds (module docstring): every legal
    command that does has an index; one that does not (a far column, a large collectors sale) has
    none by design."""
    if isinstance(cmd, ca.Buy):
        return cmd.col in ARTIFACTS_COLS
    if isinstance(cmd, ca.SellToCollectors):
        return max(cmd.fossil, cmd.scroll, cmd.gem, cmd.statue) <= COLLECTORS_CAP
    return True


def command_key(cmd: Command) -> bytes:
    """The canonical form two equal commands share (type name + JSON fields)."""
    return type(cmd).__name__.encode() + b":" + _ENCODER.encode(cmd)


class ActionCodec:
    """index <-> command for one game."""

    def __init__(self, game: str, commands: Iterable[Command]) -> None:
        self.game = game
        self.commands: tuple[Command, ...] = tuple(commands)
        self._index: dict[bytes, int] = {}
        # Commands already encoded, keyed by the command itself (frozen structs hash by value):
        # a legal mask encodes every legal command at every step, and a JSON key costs 5x a hash.
        # Unhashable ones (list fields) go by their key each time; bounded, since a legal command
        # outside the encoding's bounds (Artifacts' far columns) is new each time.
        self._seen: dict[Command, int | None] = {}
        for i, cmd in enumerate(self.commands):
            key = command_key(cmd)
            if key in self._index:
                raise ValueError(f"{game}: {cmd!r} enumerated twice")
            self._index[key] = i

    @property
    def size(self) -> int:
        return len(self.commands)

    def encode(self, cmd: Command) -> int | None:
        """The index of `cmd`, or None when the encoding bounds leave it out."""
        try:
            return self._seen[cmd]
        except KeyError:
            index = self._seen[cmd] = self._index.get(command_key(cmd))
            if len(self._seen) > 4 * len(self.commands):
                self._seen.clear()
            return index
        except TypeError:  # unhashable: a list field
            return self._index.get(command_key(cmd))

    def decode(self, index: int) -> Command:
        return self.commands[index]

    def legal_indices(self, legal: Sequence[Command]) -> list[int]:
        """Sorted indices of the encodable commands of `legal`."""
        out = {i for i in map(self.encode, legal) if i is not None}
        return sorted(out)


def _sequences(values: Sequence[int], max_len: int, min_len: int = 0) -> list[list[int]]:
    return [list(p) for n in range(min_len, max_len + 1) for p in itertools.product(values, repeat=n)]


def _sentient() -> list[Command]:
    from games.sentient.fold import ASSISTANTS_PER_ROUND

    slots = range(1, 5)
    out: list[Command] = [cs.Pass()]
    for f, n, a, bl, br in itertools.product(
        slots, slots, range(ASSISTANTS_PER_ROUND + 1), (False, True), (False, True)
    ):
        out.append(cs.Acquire(factory_slot=f, network_slot=n, assistants=a, block_left=bl, block_right=br))
    return out


def _prosperity() -> list[Command]:
    from games.prosperity.state import TRACKS

    rules: Any = SPECS["prosperity"].rules
    d = rules.data
    spaces = sorted({s.id for b in d.boards.values() for s in b.spaces})
    worst = max([0, *(-t.energy for t in d.tiles.values())])
    worst = max([worst, *(-(s.printed.energy if s.printed else 0) for b in d.boards.values() for s in b.spaces)])
    max_discs = 2 * max(len(b.spaces) for b in d.boards.values()) * worst
    out: list[Command] = [cp.ChooseBoard(side=s) for s in d.board_ids]
    out += [cp.SettleEnergy(discs=k) for k in range(max_discs + 1)]
    out += [cp.SplitResearch(energy=k) for k in range(d.research_top + 1)]
    out += [cp.Income(), cp.CleanUp(), *(cp.Research(track=t) for t in TRACKS)]
    for tile in d.tiles:
        out += [cp.BuyTile(tile=tile, space=None), *(cp.BuyTile(tile=tile, space=s) for s in spaces)]
    return out


def _mechanica() -> list[Command]:
    rules: Any = SPECS["mechanica"].rules
    d = rules.data
    g = d.geometry
    rows = list(range(1, g.nrows + 1))
    cols = list(range(1, g.ncols + 1))
    prices = sorted(set(d.setup.shop_prices), reverse=True)
    directions = ("up", "down", "right")
    recycle_len = max(len(k.recycle) for k in d.kinds.values())
    blueprint_len = max(len(b.bots) for b in d.blueprints.values())
    piles = range(1, len(d.setup.blueprint_piles) + 1)
    out: list[Command] = [cm.Sell(row=r, model=m) for r in rows for m in d.models]
    out += [cm.Install(price=p, row=r, col=c) for p in prices for r in rows for c in cols]
    out += [cm.Recycle(price=p, rows=rs) for p in prices for rs in _sequences(rows, recycle_len)]
    out += [cm.CompleteBlueprint(pile=p, rows=rs) for p in piles for rs in _sequences(rows, blueprint_len, 1)]
    out += [cm.BuyTruck(row=r, size=s) for r in rows for s in ("big", "huge")]
    out += [cm.UpgradeTruck(row=r) for r in rows]
    out += [cm.BuyFork(row=r, col=c, direction=x) for r in rows for c in cols for x in directions]
    out += [cm.SetFork(row=r, col=c, direction=x) for r in rows for c in cols for x in directions]
    out += [cm.EndTurn(rows=rs) for rs in _sequences(rows, recycle_len)]
    return out


def _artifacts() -> list[Command]:
    from games.artifacts.components import KINDS, SIMPLE_EFFECTS

    rules: Any = SPECS["artifacts"].rules
    d = rules.data
    out: list[Command] = [ca.EndTurn()]
    out += [ca.ArrangeStart(cards=list(p)) for p in itertools.permutations(d.starting_ids)]
    market = [cid for deck in d.decks.values() for cid in deck]
    owned = [*d.starting_ids, *(cid for cid in market if cid not in d.starting_ids)]
    # Every action slot a card can carry: (card, 1-based slot) -> effects and die faces over its faces.
    slots: dict[tuple[str, int], tuple[set[str], set[int]]] = {}
    faces = [(cid, d.actions_of(cid, lv)) for cid in d.assets for lv in (1, 2)]
    faces += [(pid, d.actions_of(pid, 1)) for pid in d.public_ids]
    for cid, actions in faces:
        for i, a in enumerate(actions):
            effects, dice = slots.setdefault((cid, i + 1), (set(), set()))
            effects.add(a.effect)
            dice.update(d.needs[a.die])
    sales = [x for x in itertools.product(range(COLLECTORS_CAP + 1), repeat=len(KINDS)) if sum(x) > 0]
    for (cid, action), (effects, dice) in slots.items():
        for die in sorted(dice):
            if effects & SIMPLE_EFFECTS:
                out.append(ca.UseAction(die=die, card=cid, action=action))
            if "buy" in effects:
                out += [
                    ca.Buy(die=die, card=cid, action=action, market=m, row=r, col=c)
                    for m in market
                    for r in (1, 2)
                    for c in ARTIFACTS_COLS
                ]
                out += [ca.Upgrade(die=die, card=cid, action=action, target=t) for t in owned]
            if "museum" in effects:
                boxes = max(len(d.museums[cid].boxes_2p), len(d.museums[cid].boxes_3p))
                out += [ca.SellToMuseum(die=die, museum=cid, box=b) for b in range(1, boxes + 1)]
            if "collectors" in effects:
                out += [ca.SellToCollectors(die=die, fossil=x[0], scroll=x[1], gem=x[2], statue=x[3]) for x in sales]
    dice_faces = range(1, 7)
    for n in range(1, d.table.dice_in_box + 1):
        out += [ca.Dive(dice=list(c)) for c in itertools.combinations_with_replacement(dice_faces, n)]
    return out


_BUILDERS: dict[str, Callable[[], list[Command]]] = {
    "sentient": _sentient,
    "prosperity": _prosperity,
    "mechanica": _mechanica,
    "artifacts": _artifacts,
}

GAMES: tuple[str, ...] = tuple(_BUILDERS)


@cache
def codec_for(game: str) -> ActionCodec:
    """The game's encoding (built once per process)."""
    try:
        builder = _BUILDERS[game]
    except KeyError:
        raise ValueError(f"no action encoding for {game!r}; known: {sorted(_BUILDERS)}") from None
    return ActionCodec(game, builder())


def encoding_sizes() -> dict[str, int]:
    return {g: codec_for(g).size for g in GAMES}

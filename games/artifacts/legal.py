"""Every command a seat may send now. Each listed command is accepted, and every accepted command
is listed, with two documented exceptions (docs/rules/artifacts.md, "Legal actions"): a Dive is
listed once with its dice in ascending order, and a Private Collectors sale with more than
EXACT_SALES combinations is listed through a representative subset."""

from __future__ import annotations

import functools
import itertools
from collections import Counter

import msgspec

from contracts import artifacts as c
from games.artifacts.components import KINDS, SIMPLE_EFFECTS, ArtifactsData
from games.artifacts.decide import free_places, museum_orders
from games.artifacts.state import ARRANGE, PLAY, ArtifactsState, slot_key

_SCROLL = KINDS.index("scroll")
EXACT_SALES = 256


@functools.lru_cache(maxsize=4096)
def _buy_commands(
    die: int, card: str, action: int, markets: tuple[str, ...], places: tuple[tuple[int, int], ...]
) -> tuple[msgspec.Struct, ...]:
    """Every Buy of one die on one action slot. A move lists hundreds of commands, the same ones
    while the hand, the market and the dice stay as they are: they are built once per argument set
    and reused (frozen), here and in the caches below (building them was most of a step)."""
    return tuple(
        c.Buy(die=die, card=card, action=action, market=market, row=r, col=col)
        for market in markets
        for r, col in places
    )


def _affordable(data: ArtifactsData, s: ArtifactsState, seat: int) -> tuple[str, ...]:
    p = s.players[seat]
    return tuple(
        market
        for slots in s.market
        for market in slots
        if market is not None
        and data.assets[market].cost <= p.dollars
        and data.assets[market].scrolls <= p.artifacts[_SCROLL]
    )


def _buys(
    data: ArtifactsData,
    s: ArtifactsState,
    seat: int,
    die: int,
    card: str,
    action: int,
    markets: tuple[str, ...],
    places: tuple[tuple[int, int], ...],
) -> list[msgspec.Struct]:
    p = s.players[seat]
    out: list[msgspec.Struct] = list(_buy_commands(die, card, action, markets, places))
    for pc in p.cards:
        asset = data.assets[pc.card]
        if pc.level == 1 and asset.cost <= p.dollars and asset.scrolls <= p.artifacts[_SCROLL]:
            out.append(c.Upgrade(die=die, card=card, action=action, target=pc.card))
    return out


def _sales(held: list[int]) -> list[tuple[int, ...]]:
    """Every mix of held artifacts; past EXACT_SALES mixes, a representative subset: each kind
    alone in any amount, and every mix selling 0, 1 or all of each kind."""
    combos = 1
    for h in held:
        combos *= h + 1
    if combos - 1 <= EXACT_SALES:
        return [sold for sold in itertools.product(*(range(h + 1) for h in held)) if sum(sold) > 0]
    picks: set[tuple[int, ...]] = set()
    for i, h in enumerate(held):
        for n in range(1, h + 1):
            picks.add(tuple(n if j == i else 0 for j in range(len(held))))
    for sold in itertools.product(*(sorted({0, min(1, h), h}) for h in held)):
        if sum(sold) > 0:
            picks.add(sold)
    return sorted(picks)


def _dives(data: ArtifactsData, s: ArtifactsState) -> tuple[msgspec.Struct, ...]:
    if s.dived or not s.underwater:
        return ()
    return _dive_commands(tuple(sorted(Counter(s.dice).items())), data.underwater[s.underwater[0]].number)


@functools.lru_cache(maxsize=1024)
def _dive_commands(counts: tuple[tuple[int, int], ...], need: int) -> tuple[msgspec.Struct, ...]:
    """Every Dive with dice (value, how many unplaced) summing to at least `need`, built once per
    argument set (frozen; their lists are never changed)."""
    out: list[msgspec.Struct] = []
    for take in itertools.product(*(range(n + 1) for _, n in counts)):
        dice = [v for (v, _), k in zip(counts, take, strict=True) for _ in range(k)]
        if dice and sum(dice) >= need:
            out.append(c.Dive(dice=dice))
    return tuple(out)


# Up to EXACT_SALES commands an entry: fewer entries than the other tables keep.
@functools.lru_cache(maxsize=256)
def _collector_sales(die: int, held: tuple[int, ...]) -> tuple[msgspec.Struct, ...]:
    return tuple(
        c.SellToCollectors(die=die, fossil=x[0], scroll=x[1], gem=x[2], statue=x[3]) for x in _sales(list(held))
    )


@functools.lru_cache(maxsize=4096)
def _use(die: int, card: str, action: int) -> msgspec.Struct:
    return c.UseAction(die=die, card=card, action=action)


@functools.lru_cache(maxsize=4096)
def _museum_sale(die: int, museum: str, box: int) -> msgspec.Struct:
    return c.SellToMuseum(die=die, museum=museum, box=box)


def legal_actions(data: ArtifactsData, s: ArtifactsState, seat: int) -> list[msgspec.Struct]:
    if s.over or s.current != seat:
        return []
    if s.phase == ARRANGE:
        return [c.ArrangeStart(cards=list(order)) for order in itertools.permutations(data.starting_ids)]
    if s.phase != PLAY:
        return []
    p = s.players[seat]
    values = sorted(set(s.dice))
    out: list[msgspec.Struct] = [c.EndTurn()]
    slots: list[tuple[str, int, str, str]] = []  # (card, action, effect, need)
    for pc in p.cards:
        for i, a in enumerate(data.face(pc.card, pc.level).actions):
            slots.append((pc.card, i + 1, a.effect, a.die))
    for pid in data.public_ids:
        for i, a in enumerate(data.actions_of(pid, 1)):
            slots.append((pid, i + 1, a.effect, a.die))
    held_all = tuple(p.artifacts)
    # What every buy slot offers this move: the market cards the seat can pay, the free places.
    markets = _affordable(data, s, seat)
    places = tuple(free_places(p.cards))
    for card, action, effect, need in slots:
        if slot_key(card, action) in s.used:
            continue
        for die in values:
            if die not in data.needs[need]:
                continue
            if effect in SIMPLE_EFFECTS:
                out.append(_use(die, card, action))
            elif effect == "buy":
                out += _buys(data, s, seat, die, card, action, markets, places)
            elif effect == "museum":
                held = p.artifacts[KINDS.index(data.museums[card].kind)]
                boxes = s.boxes[s.museum_ids.index(card)]
                for b, count in enumerate(museum_orders(data, s, card)):
                    if boxes[b] is None and count <= held:
                        out.append(_museum_sale(die, card, b + 1))
            elif effect == "collectors":
                out += _collector_sales(die, held_all)
    out += _dives(data, s)
    return out

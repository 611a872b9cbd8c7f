"""Deciding the commands of a turn: validation (the rule a refusal cites) and the outcome events."""

from __future__ import annotations

from collections import Counter
from functools import partial

import msgspec

from contracts import artifacts as c
from games.artifacts import fold
from games.artifacts.components import KINDS, MARKET_DECKS, SIMPLE_EFFECTS, Action, ArtifactsData
from games.artifacts.flow import after_action, end_turn, mark_reputation, start_turn
from games.artifacts.rule_ids import reject
from games.artifacts.scoring import action_yield, collectors_sale, museum_sale, neighbours
from games.artifacts.state import ArtifactsState, Placed, clone, slot_key
from games.base import Rejected
from games.kit import Emitter
from games.rng import Rng

Events = list[msgspec.Struct]
_SCROLL = KINDS.index("scroll")


def museum_orders(data: ArtifactsData, s: ArtifactsState, museum: str) -> list[int]:
    m = data.museums[museum]
    return m.boxes_2p if s.museum_side == "2p" else m.boxes_3p


def find_slot(
    data: ArtifactsData, s: ArtifactsState, seat: int, card: str, action: int
) -> tuple[Action, Placed | None] | Rejected:
    """The action slot `action` of `card` (an own asset or a public card), if it is free this turn."""
    placed: Placed | None = None
    if card in data.public or card in data.museums:
        actions = data.actions_of(card, 1)
    else:
        placed = next((pc for pc in s.players[seat].cards if pc.card == card), None)
        if placed is None:
            return reject(data, "ART-SLOT", f"{card!r} is neither one of your asset cards nor a public card")
        actions = data.actions_of(card, placed.level)
    if not 1 <= action <= len(actions):
        return reject(data, "ART-SLOT", f"{card} has {len(actions)} action slot(s), not {action}")
    if slot_key(card, action) in s.used:
        return reject(data, "ART-SLOT", f"action {action} of {card} already holds a die this turn")
    return actions[action - 1], placed


def _die_and_slot(
    data: ArtifactsData, s: ArtifactsState, seat: int, die: int, card: str, action: int, effects: frozenset[str]
) -> tuple[Action, Placed | None] | Rejected:
    if die not in s.dice:
        return reject(data, "ART-DIE", f"no unplaced die shows {die}; unplaced: {sorted(s.dice)}")
    found = find_slot(data, s, seat, card, action)
    if isinstance(found, Rejected):
        return found
    act, placed = found
    if act.effect not in effects:
        return reject(data, "ART-ACTION", f"action {action} of {card} is a {act.effect} action")
    if die not in data.needs[act.die]:
        return reject(data, "ART-REQUIREMENT", f"a {die} does not meet {act.die!r}")
    return act, placed


def _start(
    data: ArtifactsData, s: ArtifactsState, seat: int, dice: list[int], card: str, action: int
) -> Emitter[ArtifactsState]:
    out = Emitter(clone(s), partial(fold.evolve, data))
    out.emit(c.DicePlaced(seat=seat, dice=dice, card=card, action=action))
    return out


def use_action(data: ArtifactsData, s: ArtifactsState, seat: int, cmd: c.UseAction, rng: Rng) -> Events | Rejected:
    found = _die_and_slot(data, s, seat, cmd.die, cmd.card, cmd.action, SIMPLE_EFFECTS)
    if isinstance(found, Rejected):
        return found
    act, placed = found
    p = s.players[seat]
    amount = action_yield(data, act, p.cards, p.underwater, placed)
    out = _start(data, s, seat, [cmd.die], cmd.card, cmd.action)
    if act.effect.startswith("artifact"):
        out.emit(c.ArtifactsFound(seat=seat, kind=act.kind, count=amount))
    else:
        out.emit(c.DollarsEarned(seat=seat, amount=amount))
    after_action(data, out, seat, rng)
    return out.events


def market_slot(s: ArtifactsState, card: str) -> tuple[int, int] | None:
    """(deck index, 1-based slot) of a face-up market card."""
    for d, slots in enumerate(s.market):
        if card in slots:
            return d, slots.index(card) + 1
    return None


def _pay(data: ArtifactsData, s: ArtifactsState, seat: int, card: str) -> Rejected | None:
    asset = data.assets[card]
    p = s.players[seat]
    if asset.cost > p.dollars or asset.scrolls > p.artifacts[_SCROLL]:
        return reject(
            data,
            "ART-COST",
            f"{card} costs {asset.cost} dollars and {asset.scrolls} scroll(s); "
            f"you hold {p.dollars} and {p.artifacts[_SCROLL]}",
        )
    return None


def free_places(cards: list[Placed]) -> list[tuple[int, int]]:
    """Empty places in rows 1-2 sharing a side with an owned card, sorted."""
    taken = {(pc.row, pc.col) for pc in cards}
    spots = set()
    for pc in cards:
        for r, col in ((pc.row, pc.col - 1), (pc.row, pc.col + 1), (3 - pc.row, pc.col)):
            if (r, col) not in taken:
                spots.add((r, col))
    return sorted(spots)


def buy(data: ArtifactsData, s: ArtifactsState, seat: int, cmd: c.Buy, rng: Rng) -> Events | Rejected:
    found = _die_and_slot(data, s, seat, cmd.die, cmd.card, cmd.action, frozenset({"buy"}))
    if isinstance(found, Rejected):
        return found
    where = market_slot(s, cmd.market)
    if where is None:
        shown = [x for m in s.market for x in m if x]
        return reject(data, "ART-MARKET", f"{cmd.market!r} is not a face-up market card; face-up: {shown}")
    refusal = _pay(data, s, seat, cmd.market)
    if refusal is not None:
        return refusal
    cards = s.players[seat].cards
    if cmd.row not in (1, 2):
        return reject(data, "ART-LAYOUT", f"row {cmd.row} does not exist (1 top, 2 bottom)")
    if any(pc.row == cmd.row and pc.col == cmd.col for pc in cards):
        return reject(data, "ART-LAYOUT", f"row {cmd.row} column {cmd.col} already holds a card")
    if not neighbours(cards, cmd.row, cmd.col):
        return reject(data, "ART-LAYOUT", f"row {cmd.row} column {cmd.col} shares no side with a card you own")
    d, slot = where
    asset = data.assets[cmd.market]
    out = _start(data, s, seat, [cmd.die], cmd.card, cmd.action)
    out.emit(
        c.AssetBought(
            seat=seat, card=cmd.market, deck=MARKET_DECKS[d], slot=slot, row=cmd.row, col=cmd.col,
            dollars=asset.cost, scrolls=asset.scrolls,
        )
    )  # fmt: skip
    if out.state.decks[d]:
        out.emit(c.MarketRefilled(deck=MARKET_DECKS[d], slots=[slot], cards=[out.state.decks[d][0]]))
    after_action(data, out, seat, rng)
    return out.events


def upgrade(data: ArtifactsData, s: ArtifactsState, seat: int, cmd: c.Upgrade, rng: Rng) -> Events | Rejected:
    found = _die_and_slot(data, s, seat, cmd.die, cmd.card, cmd.action, frozenset({"buy"}))
    if isinstance(found, Rejected):
        return found
    target = next((pc for pc in s.players[seat].cards if pc.card == cmd.target), None)
    if target is None:
        return reject(data, "ART-UPGRADE", f"you own no asset card {cmd.target!r}")
    if target.level != 1:
        return reject(data, "ART-UPGRADE", f"{cmd.target} already shows Level 2")
    refusal = _pay(data, s, seat, cmd.target)
    if refusal is not None:
        return refusal
    asset = data.assets[cmd.target]
    out = _start(data, s, seat, [cmd.die], cmd.card, cmd.action)
    out.emit(c.AssetUpgraded(seat=seat, card=cmd.target, dollars=asset.cost, scrolls=asset.scrolls))
    after_action(data, out, seat, rng)
    return out.events


def sell_museum(data: ArtifactsData, s: ArtifactsState, seat: int, cmd: c.SellToMuseum, rng: Rng) -> Events | Rejected:
    found = _die_and_slot(data, s, seat, cmd.die, cmd.museum, 1, frozenset({"museum"}))
    if isinstance(found, Rejected):
        return found
    museum = data.museums[cmd.museum]
    orders = museum_orders(data, s, cmd.museum)
    if not 1 <= cmd.box <= len(orders):
        return reject(data, "ART-MUSEUM", f"the {museum.name} has order boxes 1..{len(orders)} on this side")
    boxes = s.boxes[s.museum_ids.index(cmd.museum)]
    if boxes[cmd.box - 1] is not None:
        return reject(data, "ART-MUSEUM", f"order box {cmd.box} of the {museum.name} is already filled")
    count = orders[cmd.box - 1]
    held = s.players[seat].artifacts[KINDS.index(museum.kind)]
    if held < count:
        return reject(data, "ART-ARTIFACTS", f"order box {cmd.box} takes {count} {museum.kind}(s); you hold {held}")
    out = _start(data, s, seat, [cmd.die], cmd.museum, 1)
    out.emit(
        c.MuseumOrderFilled(
            seat=seat, museum=cmd.museum, box=cmd.box, kind=museum.kind, count=count,
            dollars=museum_sale(count, museum.bonus),
        )
    )  # fmt: skip
    after_action(data, out, seat, rng)
    return out.events


def sell_collectors(
    data: ArtifactsData, s: ArtifactsState, seat: int, cmd: c.SellToCollectors, rng: Rng
) -> Events | Rejected:
    # The loader checks there is exactly one collectors action, on one public card.
    pid, slot = data.collectors
    found = _die_and_slot(data, s, seat, cmd.die, pid, slot, frozenset({"collectors"}))
    if isinstance(found, Rejected):
        return found
    act = found[0]
    sold = [cmd.fossil, cmd.scroll, cmd.gem, cmd.statue]
    if min(sold) < 0 or sum(sold) < 1:
        mix = dict(zip(KINDS, sold, strict=True))
        return reject(data, "ART-COLLECTORS", f"sold {mix}: at least one, none negative")
    held = s.players[seat].artifacts
    short = [k for k, n, h in zip(KINDS, sold, held, strict=True) if n > h]
    if short:
        return reject(data, "ART-ARTIFACTS", f"you hold {dict(zip(KINDS, held, strict=True))}, not enough {short}")
    out = _start(data, s, seat, [cmd.die], pid, slot)
    out.emit(c.CollectorsPaid(seat=seat, sold=sold, dollars=collectors_sale(sold, act.amount, act.per)))
    after_action(data, out, seat, rng)
    return out.events


def dive(data: ArtifactsData, s: ArtifactsState, seat: int, cmd: c.Dive, rng: Rng) -> Events | Rejected:
    if not s.underwater:
        return reject(data, "ART-DIVE-STACK", "every underwater card has been taken")
    if s.dived:
        return reject(data, "ART-DIVE-ONCE", "you already took an underwater card this turn")
    have, want = Counter(s.dice), Counter(cmd.dice)
    if any(want[v] > have[v] for v in want):
        return reject(data, "ART-DIE", f"dice {sorted(cmd.dice)} are not among the unplaced {sorted(s.dice)}")
    top = data.underwater[s.underwater[0]]
    if not cmd.dice or sum(cmd.dice) < top.number:
        detail = f"dice {sorted(cmd.dice)} sum to {sum(cmd.dice)}; {top.id} needs {top.number}"
        return reject(data, "ART-DIVE-SUM", detail)
    out = _start(data, s, seat, sorted(cmd.dice), "dive", 1)
    out.emit(c.UnderwaterFound(seat=seat, card=top.id, number=top.number, find=top.find))
    after_action(data, out, seat, rng)
    return out.events


def end_turn_now(data: ArtifactsData, s: ArtifactsState, seat: int, rng: Rng) -> Events:
    out = Emitter(clone(s), partial(fold.evolve, data))
    end_turn(data, out, seat, rng)
    return out.events


def arrange(data: ArtifactsData, s: ArtifactsState, seat: int, cmd: c.ArrangeStart, rng: Rng) -> Events | Rejected:
    if sorted(cmd.cards) != sorted(data.starting_ids):
        return reject(data, "ART-ARRANGE", f"{cmd.cards} is not an order of {list(data.starting_ids)}")
    out = Emitter(clone(s), partial(fold.evolve, data))
    out.emit(c.StartArranged(seat=seat, cards=list(cmd.cards)))
    if out.state.current is None:
        # Starting cards may show reputation; every track starts at its visible total.
        for p_seat in range(s.num_players):
            mark_reputation(data, out, p_seat)
        start_turn(data, out, s.order[0], rng)
    return out.events

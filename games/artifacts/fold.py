"""`evolve`: apply one event to the state, in place. Events carry outcomes, so nothing is computed."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

from contracts import artifacts as c
from games.artifacts.components import KINDS, MARKET_DECKS, ArtifactsData
from games.artifacts.state import ARRANGE, HIDDEN_CARD, OVER, PLAY, ArtifactsState, Placed, slot_key

_SCROLL = KINDS.index("scroll")


def _table_set(s: ArtifactsState, e: c.TableSet) -> None:
    s.museum_side = e.museum_side
    s.museum_ids = list(e.museums)
    s.boxes = [[None] * n for n in e.boxes]
    s.underwater = list(e.underwater)


def _deck_shuffled(s: ArtifactsState, e: c.DeckShuffled) -> None:
    i = MARKET_DECKS.index(e.deck)
    s.decks[i] = list(e.cards) if e.cards is not None else [HIDDEN_CARD] * e.size


def _market_refilled(s: ArtifactsState, e: c.MarketRefilled) -> None:
    i = MARKET_DECKS.index(e.deck)
    market = s.market[i]
    for slot, card in zip(e.slots, e.cards, strict=True):
        while len(market) < slot:
            market.append(None)
        market[slot - 1] = card
    del s.decks[i][: len(e.cards)]


def _first_player_rolled(s: ArtifactsState, e: c.FirstPlayerRolled) -> None:
    pass  # the outcome is PlayersSeated; the rolls are kept in the log for audit


def _players_seated(s: ArtifactsState, e: c.PlayersSeated) -> None:
    s.order = list(e.order)
    for p, dollars in zip(s.players, e.dollars, strict=True):
        p.dollars = dollars
    s.phase = ARRANGE
    s.current = e.order[0]


def _start_arranged(s: ArtifactsState, e: c.StartArranged) -> None:
    p = s.players[e.seat]
    p.cards = [Placed(card=cid, level=1, row=1, col=i + 1) for i, cid in enumerate(e.cards)]
    p.arranged = True
    pending = [seat for seat in s.order if not s.players[seat].arranged]
    s.current = pending[0] if pending else None


def _turn_started(s: ArtifactsState, e: c.TurnStarted) -> None:
    s.phase = PLAY
    s.current = e.seat
    s.round = e.round
    s.dice = list(e.dice)
    s.used = []
    s.dived = False


def _dice_placed(s: ArtifactsState, e: c.DicePlaced) -> None:
    for v in e.dice:
        s.dice.remove(v)
    if e.card != "dive":
        s.used.append(slot_key(e.card, e.action))


def _artifacts_found(s: ArtifactsState, e: c.ArtifactsFound) -> None:
    s.players[e.seat].artifacts[KINDS.index(e.kind)] += e.count


def _dollars_earned(s: ArtifactsState, e: c.DollarsEarned) -> None:
    s.players[e.seat].dollars += e.amount


def _asset_bought(s: ArtifactsState, e: c.AssetBought) -> None:
    p = s.players[e.seat]
    p.dollars -= e.dollars
    p.artifacts[_SCROLL] -= e.scrolls
    p.cards.append(Placed(card=e.card, level=1, row=e.row, col=e.col))
    s.market[MARKET_DECKS.index(e.deck)][e.slot - 1] = None


def _asset_upgraded(s: ArtifactsState, e: c.AssetUpgraded) -> None:
    p = s.players[e.seat]
    p.dollars -= e.dollars
    p.artifacts[_SCROLL] -= e.scrolls
    for card in p.cards:
        if card.card == e.card:
            card.level = 2


def _museum_order_filled(s: ArtifactsState, e: c.MuseumOrderFilled) -> None:
    p = s.players[e.seat]
    p.artifacts[KINDS.index(e.kind)] -= e.count
    p.dollars += e.dollars
    s.boxes[s.museum_ids.index(e.museum)][e.box - 1] = e.seat


def _collectors_paid(s: ArtifactsState, e: c.CollectorsPaid) -> None:
    p = s.players[e.seat]
    for i, n in enumerate(e.sold):
        p.artifacts[i] -= n
    p.dollars += e.dollars


def _underwater_found(s: ArtifactsState, e: c.UnderwaterFound) -> None:
    s.underwater.remove(e.card)
    s.players[e.seat].underwater.append(e.card)
    s.dived = True


def _reputation_marked(s: ArtifactsState, e: c.ReputationMarked) -> None:
    s.players[e.seat].reputation = e.reputation


def _end_triggered(s: ArtifactsState, e: c.EndTriggered) -> None:
    s.triggered = True


def _turn_ended(s: ArtifactsState, e: c.TurnEnded) -> None:
    s.dice = []
    s.used = []
    s.dived = False
    s.current = e.next_seat


def _museum_majority(s: ArtifactsState, e: c.MuseumMajority) -> None:
    s.majorities.append(e.seat)


def _game_finished(s: ArtifactsState, e: c.GameFinished) -> None:
    s.phase = OVER
    s.current = None
    s.winners = list(e.winners)


_HANDLERS: dict[type[msgspec.Struct], Callable[[ArtifactsState, Any], None]] = {
    c.TableSet: _table_set,
    c.DeckShuffled: _deck_shuffled,
    c.MarketRefilled: _market_refilled,
    c.FirstPlayerRolled: _first_player_rolled,
    c.PlayersSeated: _players_seated,
    c.StartArranged: _start_arranged,
    c.TurnStarted: _turn_started,
    c.DicePlaced: _dice_placed,
    c.ArtifactsFound: _artifacts_found,
    c.DollarsEarned: _dollars_earned,
    c.AssetBought: _asset_bought,
    c.AssetUpgraded: _asset_upgraded,
    c.MuseumOrderFilled: _museum_order_filled,
    c.CollectorsPaid: _collectors_paid,
    c.UnderwaterFound: _underwater_found,
    c.ReputationMarked: _reputation_marked,
    c.EndTriggered: _end_triggered,
    c.TurnEnded: _turn_ended,
    c.MuseumMajority: _museum_majority,
    c.GameFinished: _game_finished,
}


def evolve(data: ArtifactsData, state: ArtifactsState, event: msgspec.Struct) -> ArtifactsState:
    handler = _HANDLERS.get(type(event))
    if handler is None:
        raise TypeError(f"not an Artifacts, Inc. event: {type(event).__name__}")
    handler(state, event)
    return state

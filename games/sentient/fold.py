"""`evolve`: apply one event to the state, in place. Events carry outcomes, so nothing is computed.

Every game folds as `evolve(data, state, event)`; a Sentient event names all it changes, so the
data goes unread here."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

from contracts.sentient import (
    BoardsDealt,
    CardAcquired,
    CardsScored,
    DeckShuffled,
    DiceCalibrated,
    DiceRolled,
    FactoryRefilled,
    GameFinished,
    InvestorAwarded,
    PlayerPassed,
    RoundEnded,
    RoundStarted,
    TurnEnded,
)
from games.sentient.components import SentientData
from games.sentient.state import FACTORY_SLOTS, INVESTOR_POSITIONS, NETWORK_SLOTS, SentientState

# Physical components per player per round (rulebook set-up), not card data.
AGENTS_PER_ROUND = 4
ASSISTANTS_PER_ROUND = 5
HIDDEN_CARD = "?"


def _boards_dealt(s: SentientState, e: BoardsDealt) -> None:
    for p, side, inv in zip(s.players, e.sides, e.starting_investors, strict=True):
        p.board_side = side
        p.starting_investor = inv


def _deck_shuffled(s: SentientState, e: DeckShuffled) -> None:
    s.deck = list(e.cards) if e.cards is not None else [HIDDEN_CARD] * e.size
    if e.from_discard:
        s.discard = []


def _round_started(s: SentientState, e: RoundStarted) -> None:
    n = s.num_players
    s.round = e.round
    s.turn_order = list(e.turn_order)
    s.next_order = []
    s.investors = list(e.investors)
    s.influence = [[0] * n for _ in range(FACTORY_SLOTS)]
    s.agents_at = [[0] * n for _ in range(FACTORY_SLOTS)]
    for p in s.players:
        p.agents = AGENTS_PER_ROUND
        p.assistants = ASSISTANTS_PER_ROUND
        p.passed = False
        p.network = [None] * NETWORK_SLOTS
    s.current = e.turn_order[0] if e.turn_order else None


def _factory_refilled(s: SentientState, e: FactoryRefilled) -> None:
    for slot, card in zip(e.slots, e.cards, strict=True):
        s.factory[slot - 1] = card
    del s.deck[: len(e.cards)]


def _dice_rolled(s: SentientState, e: DiceRolled) -> None:
    s.players[e.seat].dice = list(e.values)


def _card_acquired(s: SentientState, e: CardAcquired) -> None:
    p = s.players[e.seat]
    i = e.factory_slot - 1
    s.factory[i] = None
    p.network[e.network_slot - 1] = e.card
    p.agents -= 1
    p.assistants -= e.assistants + e.blocked_left + e.blocked_right
    s.influence[i][e.seat] += 1 + e.assistants
    s.agents_at[i][e.seat] += 1


def _dice_calibrated(s: SentientState, e: DiceCalibrated) -> None:
    dice = s.players[e.seat].dice
    dice[e.network_slot - 1] = e.after[0]
    dice[e.network_slot] = e.after[1]


def _player_passed(s: SentientState, e: PlayerPassed) -> None:
    s.players[e.seat].passed = True
    # The marker goes on top of the next round's stack: the last to pass plays first next round.
    s.next_order.insert(0, e.seat)
    if e.discarded:
        s.discard.extend(e.discarded)
        s.factory = [None] * FACTORY_SLOTS


def _turn_ended(s: SentientState, e: TurnEnded) -> None:
    s.current = e.next_seat


def _cards_scored(s: SentientState, e: CardsScored) -> None:
    p = s.players[e.seat]
    p.vp += e.total
    p.collected.extend(e.cards)
    p.network = [None] * NETWORK_SLOTS


def _investor_awarded(s: SentientState, e: InvestorAwarded) -> None:
    if e.seat is not None:
        s.players[e.seat].investors.append(e.investor)
    if e.chip_seat is not None:
        s.players[e.chip_seat].vp += 1
    s.investors[e.position] = None


def _round_ended(s: SentientState, e: RoundEnded) -> None:
    s.discard.extend(e.discarded)
    s.factory = [None] * FACTORY_SLOTS
    s.investors = [None] * INVESTOR_POSITIONS
    s.turn_order = list(e.next_turn_order)
    s.next_order = []
    s.current = None


def _game_finished(s: SentientState, e: GameFinished) -> None:
    s.over = True
    s.current = None
    s.final_scores = list(e.scores)
    s.winners = list(e.winners)
    s.investor_points = list(e.investor_points)


_HANDLERS: dict[type[msgspec.Struct], Callable[[SentientState, Any], None]] = {
    BoardsDealt: _boards_dealt,
    DeckShuffled: _deck_shuffled,
    RoundStarted: _round_started,
    FactoryRefilled: _factory_refilled,
    DiceRolled: _dice_rolled,
    CardAcquired: _card_acquired,
    DiceCalibrated: _dice_calibrated,
    PlayerPassed: _player_passed,
    TurnEnded: _turn_ended,
    CardsScored: _cards_scored,
    InvestorAwarded: _investor_awarded,
    RoundEnded: _round_ended,
    GameFinished: _game_finished,
}


def evolve(data: SentientData, state: SentientState, event: msgspec.Struct) -> SentientState:
    handler = _HANDLERS.get(type(event))
    if handler is None:
        raise TypeError(f"not a Sentient event: {type(event).__name__}")
    handler(state, event)
    return state

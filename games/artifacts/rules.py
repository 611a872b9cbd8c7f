"""Artifacts, Inc. rules: set-up, decide (dispatch), queries, results. Turn flow is in flow.py,
the commands of a turn in decide.py, legal actions in legal.py."""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from contracts import artifacts as c
from contracts.views.artifacts import ArtifactsView
from games.artifacts import decide, fold
from games.artifacts.components import MARKET_DECKS, ArtifactsData, load
from games.artifacts.flow import museum_bonus
from games.artifacts.legal import legal_actions
from games.artifacts.rule_ids import reject
from games.artifacts.scoring import rank
from games.artifacts.state import ARRANGE, ArtifactsState, clone, new_state
from games.artifacts.view import build_view
from games.base import Rejected, Result
from games.kit import Emitter
from games.rng import Rng

MIN_PLAYERS = 2
MAX_PLAYERS = 4


class ArtifactsRules:
    """The `games.base.Rules` implementation for Artifacts, Inc."""

    name = "artifacts"
    rules_version = "artifacts-rules-1"
    min_players = MIN_PLAYERS
    max_players = MAX_PLAYERS
    command_types: Sequence[type[msgspec.Struct]] = c.COMMANDS
    event_types: Sequence[type[msgspec.Struct]] = c.EVENTS

    def __init__(self, data: ArtifactsData | None = None) -> None:
        self.data = data if data is not None else load()
        self.data_version = self.data.data_version

    # ---- set-up -------------------------------------------------------------------------

    def initial_state(self, num_players: int) -> ArtifactsState:
        return new_state(num_players)

    def setup(self, num_players: int, rng: Rng) -> list[msgspec.Struct]:
        if not MIN_PLAYERS <= num_players <= MAX_PLAYERS:
            raise ValueError(f"Artifacts, Inc. takes {MIN_PLAYERS} to {MAX_PLAYERS} players, not {num_players}")
        data = self.data
        out = Emitter(new_state(num_players), self.evolve)
        side = "2p" if num_players == 2 else "3p"
        museums = list(data.museum_ids)
        boxes = [len(data.museums[m].boxes_2p if side == "2p" else data.museums[m].boxes_3p) for m in museums]
        out.emit(
            c.TableSet(
                museum_side=side, public=list(data.public_ids), museums=museums, boxes=boxes,
                underwater=list(data.underwater_ids),
            )
        )  # fmt: skip
        for deck in MARKET_DECKS:
            cards = rng.shuffled(list(data.decks[deck]))
            out.emit(c.DeckShuffled(deck=deck, size=len(cards), cards=cards))
            k = min(data.table.market_slots[deck], len(cards))
            out.emit(c.MarketRefilled(deck=deck, slots=list(range(1, k + 1)), cards=cards[:k]))
        contenders = list(range(num_players))
        while True:
            rolls = [[rng.die() for _ in range(data.table.first_player_dice)] for _ in contenders]
            out.emit(c.FirstPlayerRolled(seats=contenders, rolls=rolls))
            top = max(sum(r) for r in rolls)
            tied = [seat for seat, r in zip(contenders, rolls, strict=True) if sum(r) == top]
            if len(tied) == 1:
                break
            contenders = tied
        first = tied[0]
        order = [(first + k) % num_players for k in range(num_players)]
        dollars = [0] * num_players
        for pos, seat in enumerate(order):
            dollars[seat] = data.table.starting_money[pos]
        out.emit(c.PlayersSeated(order=order, dollars=dollars))
        return out.events

    # ---- decide -------------------------------------------------------------------------

    def decide(
        self, state: ArtifactsState, seat: int, command: msgspec.Struct, rng: Rng
    ) -> list[msgspec.Struct] | Rejected:
        if state.current != seat:
            return reject(self.data, "ART-TURN", f"seat {seat} acted but it is seat {state.current}'s turn")
        arranging = state.phase == ARRANGE
        if arranging != isinstance(command, c.ArrangeStart):
            when = "before the first turn" if arranging else "once play has started"
            return reject(self.data, "ART-PHASE", f"{type(command).__name__} is not possible {when}")
        data = self.data
        if isinstance(command, c.ArrangeStart):
            return decide.arrange(data, state, seat, command, rng)
        if isinstance(command, c.UseAction):
            return decide.use_action(data, state, seat, command, rng)
        if isinstance(command, c.Buy):
            return decide.buy(data, state, seat, command, rng)
        if isinstance(command, c.Upgrade):
            return decide.upgrade(data, state, seat, command, rng)
        if isinstance(command, c.SellToMuseum):
            return decide.sell_museum(data, state, seat, command, rng)
        if isinstance(command, c.SellToCollectors):
            return decide.sell_collectors(data, state, seat, command, rng)
        if isinstance(command, c.Dive):
            return decide.dive(data, state, seat, command, rng)
        return decide.end_turn_now(data, state, seat, rng)

    # ---- folding, queries ---------------------------------------------------------------

    def evolve(self, state: ArtifactsState, event: msgspec.Struct) -> ArtifactsState:
        return fold.evolve(self.data, state, event)

    def clone(self, state: ArtifactsState) -> ArtifactsState:
        return clone(state)

    def to_act(self, state: ArtifactsState) -> list[int]:
        if state.over or state.current is None:
            return []
        return [state.current]

    def legal_actions(self, state: ArtifactsState, seat: int) -> list[msgspec.Struct]:
        return legal_actions(self.data, state, seat)

    def default_action(self, state: ArtifactsState, seat: int) -> msgspec.Struct:
        """Set-up: the starting cards in data order; a turn: end it (unplaced dice are lost)."""
        if state.phase == ARRANGE:
            return c.ArrangeStart(cards=list(self.data.starting_ids))
        return c.EndTurn()

    def view(self, state: ArtifactsState, seat: int | None) -> ArtifactsView:
        return build_view(self.data, state, seat)

    def public_event(self, event: msgspec.Struct) -> msgspec.Struct | None:
        if isinstance(event, c.DeckShuffled) and event.cards is not None:
            return msgspec.structs.replace(event, cards=None)
        return event

    def is_over(self, state: ArtifactsState) -> bool:
        return state.over

    def result(self, state: ArtifactsState) -> Result:
        """Final result once over; before that, the standing as if the game ended now."""
        reputation = [p.reputation for p in state.players]
        dollars = [p.dollars for p in state.players]
        winners = list(state.winners) if state.over else rank(reputation, dollars)
        breakdown = [
            {
                "reputation": p.reputation,
                "dollars": p.dollars,
                "museums": museum_bonus(self.data, state, i),
                "underwater": len(p.underwater),
                "cards": len(p.cards),
            }
            for i, p in enumerate(state.players)
        ]
        return Result(scores=reputation, winners=winners, breakdown=breakdown)

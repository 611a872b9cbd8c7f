"""Sentient rules: set-up, decide (validation + outcomes), turn flow, legal actions, results."""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Sequence

import msgspec

from contracts import sentient as c
from contracts.views.sentient import SentientView
from games.base import Rejected, Result
from games.kit import Emitter
from games.rng import Rng
from games.sentient import fold
from games.sentient.components import SentientData, load
from games.sentient.rule_ids import reject
from games.sentient.scoring import calibrate, investor_slots, rank_investor, score_card
from games.sentient.state import (
    FACTORY_SLOTS,
    INVESTOR_POSITIONS,
    NETWORK_SLOTS,
    SentientState,
    clone,
    new_state,
)
from games.sentient.view import build_view

ROUNDS = 3
DICE_PER_PLAYER = NETWORK_SLOTS + 1
MIN_PLAYERS = 2
MAX_PLAYERS = 4


def _active(state: SentientState, seat: int) -> bool:
    """Has `seat` anything left to do this round (an agent to place or a pass to make)?"""
    p = state.players[seat]
    return p.agents > 0 or not p.passed


def _next_seat(state: SentientState, seat: int) -> int | None:
    order = state.turn_order
    n = len(order)
    start = order.index(seat)
    # Cyclic from the seat after `seat`, ending with `seat` itself (it may be the only one left).
    for k in range(1, n + 1):
        candidate = order[(start + k) % n]
        if _active(state, candidate):
            return candidate
    return None


_PASS = c.Pass()


@functools.cache
def _acquires(
    slot: int, corners: tuple[bool, bool], free: tuple[int, ...], assistants: int
) -> tuple[msgspec.Struct, ...]:
    """Every Acquire of the card in factory `slot`, whose left and right `corners` can or cannot be
    blocked. A move has a few hundred, built on every call they were most of an offline self-play
    step: they are built once per argument set (at most 4 x 4 x 16 x 6) and reused (frozen)."""
    lefts = (False, True) if corners[0] else (False,)
    rights = (False, True) if corners[1] else (False,)
    return tuple(
        c.Acquire(factory_slot=slot, network_slot=ns, assistants=a, block_left=bl, block_right=br)
        for ns in free
        for bl in lefts
        for br in rights
        for a in range(assistants - bl - br + 1)
    )


class SentientRules:
    """The `games.base.Rules` implementation for Sentient."""

    name = "sentient"
    rules_version = "sentient-rules-1"
    min_players = MIN_PLAYERS
    max_players = MAX_PLAYERS
    command_types: Sequence[type[msgspec.Struct]] = c.COMMANDS
    event_types: Sequence[type[msgspec.Struct]] = c.EVENTS

    def __init__(self, data: SentientData | None = None) -> None:
        self.data = data if data is not None else load()
        self.data_version = self.data.data_version
        # Per card: can its left / right corner be blocked (a + or - corner, not =).
        self._corners = {cid: (card.left != "=", card.right != "=") for cid, card in self.data.cards.items()}

    # ---- set-up -------------------------------------------------------------------------

    def initial_state(self, num_players: int) -> SentientState:
        return new_state(num_players)

    def setup(self, num_players: int, rng: Rng) -> list[msgspec.Struct]:
        if not MIN_PLAYERS <= num_players <= MAX_PLAYERS:
            raise ValueError(f"Sentient takes {MIN_PLAYERS} to {MAX_PLAYERS} players, not {num_players}")
        out = Emitter(new_state(num_players), self.evolve)
        sides = rng.shuffled(list(self.data.side_ids))[:num_players]
        out.emit(
            c.BoardsDealt(
                sides=sides,
                starting_investors=[self.data.board_sides[s].starting_investor for s in sides],
            )
        )
        deck = rng.shuffled(list(self.data.card_ids))
        out.emit(c.DeckShuffled(size=len(deck), cards=deck))
        self._prepare_round(out, 1, rng.shuffled(list(range(num_players))), rng)
        return out.events

    def _prepare_round(self, out: Emitter[SentientState], round_no: int, turn_order: list[int], rng: Rng) -> None:
        investors = rng.shuffled(list(self.data.investors_by_round[round_no - 1]))
        out.emit(c.RoundStarted(round=round_no, turn_order=turn_order, investors=investors))
        self._draw(out, list(range(1, FACTORY_SLOTS + 1)), rng)
        for seat in range(out.state.num_players):
            out.emit(c.DiceRolled(seat=seat, values=[rng.die() for _ in range(DICE_PER_PLAYER)]))

    def _draw(self, out: Emitter[SentientState], slots: list[int], rng: Rng) -> None:
        """Fill factory `slots` from the deck, reshuffling the discard pile when the deck runs out."""
        s = out.state
        pending_slots: list[int] = []
        pending_cards: list[str] = []
        for slot in slots:
            if len(s.deck) <= len(pending_cards):
                if pending_cards:
                    out.emit(c.FactoryRefilled(slots=pending_slots, cards=pending_cards))
                    pending_slots, pending_cards = [], []
                if not s.discard:
                    # Cannot happen with 60 cards (at most 52 are ever out); the slot stays empty.
                    continue
                order = rng.shuffled(s.discard)
                out.emit(c.DeckShuffled(size=len(order), from_discard=True, cards=order))
            pending_slots.append(slot)
            pending_cards.append(s.deck[len(pending_cards)])
        if pending_cards:
            out.emit(c.FactoryRefilled(slots=pending_slots, cards=pending_cards))

    # ---- decide -------------------------------------------------------------------------

    def decide(
        self, state: SentientState, seat: int, command: msgspec.Struct, rng: Rng
    ) -> list[msgspec.Struct] | Rejected:
        return self._decide(state, seat, command, rng, in_place=False)

    def decide_into(
        self, state: SentientState, seat: int, command: msgspec.Struct, rng: Rng
    ) -> list[msgspec.Struct] | Rejected:
        """`decide` folding into `state` (games.base.DecidesInPlace): every refusal comes first."""
        return self._decide(state, seat, command, rng, in_place=True)

    def _decide(
        self, state: SentientState, seat: int, command: msgspec.Struct, rng: Rng, in_place: bool
    ) -> list[msgspec.Struct] | Rejected:
        if state.current != seat:
            return reject("SEN-TURN", f"seat {seat} acted but it is seat {state.current}'s turn")
        if isinstance(command, c.Pass):
            return self._decide_pass(state, seat, rng, in_place)
        assert isinstance(command, c.Acquire)  # games.match passes only command_types
        return self._decide_acquire(state, seat, command, rng, in_place)

    def _check_acquire(self, state: SentientState, seat: int, cmd: c.Acquire) -> Rejected | None:
        p = state.players[seat]
        if p.agents <= 0:
            return reject("SEN-ACQUIRE-AGENT", "all 4 agents are already placed this round")
        if not 1 <= cmd.factory_slot <= FACTORY_SLOTS:
            return reject("SEN-ACQUIRE-FACTORY", f"factory slot {cmd.factory_slot} does not exist")
        card_id = state.factory[cmd.factory_slot - 1]
        if card_id is None:
            return reject("SEN-ACQUIRE-FACTORY", f"factory slot {cmd.factory_slot} holds no card")
        if not 1 <= cmd.network_slot <= NETWORK_SLOTS:
            return reject("SEN-CONNECT-SLOT", f"network slot {cmd.network_slot} does not exist")
        if p.network[cmd.network_slot - 1] is not None:
            return reject("SEN-CONNECT-SLOT", f"network slot {cmd.network_slot} already used this round")
        card = self.data.cards[card_id]
        if cmd.block_left and card.left == "=":
            return reject("SEN-BLOCK", f"{card_id}'s left corner is '=' and cannot be blocked")
        if cmd.block_right and card.right == "=":
            return reject("SEN-BLOCK", f"{card_id}'s right corner is '=' and cannot be blocked")
        if cmd.assistants < 0:
            return reject("SEN-ASSISTANTS", f"{cmd.assistants} assistants is negative")
        spent = cmd.assistants + cmd.block_left + cmd.block_right
        if spent > p.assistants:
            return reject("SEN-ASSISTANTS", f"needs {spent} assistants, {p.assistants} in hand")
        return None

    def _decide_acquire(
        self, state: SentientState, seat: int, cmd: c.Acquire, rng: Rng, in_place: bool
    ) -> list[msgspec.Struct] | Rejected:
        refusal = self._check_acquire(state, seat, cmd)
        if refusal is not None:
            return refusal
        card_id = state.factory[cmd.factory_slot - 1]
        assert card_id is not None
        card = self.data.cards[card_id]
        dice = state.players[seat].dice
        before = [dice[cmd.network_slot - 1], dice[cmd.network_slot]]
        after = [
            before[0] if cmd.block_left else calibrate(before[0], card.left),
            before[1] if cmd.block_right else calibrate(before[1], card.right),
        ]
        out = Emitter(state if in_place else clone(state), self.evolve)
        out.emit(
            c.CardAcquired(
                seat=seat,
                factory_slot=cmd.factory_slot,
                card=card_id,
                network_slot=cmd.network_slot,
                assistants=cmd.assistants,
                blocked_left=cmd.block_left,
                blocked_right=cmd.block_right,
            )
        )
        out.emit(c.DiceCalibrated(seat=seat, network_slot=cmd.network_slot, before=before, after=after))
        self._draw(out, [cmd.factory_slot], rng)
        self._end_turn(out, seat, rng)
        return out.events

    def _decide_pass(
        self, state: SentientState, seat: int, rng: Rng, in_place: bool
    ) -> list[msgspec.Struct] | Rejected:
        p = state.players[seat]
        if p.passed:
            return reject("SEN-PASS-ONCE", f"seat {seat} already passed this round; {p.agents} agents left")
        out = Emitter(state if in_place else clone(state), self.evolve)
        if p.agents > 0:
            discarded = [cid for cid in state.factory if cid is not None]
            out.emit(c.PlayerPassed(seat=seat, discarded=discarded))
            self._draw(out, list(range(1, FACTORY_SLOTS + 1)), rng)
        else:
            out.emit(c.PlayerPassed(seat=seat))
        self._end_turn(out, seat, rng)
        return out.events

    # ---- turn and round flow ------------------------------------------------------------

    def _end_turn(self, out: Emitter[SentientState], seat: int, rng: Rng) -> None:
        nxt = _next_seat(out.state, seat)
        out.emit(c.TurnEnded(seat=seat, next_seat=nxt))
        if nxt is None:
            self._end_round(out, rng)

    def _end_round(self, out: Emitter[SentientState], rng: Rng) -> None:
        s = out.state
        round_no = s.round
        for seat, p in enumerate(s.players):
            cards = [cid for cid in p.network if cid is not None]
            points = [
                score_card(self.data.cards[cid], p.dice[i], p.dice[i + 1])
                for i, cid in enumerate(p.network)
                if cid is not None
            ]
            out.emit(c.CardsScored(seat=seat, round=round_no, cards=cards, points=points, total=sum(points)))
        for pos in range(INVESTOR_POSITIONS):
            inv_id = s.investors[pos]
            if inv_id is None:
                continue
            slots = investor_slots(pos, FACTORY_SLOTS)
            influence = [sum(s.influence[i][seat] for i in slots) for seat in range(s.num_players)]
            agents = [sum(s.agents_at[i][seat] for i in slots) for seat in range(s.num_players)]
            winner, chip = rank_investor(influence, agents, s.turn_order)
            out.emit(
                c.InvestorAwarded(
                    position=pos,
                    investor=inv_id,
                    investor_type=self.data.investors[inv_id].type,
                    seat=winner,
                    chip_seat=chip,
                )
            )
        leftovers = [cid for cid in s.factory if cid is not None]
        out.emit(c.RoundEnded(round=round_no, discarded=leftovers, next_turn_order=list(s.next_order)))
        if round_no < ROUNDS:
            self._prepare_round(out, round_no + 1, list(s.turn_order), rng)
        else:
            scores, inv_points = self._totals(s)
            top = max(scores)
            out.emit(
                c.GameFinished(
                    scores=scores,
                    winners=[i for i, v in enumerate(scores) if v == top],
                    vp=[p.vp for p in s.players],
                    investor_points=inv_points,
                )
            )

    def _totals(self, s: SentientState) -> tuple[list[int], list[int]]:
        """(totals, investor points) per seat: VP + 1 per collected card of each held investor's type."""
        totals: list[int] = []
        inv_points: list[int] = []
        for p in s.players:
            counts: Counter[str] = Counter(self.data.cards[cid].type for cid in p.collected)
            types = [p.starting_investor] + [self.data.investors[i].type for i in p.investors]
            pts = sum(counts[t] for t in types if t != "")
            inv_points.append(pts)
            totals.append(p.vp + pts)
        return totals, inv_points

    # ---- folding, queries ---------------------------------------------------------------

    def evolve(self, state: SentientState, event: msgspec.Struct) -> SentientState:
        return fold.evolve(self.data, state, event)

    def clone(self, state: SentientState) -> SentientState:
        return clone(state)

    def to_act(self, state: SentientState) -> list[int]:
        if state.over or state.current is None:
            return []
        return [state.current]

    def legal_actions(self, state: SentientState, seat: int) -> list[msgspec.Struct]:
        if state.over or state.current != seat:
            return []
        p = state.players[seat]
        actions: list[msgspec.Struct] = [] if p.passed else [_PASS]
        if p.agents <= 0:
            return actions
        free = tuple(i for i, cid in enumerate(p.network, 1) if cid is None)
        corners = self._corners
        for slot, card_id in enumerate(state.factory, 1):
            if card_id is not None:
                actions += _acquires(slot, corners[card_id], free, p.assistants)
        return actions

    def default_action(self, state: SentientState, seat: int) -> msgspec.Struct:
        """Pass when passing is legal, else the first legal acquire (no assistants, no blocks)."""
        p = state.players[seat]
        if not p.passed:
            return c.Pass()
        for fi, card_id in enumerate(state.factory):
            if card_id is None:
                continue
            for ni, cid in enumerate(p.network):
                if cid is None:
                    return c.Acquire(factory_slot=fi + 1, network_slot=ni + 1)
        # Only reachable when the seat is not waited on; decide will refuse it.
        return c.Pass()

    def view(self, state: SentientState, seat: int | None) -> SentientView:
        return build_view(self.data, state, seat)

    def public_event(self, event: msgspec.Struct) -> msgspec.Struct | None:
        if isinstance(event, c.DeckShuffled) and event.cards is not None:
            return msgspec.structs.replace(event, cards=None)
        return event

    def is_over(self, state: SentientState) -> bool:
        return state.over

    def result(self, state: SentientState) -> Result:
        """Final result once over; before that, the standing as if the game ended now."""
        if state.over:
            scores, inv_points = state.final_scores, state.investor_points
            winners = state.winners
        else:
            scores, inv_points = self._totals(state)
            top = max(scores) if scores else 0
            winners = [i for i, v in enumerate(scores) if v == top]
        breakdown = [
            {"vp": p.vp, "investors": inv_points[i], "cards": len(p.collected)} for i, p in enumerate(state.players)
        ]
        return Result(scores=list(scores), winners=list(winners), breakdown=breakdown)

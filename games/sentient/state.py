"""Sentient game state: a mutable tree that `evolve` updates in place (cheap replay)."""

from __future__ import annotations

import msgspec

NETWORK_SLOTS = 4
DICE = NETWORK_SLOTS + 1
FACTORY_SLOTS = 4
INVESTOR_POSITIONS = FACTORY_SLOTS + 1


class PlayerState(msgspec.Struct, kw_only=True):
    board_side: str = ""
    starting_investor: str = ""
    dice: list[int] = msgspec.field(default_factory=lambda: [1] * DICE)
    # Card id per network slot (index = slot - 1) connected this round.
    network: list[str | None] = msgspec.field(default_factory=lambda: [None] * NETWORK_SLOTS)
    agents: int = 0
    assistants: int = 0
    passed: bool = False
    vp: int = 0
    # Investor ids won (the printed starting investor is `starting_investor`, a type).
    investors: list[str] = msgspec.field(default_factory=list)
    # Cards scored in earlier rounds, kept for the final investor scoring.
    collected: list[str] = msgspec.field(default_factory=list)


class SentientState(msgspec.Struct, kw_only=True):
    num_players: int
    players: list[PlayerState]
    round: int = 0
    over: bool = False
    # Draw pile, top first. Folding public events (order withheld) leaves "?" placeholders.
    deck: list[str] = msgspec.field(default_factory=list)
    discard: list[str] = msgspec.field(default_factory=list)
    factory: list[str | None] = msgspec.field(default_factory=lambda: [None] * FACTORY_SLOTS)
    # Investor id per position 0..4 (None: none there); each comes with its 1-VP chip.
    investors: list[str | None] = msgspec.field(default_factory=lambda: [None] * INVESTOR_POSITIONS)
    # Per factory slot (index = slot - 1), per seat: influence (agents + assistants) and agents.
    influence: list[list[int]] = msgspec.field(default_factory=list)
    agents_at: list[list[int]] = msgspec.field(default_factory=list)
    # This round's order of play, top of the stack first; next round's stack as passes build it.
    turn_order: list[int] = msgspec.field(default_factory=list)
    next_order: list[int] = msgspec.field(default_factory=list)
    current: int | None = None
    # Filled by GameFinished.
    final_scores: list[int] = msgspec.field(default_factory=list)
    winners: list[int] = msgspec.field(default_factory=list)
    investor_points: list[int] = msgspec.field(default_factory=list)


def new_state(num_players: int) -> SentientState:
    return SentientState(
        num_players=num_players,
        players=[PlayerState() for _ in range(num_players)],
        influence=[[0] * num_players for _ in range(FACTORY_SLOTS)],
        agents_at=[[0] * num_players for _ in range(FACTORY_SLOTS)],
    )


def _clone_player(p: PlayerState) -> PlayerState:
    return PlayerState(
        board_side=p.board_side,
        starting_investor=p.starting_investor,
        dice=p.dice[:],
        network=p.network[:],
        agents=p.agents,
        assistants=p.assistants,
        passed=p.passed,
        vp=p.vp,
        investors=p.investors[:],
        collected=p.collected[:],
    )


def clone(state: SentientState) -> SentientState:
    """A deep copy, written out by hand because it is on the decide path."""
    return SentientState(
        num_players=state.num_players,
        players=[_clone_player(p) for p in state.players],
        round=state.round,
        over=state.over,
        deck=state.deck[:],
        discard=state.discard[:],
        factory=state.factory[:],
        investors=state.investors[:],
        influence=[row[:] for row in state.influence],
        agents_at=[row[:] for row in state.agents_at],
        turn_order=state.turn_order[:],
        next_order=state.next_order[:],
        current=state.current,
        final_scores=state.final_scores[:],
        winners=state.winners[:],
        investor_points=state.investor_points[:],
    )

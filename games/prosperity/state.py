"""Prosperity game state: a mutable tree that `evolve` updates in place (cheap replay)."""

from __future__ import annotations

import msgspec

# Phases: boards being chosen; a drawn tile being counted; the active player's two actions;
# the final scoring (its negative-energy choices); after GameFinished, `over` is set.
SETUP, COUNT, ACTIONS, FINAL = "setup", "count", "actions", "final"
TRACKS: tuple[str, ...] = ("energy", "ecology")
HIDDEN_TILE = "?"


class PlayerState(msgspec.Struct, kw_only=True):
    side: str = ""
    money: int = 0
    discs: int = 0
    points: int = 0
    # Research markers: energy track, ecology track.
    research: list[int] = msgspec.field(default_factory=lambda: [0, 0])
    # Energy and ecology totals of the visible symbols (set by the events that change them).
    energy: int = 0
    ecology: int = 0
    # Tiles per board space (index as in the board's data), bottom first; the last one shows.
    stacks: list[list[str]] = msgspec.field(default_factory=list)


class ProsperityState(msgspec.Struct, kw_only=True):
    num_players: int
    players: list[PlayerState]
    phase: str = SETUP
    over: bool = False
    first_player: int = 0
    active: int = 0
    # Turns begun so far (1..36 once play starts).
    turn: int = 0
    # Decade deck, top first, and the decade on each back. Folding public events (order withheld)
    # leaves HIDDEN_TILE placeholders in `deck`; `backs` is public.
    deck: list[str] = msgspec.field(default_factory=list)
    backs: list[int] = msgspec.field(default_factory=list)
    research_board: list[str] = msgspec.field(default_factory=list)
    # Tiles drawn so far, in order (public).
    drawn: list[str] = msgspec.field(default_factory=list)
    # The symbol being counted and the seats still to count it, in order; the head is the seat
    # the game waits for whenever a count is pending.
    symbol: str = ""
    queue: list[int] = msgspec.field(default_factory=list)
    actions_left: int = 0
    # Filled by the final scoring.
    final_scores: list[int] = msgspec.field(default_factory=list)
    final_money: list[int] = msgspec.field(default_factory=list)
    winners: list[int] = msgspec.field(default_factory=list)


def new_state(num_players: int) -> ProsperityState:
    return ProsperityState(num_players=num_players, players=[PlayerState() for _ in range(num_players)])


def _clone_player(p: PlayerState) -> PlayerState:
    return PlayerState(
        side=p.side,
        money=p.money,
        discs=p.discs,
        points=p.points,
        research=p.research[:],
        energy=p.energy,
        ecology=p.ecology,
        stacks=[st[:] for st in p.stacks],
    )


def clone(state: ProsperityState) -> ProsperityState:
    """A deep copy, written out by hand because it is on the decide path."""
    return ProsperityState(
        num_players=state.num_players,
        players=[_clone_player(p) for p in state.players],
        phase=state.phase,
        over=state.over,
        first_player=state.first_player,
        active=state.active,
        turn=state.turn,
        deck=state.deck[:],
        backs=state.backs[:],
        research_board=state.research_board[:],
        drawn=state.drawn[:],
        symbol=state.symbol,
        queue=state.queue[:],
        actions_left=state.actions_left,
        final_scores=state.final_scores[:],
        final_money=state.final_money[:],
        winners=state.winners[:],
    )

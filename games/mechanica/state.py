"""Mechanica game state: a mutable tree that `evolve` updates in place (cheap replay).

Factories are flat per-square lists (index = row * cols + col, 0-based; the wire is 1-based).
"""

from __future__ import annotations

import msgspec

# What stands on a square besides improvement tiles (whose ids are "<kind>-<n>").
BASIC_FABRICATOR = "basic_fabricator"
SMALL, BIG, HUGE = "small", "big", "huge"
EMPTY = ""
HIDDEN = "?"


class PlayerState(msgspec.Struct, kw_only=True):
    wallet: int = 0
    vault: int = 0
    # Per square: "" (bare), BASIC_FABRICATOR, a truck size, or an improvement tile id.
    tiles: list[str] = msgspec.field(default_factory=list)
    # Per square, per hole in belt order: "" (free) or the model of the bot in it.
    holes: list[list[str]] = msgspec.field(default_factory=list)
    # Per square: "" or the arrow character (> ^ v) of the fork standing there.
    forks: list[str] = msgspec.field(default_factory=list)
    # Squares whose fork was turned this turn (once per turn each).
    forks_turned: list[int] = msgspec.field(default_factory=list)
    # Blueprint ids this seat completed, in order, over the whole game (each at most once).
    blueprints_done: list[str] = msgspec.field(default_factory=list)


class MechanicaState(msgspec.Struct, kw_only=True):
    num_players: int
    players: list[PlayerState]
    # Improvement stack and Extras, top first ("?" when folded from public events).
    stack: list[str] = msgspec.field(default_factory=list)
    extras: list[str] = msgspec.field(default_factory=list)
    # Improvement per shop space (index 0 = the 7 space), "" for an empty space.
    shop: list[str] = msgspec.field(default_factory=list)
    # Blueprint piles, top (face-up) card first. Trucks and forks have no supply to track: they
    # can always be bought (MEC-R2).
    piles: list[list[str]] = msgspec.field(default_factory=list)
    # How many times the blueprints were replaced: after t times, the t+1 cards nearest the top of
    # each pile (the face-up one and the t at its bottom) have been seen; the rest are secret.
    piles_turned: int = 0
    sideways: bool = False
    # Recycled and demolished improvements: out of the game.
    discard: list[str] = msgspec.field(default_factory=list)
    workday: int = 0
    first_player: int = 0
    current: int | None = None
    # The current player has bought an improvement this turn: selling is over.
    bought: bool = False
    over: bool = False
    final_scores: list[int] = msgspec.field(default_factory=list)
    winners: list[int] = msgspec.field(default_factory=list)


def new_state(num_players: int, num_squares: int, shop_spaces: int) -> MechanicaState:
    return MechanicaState(
        num_players=num_players,
        players=[
            PlayerState(
                tiles=[EMPTY] * num_squares,
                holes=[[] for _ in range(num_squares)],
                forks=[EMPTY] * num_squares,
            )
            for _ in range(num_players)
        ],
        shop=[EMPTY] * shop_spaces,
    )


def _clone_player(p: PlayerState) -> PlayerState:
    return PlayerState(
        wallet=p.wallet,
        vault=p.vault,
        tiles=p.tiles[:],
        holes=[h[:] for h in p.holes],
        forks=p.forks[:],
        forks_turned=p.forks_turned[:],
        blueprints_done=p.blueprints_done[:],
    )


def clone(s: MechanicaState) -> MechanicaState:
    """A deep copy, written out by hand because it is on the decide path."""
    return MechanicaState(
        num_players=s.num_players,
        players=[_clone_player(p) for p in s.players],
        stack=s.stack[:],
        extras=s.extras[:],
        shop=s.shop[:],
        piles=[p[:] for p in s.piles],
        piles_turned=s.piles_turned,
        sideways=s.sideways,
        discard=s.discard[:],
        workday=s.workday,
        first_player=s.first_player,
        current=s.current,
        bought=s.bought,
        over=s.over,
        final_scores=s.final_scores[:],
        winners=s.winners[:],
    )


def bot_count(p: PlayerState) -> int:
    return sum(1 for holes in p.holes for m in holes if m)

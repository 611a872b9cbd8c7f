"""Drive one game between bots with no referee: the loop the referee runs, minus I/O."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import msgspec

from games.base import Rejected, Result, Rules
from games.bots import Bot
from games.rng import Rng


class IllegalMove(AssertionError):
    """A bot chose a command that `decide` refused."""


class Played(msgspec.Struct, kw_only=True):
    result: Result
    events: list[msgspec.Struct]
    state: Any
    commands: int


def play_game(rules: Rules[Any], bots: Sequence[Bot], seed: str, num_players: int, keep_events: bool = False) -> Played:
    """Play to the end; bots[i] sits at seat i. Raises IllegalMove on any refused command."""
    state = rules.initial_state(num_players)
    events: list[msgspec.Struct] = []
    version = 0
    for ev in rules.setup(num_players, Rng.for_version(seed, version)):
        state = rules.evolve(state, ev)
        version += 1
        if keep_events:
            events.append(ev)
    commands = 0
    while not rules.is_over(state):
        waiting = rules.to_act(state)
        if not waiting:
            raise RuntimeError("game not over but nobody to act")
        seat = waiting[0]
        legal = rules.legal_actions(state, seat)
        cmd = bots[seat].choose(rules.view(state, seat), legal, seat)
        out = rules.decide(state, seat, cmd, Rng.for_version(seed, version))
        if isinstance(out, Rejected):
            raise IllegalMove(f"seat {seat} played {cmd!r}: {out.rule} {out.detail}")
        commands += 1
        for ev in out:
            state = rules.evolve(state, ev)
            version += 1
            if keep_events:
                events.append(ev)
    return Played(result=rules.result(state), events=events, state=state, commands=commands)


class Standing(msgspec.Struct, kw_only=True):
    """How one kind of bot fared: seats played, wins (a shared win counts 1/k), win rate per seat."""

    seats: int = 0
    wins: float = 0.0

    @property
    def rate(self) -> float:
        return self.wins / self.seats if self.seats else 0.0


def tournament(
    rules: Rules[Any],
    makers: dict[str, Callable[[int], Bot]],
    num_players: int,
    games: int,
    seed_prefix: str = "tournament",
) -> dict[str, Standing]:
    """Play `games` seeded games; seat s of game i gets kind (s + i) mod len(makers), so every kind
    sits at every seat. `makers[kind](bot_seed)` builds a fresh bot."""
    kinds = list(makers)
    table = {k: Standing() for k in kinds}
    for i in range(games):
        seating = [kinds[(s + i) % len(kinds)] for s in range(num_players)]
        bots = [makers[k](i * num_players + s) for s, k in enumerate(seating)]
        played = play_game(rules, bots, f"{seed_prefix}-{num_players}-{i}", num_players)
        for s, k in enumerate(seating):
            table[k].seats += 1
            if s in played.result.winners:
                table[k].wins += 1 / len(played.result.winners)
    return table

"""Drive one game between bots with no referee: the referee's aggregate and loop, minus I/O."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import msgspec

from games.base import Result, Rules
from games.bots import Bot
from games.catalog import spec_for
from games.offline import IllegalAction, SearchBot, choice, new_game


class IllegalMove(AssertionError):
    """A bot chose a command that `decide` refused."""


class Played(msgspec.Struct, kw_only=True):
    result: Result
    # Every event of the game, lifecycle included (what the referee's log holds), when kept.
    events: list[msgspec.Struct]
    state: Any
    commands: int
    # (seat, command) in the order played: what a referee needs to play the same game from its seed
    # (services.selfplay.replay_commands).
    history: list[tuple[int, Any]] = msgspec.field(default_factory=list)
    # Seats in order of play: the game's own (GameSpec.turn_order, read from the final state),
    # else the order of their first turn taken alone (while the game waited on that seat only, so
    # simultaneous set-up choices do not count); seats that never did, last, by number.
    turn_order: list[int] = msgspec.field(default_factory=list)


def play_game(
    rules: Rules[Any], bots: Sequence[Bot | SearchBot], seed: str, num_players: int, keep_events: bool = False
) -> Played:
    """Play to the end; bots[i] sits at seat i, moving by `games.offline.choice` (search bots search
    from the game). Raises IllegalMove on any refused command."""
    game = new_game(rules, num_players, seed, record_events=keep_events)
    order: list[int] = []
    while not game.is_terminal():
        waiting = game.to_act()
        if not waiting:
            raise RuntimeError("game not over but nobody to act")
        seat = waiting[0]  # the current player
        if len(waiting) == 1 and seat not in order:
            order.append(seat)
        cmd = choice(bots[seat], game, seat)
        try:
            game.apply(cmd, seat)
        except IllegalAction as err:
            raise IllegalMove(str(err)) from err
    result = game.match.result  # what GameEnded recorded: rules.result, asked once
    assert result is not None
    order += [s for s in range(num_players) if s not in order]
    spec = spec_for(rules.name)
    if spec is not None and spec.turn_order is not None:
        order = spec.turn_order(game.state)
        if sorted(order) != list(range(num_players)):
            raise ValueError(f"{rules.name}: turn_order gave {order}, not an order of the {num_players} seats")
    return Played(
        result=result,
        events=game.events or [],
        state=game.state,
        commands=len(game.history),
        history=game.history,  # the game ends here: nothing else holds it
        turn_order=order,
    )


class WinTally(msgspec.Struct, kw_only=True):
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
) -> dict[str, WinTally]:
    """Play `games` seeded games; seat s of game i gets kind (s + i) mod len(makers), so every kind
    sits at every seat. `makers[kind](bot_seed)` builds a fresh bot."""
    kinds = list(makers)
    table = {k: WinTally() for k in kinds}
    for i in range(games):
        seating = [kinds[(s + i) % len(kinds)] for s in range(num_players)]
        bots = [makers[k](i * num_players + s) for s, k in enumerate(seating)]
        played = play_game(rules, bots, f"{seed_prefix}-{num_players}-{i}", num_players)
        for s, k in enumerate(seating):
            table[k].seats += 1
            if s in played.result.winners:
                table[k].wins += 1 / len(played.result.winners)
    return table

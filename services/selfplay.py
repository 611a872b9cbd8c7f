"""A whole game through the real referee engine, in memory and deterministic.

Used for golden playthroughs (byte-for-byte regression files) and offline checks: the same code
path as production (envelopes, match aggregate, guarded appends), with the clock, the seed and
the command ids fixed so two runs write identical bytes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec

from contracts import codec
from contracts import lifecycle as lc
from contracts.envelope import CommandEnvelope
from contracts.registry import type_name
from games import match as m
from services.eventstore.keys import Keys
from services.eventstore.memory_store import MemoryEventStore
from services.history import History, load
from services.referee.engine import Referee
from services.referee.sink import MemorySink
from services.tokens import seat_token

EPOCH = 1_700_000_000.0
SECRET = b"selfplay"


class _Table:
    """A referee over an in-memory store, with the clock, the seed and the command ids fixed."""

    def __init__(self, seed: str, game_id: str) -> None:
        clock = iter(EPOCH + i / 1000 for i in range(1_000_000))
        self.store = MemoryEventStore()
        sink = MemorySink()
        self.ref = Referee(
            self.store,
            lambda: sink,
            Keys("selfplay"),
            shards=1,
            secret=SECRET,
            clock=lambda: next(clock),
            new_seed=lambda: seed,
        )
        self.game_id = game_id
        self.sent = 0

    async def send(self, payload: msgspec.Struct, seat: int | None = None, expected: int | None = None) -> None:
        self.sent += 1
        n, game_id = self.sent, self.game_id
        token = seat_token(SECRET, game_id, seat, f"join-{seat}") if seat is not None else None
        env = CommandEnvelope(
            type=type_name(payload),
            game_id=game_id,
            command_id=f"join-{seat}" if isinstance(payload, lc.JoinSeat) else f"c{n:05d}",
            seat=seat,
            token=token,
            expected_version=expected,
            payload=msgspec.Raw(codec.encode(payload)),
        )
        await self.ref.handle("selfplay", [(f"{n}-0".encode(), {b"data": codec.encode(env)})])

    async def set_up(self, game_type: str, names: Sequence[str]) -> None:
        await self.send(lc.CreateGame(game_type=game_type, num_players=len(names)))
        for seat, name in enumerate(names):
            await self.send(lc.JoinSeat(seat=seat, name=name, kind="bot"), seat)
        await self.send(lc.StartGame(), 0)

    def running(self) -> m.Match | None:
        agg = self.ref.cache.get(self.game_id)
        return agg if agg is not None and agg.status == m.RUNNING else None  # a finished game leaves the cache

    async def play(self, seat: int, command: msgspec.Struct) -> None:
        """One move of the running game (callers check `running()` first)."""
        agg = self.running()
        assert agg is not None, f"{self.game_id} is not running"
        before = agg.version
        await self.send(command, seat, before)
        if agg.version == before:  # the engine folds accepted events into this same object
            raise AssertionError(f"seat {seat} played a refused move {command!r}")


async def record_game(game_type: str, bots: Sequence[Any], seed: str, game_id: str = "golden") -> History:
    """Play `bots` (rules-level bots, seat i = bots[i]) to the end and return the recorded history."""
    table = _Table(seed, game_id)
    await table.set_up(game_type, [f"{type(bot).__name__.lower()}-{seat}" for seat, bot in enumerate(bots)])
    while (agg := table.running()) is not None:
        seat = m.to_act(agg)[0]
        rules = agg.rules
        await table.play(seat, bots[seat].choose(rules.view(agg.game, seat), rules.legal_actions(agg.game, seat), seat))
    return await load(table.store, game_id)


async def replay_commands(
    game_type: str, commands: Sequence[tuple[int, msgspec.Struct]], seed: str, names: Sequence[str], game_id: str
) -> History:
    """The game an offline run played (`games.offline.new_game` from `seed`, then `commands`, each
    (seat, command) in order), played again through the referee engine and returned as its log.
    The seats join under `names`. Raises AssertionError if a command is refused or the game is not
    over after the last one: the offline game and the referee disagree, a defect."""
    table = _Table(seed, game_id)
    await table.set_up(game_type, names)
    for k, (seat, command) in enumerate(commands):
        if table.running() is None:
            raise AssertionError(f"{game_id}: the game is over before command {k} of {len(commands)}")
        await table.play(seat, command)
    if table.running() is not None:
        raise AssertionError(f"{game_id}: the game is not over after its {len(commands)} commands")
    return await load(table.store, game_id)

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


async def record_game(game_type: str, bots: Sequence[Any], seed: str, game_id: str = "golden") -> History:
    """Play `bots` (rules-level bots, seat i = bots[i]) to the end and return the recorded history."""
    clock = iter(EPOCH + i / 1000 for i in range(1_000_000))
    store = MemoryEventStore()
    sink = MemorySink()
    ref = Referee(
        store, lambda: sink, Keys("selfplay"), shards=1, secret=SECRET, clock=lambda: next(clock), new_seed=lambda: seed
    )
    n = 0

    async def send(payload: msgspec.Struct, seat: int | None = None, expected: int | None = None) -> None:
        nonlocal n
        n += 1
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
        await ref.handle("selfplay", [(f"{n}-0".encode(), {b"data": codec.encode(env)})])

    await send(lc.CreateGame(game_type=game_type, num_players=len(bots)))
    for seat in range(len(bots)):
        await send(lc.JoinSeat(seat=seat, name=f"{type(bots[seat]).__name__.lower()}-{seat}", kind="bot"), seat)
    await send(lc.StartGame(), 0)
    while True:
        agg = ref.cache.get(game_id)
        if agg is None or agg.status != m.RUNNING:
            break  # a finished game leaves the referee's cache
        seat = m.to_act(agg)[0]
        rules = agg.rules
        choice = bots[seat].choose(rules.view(agg.game, seat), rules.legal_actions(agg.game, seat), seat)
        before = agg.version
        await send(choice, seat, before)
        if agg.version == before:  # the engine folds accepted events into this same object
            raise AssertionError(f"seat {seat} played a refused move {choice!r}")
    return await load(store, game_id)

"""Games between bot kinds over the bus, with seats rotated, and a results table."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable

import msgspec

from contracts import codec
from contracts import lifecycle as lc
from contracts.outcome import REJECTED, decode_outcome
from contracts.protocol import HOSTED, HostBot
from services import ratings
from services.botrunner.app import BotRunner
from services.client import Client
from services.eventstore.redis_store import RedisEventStore
from services.follower import rebuild


class Standing(msgspec.Struct, kw_only=True):
    bot: str
    games: int = 0
    wins: float = 0.0  # a shared win counts 1/k
    total_score: int = 0
    refused: int = 0
    timed_out: int = 0
    wins_by_seat: dict[int, float] = msgspec.field(default_factory=dict)
    games_by_seat: dict[int, int] = msgspec.field(default_factory=dict)
    # OpenSkill (Plackett-Luce) skill after every game: mean, uncertainty, and the conservative
    # estimate mu - 3 sigma that ranks bots (more games, more certain).
    rating_mu: float = 25.0
    rating_sigma: float = 25.0 / 3
    rating: float = 0.0

    @property
    def mean_score(self) -> float:
        return self.total_score / self.games if self.games else 0.0


class GameRecord(msgspec.Struct, kw_only=True):
    game_id: str
    seats: list[str]
    scores: list[int]
    winners: list[int]
    version: int


async def tournament(
    client: Client,
    runner: BotRunner,
    store: RedisEventStore,
    *,
    game_type: str,
    bots: list[str],
    games: int,
    players: list[int],
    progress: Callable[[int], None] = lambda done: None,
    timeout_s: float = 600.0,
    created: Callable[[str], None] = lambda game_id: None,
) -> tuple[list[Standing], list[GameRecord]]:
    seatings: dict[str, list[str]] = {}
    for g in range(games):
        n = players[g % len(players)]
        # Rotate who sits where so no bot keeps the first seat.
        seating = [bots[(g + s) % len(bots)] for s in range(n)]
        game_id = f"{game_type}-{uuid.uuid4().hex[:8]}"
        reply = await client.call(game_id, lc.CreateGame(game_type=game_type, num_players=n))
        if reply.outcome.status != "accepted":
            raise RuntimeError(f"create refused: {reply.outcome.rule} {reply.outcome.detail}")
        created(game_id)
        for seat, kind in enumerate(seating):
            host = HostBot(
                game_id=game_id, seat=seat, kind=kind, game_type=game_type, name=f"{kind}-{seat}", seed=g * 31 + seat
            )
            hosted = await runner.host(host)
            if hosted.status != HOSTED:
                raise RuntimeError(f"could not seat {kind} in {game_id}: {hosted.reason}")
        await runner.start_game(game_id, 0)
        seatings[game_id] = seating
    # Over when its log ends with the seed revealed: read from the log, so that it does not matter
    # which bot runner (this one or one in another process) plays the seats.
    deadline = time.monotonic() + timeout_s
    playing = set(seatings)
    while playing:
        progress(len(seatings) - len(playing))
        if time.monotonic() > deadline:
            raise TimeoutError(f"{len(playing)} games unfinished after {timeout_s} s")
        await asyncio.sleep(0.1)
        playing = {g for g in playing if not await store.is_over(g)}
    progress(len(seatings))
    standings = {b: Standing(bot=b) for b in bots}
    records = []
    for game_id, seating in seatings.items():
        agg = rebuild(game_id, await store.read(game_id))
        over = agg.result
        assert over is not None, game_id
        records.append(
            GameRecord(game_id=game_id, seats=seating, scores=over.scores, winners=over.winners, version=agg.version)
        )
        for seat, kind in enumerate(seating):
            st = standings[kind]
            st.games += 1
            st.total_score += over.scores[seat]
            st.games_by_seat[seat] = st.games_by_seat.get(seat, 0) + 1
            if seat in over.winners:
                share = 1 / len(over.winners)
                st.wins += share
                st.wins_by_seat[seat] = st.wins_by_seat.get(seat, 0.0) + share
        for raw in await store.audit(game_id):
            o = decode_outcome(raw, game_id)
            if o.status == REJECTED and o.seat is not None and o.seat < len(seating):
                standings[seating[o.seat]].refused += 1
        for version, data in await store.read(game_id):
            env = codec.decode_event(data, game_id, version)
            if env.type == "lifecycle.DefaultActionForced":
                forced = codec.event_payload(env)
                assert isinstance(forced, lc.DefaultActionForced)
                if forced.reason == "timeout":
                    standings[seating[forced.seat]].timed_out += 1
    rate(standings, records)
    return list(standings.values()), records


def rate(standings: dict[str, Standing], records: list[GameRecord]) -> None:
    """OpenSkill ratings of the bot kinds from every game, in the order played (services.ratings)."""
    rated = ratings.rate(ratings.Finished(seats=r.seats, scores=r.scores, winners=r.winners) for r in records)
    for kind, st in standings.items():
        r = rated.get(kind) or ratings.unrated(kind)
        st.rating_mu, st.rating_sigma, st.rating = r.mu, r.sigma, r.rating

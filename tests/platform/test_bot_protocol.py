"""The headless bot protocol over a real Redis: plain redis+json bots, the SDK, deadlines, refusals."""

from __future__ import annotations

import asyncio
import random
import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest
import redis.asyncio as aredis

from contracts import codec
from contracts import lifecycle as lc
from contracts.outcome import decode_outcome
from contracts.protocol import HOSTED, Action, HostBot, SeatMessage, TurnRequest
from dicestream import sdk
from dicestream.runtime import running
from games import match as m
from games.catalog import GAMES
from services.client import Client
from services.config import Settings
from services.eventstore.keys import Keys
from services.eventstore.redis_store import RedisEventStore
from services.follower import rebuild
from services.redis_conn import detect_cluster
from tests.platform.helpers import entries_of
from tests.platform.test_redis_integration import wait_for

pytestmark = pytest.mark.redis
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
import plain_bot  # noqa: E402


class FirstLegal(sdk.Bot):
    name = "first-legal"

    def __init__(self) -> None:
        self.data_versions: set[str] = set()

    def choose_action(self, view: dict[str, Any], legal: list[Action], seat: int) -> Action:
        self.data_versions.add(self.data_version)
        return legal[0]


async def seat_joined(client: aredis.Redis, keys: Keys, game_id: str, seat: int) -> bool:
    agg = rebuild(game_id, await RedisEventStore(client, keys).read(game_id))
    return len(agg.seats) > seat and agg.seats[seat] is not None


async def test_a_plain_redis_json_bot_and_an_sdk_bot_play_a_full_game(
    settings: Settings, redis_url: str, client: aredis.Redis
) -> None:
    keys = Keys(settings.prefix)
    async with running(settings, redis_url) as run:
        cli = Client(client, keys, settings.shards)
        await cli.call("proto", lc.CreateGame(game_type="sentient", num_players=3))
        assert (await run.bots.runner.host(HostBot(game_id="proto", seat=0, kind="greedy"))).status == HOSTED
        plain = asyncio.create_task(
            asyncio.to_thread(
                plain_bot.play, "proto", 1, redis_url, settings.prefix, settings.shards, detect_cluster(redis_url)
            )
        )
        await wait_for(lambda: seat_joined(client, keys, "proto", 1))
        first_legal = FirstLegal()
        sdk_bot = asyncio.create_task(
            sdk.play_seat(
                first_legal,
                "proto",
                2,
                redis_url=redis_url,
                prefix=settings.prefix,
                shards=settings.shards,
                start=True,
            )
        )
        scores = await asyncio.wait_for(plain, 60)
        over = await asyncio.wait_for(sdk_bot, 60)
        assert scores == over.scores and len(scores) == 3
        assert first_legal.data_versions == {GAMES["sentient"].data_version}  # told what data the game reads
        agg = rebuild("proto", await RedisEventStore(client, keys).read("proto"))
        assert agg.status == m.OVER and agg.result is not None and agg.result.scores == scores
        audit = [decode_outcome(o, "proto") for o in await RedisEventStore(client, keys).audit("proto")]
        assert all(o.status == "accepted" for o in audit if o.seat in (1, 2))  # no illegal move
        await cli.close()


async def next_request(client: aredis.Redis, keys: Keys, game_id: str, seat: int, after: int) -> TurnRequest:
    async def latest() -> TurnRequest | None:
        entries = entries_of(await client.xrevrange(keys.seat(game_id, seat), count=1))
        if not entries:
            return None
        message = msgspec.json.decode(entries[0][1][b"data"], type=SeatMessage)
        return message if isinstance(message, TurnRequest) and message.version > after else None

    return await wait_for(latest)


async def two_seats(cli: Client, game_id: str, timeout: float | None = None) -> list[str]:
    await cli.call(game_id, lc.CreateGame(game_type="sentient", num_players=2, move_timeout_s=timeout))
    tokens = [(await cli.call(game_id, lc.JoinSeat(seat=s, name=f"s{s}"))).token for s in range(2)]
    assert all(tokens)
    await cli.call(game_id, lc.StartGame(), seat=0, token=tokens[0])
    return [t for t in tokens if t]


async def test_a_stale_answer_and_another_seats_token_are_refused_and_the_game_goes_on(
    settings: Settings, redis_url: str, client: aredis.Redis
) -> None:
    keys = Keys(settings.prefix)
    async with running(settings, redis_url, ("referee", "turns")):
        cli = Client(client, keys, settings.shards)
        tokens = await two_seats(cli, "stale")
        agg = rebuild("stale", await RedisEventStore(client, keys).read("stale"))
        seat = m.to_act(agg)[0]
        req = await next_request(client, keys, "stale", seat, 0)
        action = random.Random(1).choice(req.legal_actions)

        async def answer(token: str, version: int) -> Any:
            env = cli.envelope("stale", lc.Resign(), seat=seat, token=token, expected_version=version)
            env = msgspec.structs.replace(env, type=action.type, payload=msgspec.Raw(codec.encode(action.payload)))
            await cli.send_envelope(env)
            return await cli.wait(env.command_id)

        stale = await answer(tokens[seat], req.version - 1)
        assert (stale.outcome.rule, stale.outcome.status) == ("GAME-STALE", "rejected")
        assert f"game is at {req.version}" in (stale.outcome.detail or "")
        stolen = await answer(tokens[1 - seat], req.version)
        assert stolen.outcome.rule == "GAME-AUTH"
        ok = await answer(tokens[seat], req.version)
        assert ok.outcome.status == "accepted"
        await next_request(
            client,
            keys,
            "stale",
            m.to_act(rebuild("stale", await RedisEventStore(client, keys).read("stale")))[0],
            req.version,
        )
        await cli.close()


async def test_a_bot_that_answers_late_gets_the_default_action_forced(
    settings: Settings, redis_url: str, client: aredis.Redis
) -> None:
    keys = Keys(settings.prefix)
    store = RedisEventStore(client, keys)
    async with running(settings, redis_url, ("referee", "turns")):
        cli = Client(client, keys, settings.shards)
        await two_seats(cli, "late", timeout=0.3)  # nobody answers: every decision times out

        async def forced() -> list[lc.DefaultActionForced]:
            events = [codec.decode_event_payload(e) for _, e in await store.read("late")]
            found = [e for e in events if isinstance(e, lc.DefaultActionForced)]
            return found if len(found) >= 3 else []

        found = await wait_for(forced, timeout=20)
    assert {f.reason for f in found} == {"timeout"}
    assert {f.seat for f in found} == {0, 1}  # both seats' turns were played for them, in turn
    assert found[0].command_type in ("sentient.Pass", "sentient.Acquire")


async def test_sdk_bots_that_all_start_the_game_play_it_whoever_started_it(
    settings: Settings, redis_url: str, client: aredis.Redis
) -> None:
    """`start=True` in every seat: one StartGame is accepted, the others are refused GAME-NOT-OPEN
    (or GAME-SEATS-EMPTY while seats are still joining) and those bots play on (docs/bots.md)."""
    keys = Keys(settings.prefix)
    async with running(settings, redis_url, ("referee", "turns")):
        cli = Client(client, keys, settings.shards)
        await cli.call("all-start", lc.CreateGame(game_type="sentient", num_players=3))
        bots = [
            sdk.play_seat(
                FirstLegal(),
                "all-start",
                seat,
                redis_url=redis_url,
                prefix=settings.prefix,
                shards=settings.shards,
                start=True,
            )
            for seat in range(3)
        ]
        overs = await asyncio.wait_for(asyncio.gather(*bots), 90)
        assert overs[0].scores == overs[1].scores == overs[2].scores
        audit = [decode_outcome(o, "all-start") for o in await RedisEventStore(client, keys).audit("all-start")]
        starts = [o for o in audit if o.command_type == "lifecycle.StartGame"]
        assert sum(o.status == "accepted" for o in starts) == 1
        assert {o.rule for o in starts if o.status != "accepted"} <= {"GAME-NOT-OPEN", "GAME-SEATS-EMPTY"}
        await cli.close()

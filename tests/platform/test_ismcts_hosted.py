"""ISMCTS hosted by the bot runner: a search bot that knows only the public stream plays whole games
of every title over the bus, against a reference bot, and every game verifies."""

from __future__ import annotations

import msgspec
import pytest
import redis.asyncio as aredis

from contracts.outcome import ACCEPTED, decode_outcome
from dicestream.runtime import running
from services.config import Settings
from services.eventstore.keys import Keys, shard_of
from services.eventstore.redis_store import RedisEventStore
from tests.platform.helpers import entries_of
from tests.platform.procs import all_over, check_games, host_games
from tests.platform.test_redis_integration import wait_for

pytestmark = pytest.mark.redis


@pytest.mark.parametrize("title", ["sentient", "prosperity", "mechanica", "artifacts"])
async def test_an_ismcts_seat_plays_a_whole_game_from_the_public_stream(
    settings: Settings, redis_url: str, client: aredis.Redis, title: str
) -> None:
    # A small budget: this is about the wiring; tests/games/sentient/test_mcts.py is about strength.
    settings = msgspec.structs.replace(settings, ismcts_iterations=8, ismcts_ms=100)
    keys = Keys(settings.prefix)
    store = RedisEventStore(client, keys)
    async with running(settings, redis_url) as run:
        games = await host_games(client, settings, 1, game_type=title, players=2, bots=("ismcts", "random"))
        await wait_for(lambda: all_over(store, games), timeout=240, every=0.2)
        searched = run.bots.runner.searched
    report = await check_games(client, keys, settings.shards, games)
    outcomes = [decode_outcome(raw, games[0]) for raw in await store.audit(games[0])]
    moves = [
        o for o in outcomes if o.seat == 0 and o.status == ACCEPTED and not o.command_type.startswith("lifecycle.")
    ]
    assert report["commands"] > 10 and moves
    # Every move of seat 0 was a search's answer (none forced by a timeout: the game has none).
    assert searched >= len(moves)
    assert not [o for o in outcomes if o.command_type == "lifecycle.ForceDefault"]
    await store.close()


async def test_a_search_seat_whose_answer_was_lost_before_a_restart_is_answered_again(
    settings: Settings, redis_url: str, client: aredis.Redis
) -> None:
    """After a restart the runner knows the version it answered but not the bytes it sent; if the
    game still waits on that answer (its intake entry was lost), the prior answers again under the
    same command id."""
    from services.botrunner.app import BotRunner, move_id

    keys = Keys(settings.prefix)
    async with running(settings, redis_url, ("referee", "turns")):
        [gid] = await host_games(client, settings, 1, players=2, bots=("ismcts", "ismcts"))
        runner = BotRunner(client, keys, settings.shards, name="tests-restarted")
        runner.resend_s = 0.0
        runner.assign(set(range(settings.shards)))
        await runner._reconcile()

        async def asked() -> tuple[int, int] | None:
            for seat in (0, 1):  # the first player is drawn
                entries = entries_of(await client.xrevrange(keys.seat(gid, seat), count=1))
                if entries and b'"turn"' in entries[0][1][b"data"]:
                    return seat, int(entries[0][0].split(b"-")[0])
            return None

        seat, version = await wait_for(asked, timeout=30)
        playing = runner.seats[(gid, seat)]
        playing.hosted.answered = version  # "answered" before the restart; the send was lost
        intake = keys.intake(shard_of(gid, settings.shards))
        before = len(entries_of(await client.xrange(intake)))
        await runner.answer([(gid, seat)])
        sent = [msgspec.json.decode(f[b"data"]) for _, f in entries_of(await client.xrange(intake))][before:]
        assert [e["command_id"] for e in sent] == [move_id(gid, seat, version)]
        assert sent[0]["expected_version"] == version
        await runner.commands.close()


async def test_a_search_that_fails_costs_the_seat_its_look_ahead_not_its_move(
    settings: Settings, redis_url: str, client: aredis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fault of an unexpected type inside every search: the think loop logs it and the seat plays
    its prior's (greedy) move, so the game still finishes and verifies."""
    from services.bots import SearchWireBot

    def broken(self: SearchWireBot, req: object) -> tuple[str, bytes]:
        raise KeyError("injected")

    monkeypatch.setattr(SearchWireBot, "choose", broken)
    keys = Keys(settings.prefix)
    store = RedisEventStore(client, keys)
    async with running(settings, redis_url) as run:
        games = await host_games(client, settings, 1, players=2, bots=("ismcts", "random"))
        await wait_for(lambda: all_over(store, games), timeout=120, every=0.2)
        assert run.bots.runner.searched == 0
        assert run.bots.supervisor.loops["think"].up
    report = await check_games(client, keys, settings.shards, games)
    assert report["commands"] > 10
    await store.close()


async def test_a_planner_seat_thinks_off_the_event_loop_and_plays_a_whole_game(
    settings: Settings, redis_url: str, client: aredis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Mechanica's planner takes milliseconds a decision: the runner answers it in a worker thread
    (the loop that renews its leases is never held), and the game plays to its end."""
    import threading

    from games.mechanica.planner import PlannerBot

    threads: set[bool] = set()
    choose = PlannerBot.choose

    def watched(self: PlannerBot, *args: object) -> msgspec.Struct:
        threads.add(threading.current_thread() is threading.main_thread())
        return choose(self, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(PlannerBot, "choose", watched)
    keys = Keys(settings.prefix)
    store = RedisEventStore(client, keys)
    async with running(settings, redis_url):
        games = await host_games(client, settings, 1, game_type="mechanica", players=2, bots=("planner", "greedy"))
        await wait_for(lambda: all_over(store, games), timeout=120, every=0.2)
    report = await check_games(client, keys, settings.shards, games)
    assert report["commands"] > 10
    assert threads == {False}  # every planner decision ran off the main (event loop) thread
    await store.close()


async def test_a_slow_bot_that_raises_fails_its_batch_instead_of_hanging_the_runner(
    settings: Settings, client: aredis.Redis
) -> None:
    """StopIteration cannot cross from a worker thread into the awaiting loop (the await would
    never return, holding the thinking lock for good): it comes back as a RuntimeError, and the
    next slow batch is thought about as usual."""
    import asyncio

    from services.botrunner.app import BotRunner, HostedSeat, Playing
    from services.bots import RawTurnRequest

    class Broken:
        slow = True

        def choose(self, req: RawTurnRequest) -> tuple[str, bytes]:
            raise StopIteration

    runner = BotRunner(client, Keys(settings.prefix), settings.shards, name="tests-broken")
    hosted = HostedSeat(game_id="g", seat=0, token="t", kind="planner", game_type="mechanica")
    req = RawTurnRequest(game_id="g", seat=0, version=3, view=msgspec.Raw(b"{}"), legal_actions=[])
    due = [(("g", 0), Playing(hosted=hosted, bot=Broken()), req)]
    with pytest.raises(RuntimeError, match="StopIteration"):
        await asyncio.wait_for(runner._think_slow(due), timeout=5)
    assert not runner._in_flight
    with pytest.raises(RuntimeError):  # the lock was released: the next batch runs too
        await asyncio.wait_for(runner._think_slow(due), timeout=5)
    await runner.commands.close()

"""Nothing dies silently: a fault of an unexpected type injected into every loop of every service is
logged, the loop restarts and the service answers again; liveness is false while a loop is down; a
loop that keeps failing makes the supervisor give up (and `serve` exit non-zero); a Redis outage is
waited out without counting as a failure."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import msgspec
import pytest
import redis.exceptions
import structlog

from contracts import lifecycle as lc
from dicestream.runtime import running
from services.client import Client
from services.config import Settings
from services.eventstore.keys import Keys
from services.supervise import Loop, Supervisor, patiently
from tests.platform.test_redis_integration import wait_for


class Injected(Exception):
    """A fault no loop expects."""


async def test_a_failing_loop_is_logged_restarted_and_down_meanwhile() -> None:
    sup = Supervisor("svc", first_backoff_s=0.3, max_backoff_s=0.3)
    runs: list[float] = []

    async def flaky(loop: Loop) -> None:
        runs.append(time.monotonic())
        if len(runs) == 1:
            raise Injected("boom")
        while True:
            loop.beat()
            await asyncio.sleep(0.01)

    with structlog.testing.capture_logs() as logs:
        sup.spawn("flaky", flaky)
        await asyncio.sleep(0.1)
        assert not sup.live()  # down until its restart
        assert sup.report()["flaky"]["last_error"] == "Injected: boom"
        await wait_for(lambda: _async(len(runs) == 2), timeout=2)
        await asyncio.sleep(0.05)
        assert sup.live()
    failed = [e for e in logs if e["event"] == "loop_failed"]
    assert failed and failed[0]["loop"] == "flaky" and failed[0]["service"] == "svc"
    assert sup.loops["flaky"].restarts == 1 and not sup.fatal.is_set()
    await sup.stop()


async def test_a_loop_failing_too_often_makes_the_supervisor_give_up() -> None:
    sup = Supervisor("svc", max_failures=3, window_s=10, first_backoff_s=0.01, max_backoff_s=0.01)

    async def broken(loop: Loop) -> None:
        raise Injected("always")

    sup.spawn("broken", broken)
    await asyncio.wait_for(sup.fatal.wait(), 2)
    assert "svc/broken failed 4 times" in sup.fatal_reason
    assert not sup.live()
    await sup.stop()


async def test_a_loop_that_stops_beating_is_not_live() -> None:
    sup = Supervisor("svc", silence_s=0.2)

    async def stuck(loop: Loop) -> None:
        await asyncio.sleep(3600)

    sup.spawn("stuck", stuck)
    await asyncio.sleep(0.01)
    assert sup.live()
    await asyncio.sleep(0.3)
    assert not sup.live() and sup.report()["stuck"]["up"]
    await sup.stop()


async def test_a_redis_outage_is_waited_out_not_counted() -> None:
    sup = Supervisor("svc", max_failures=1, first_backoff_s=0.01, max_backoff_s=0.01)
    calls = 0

    async def needs_redis(loop: Loop) -> None:
        nonlocal calls
        calls += 1
        if calls <= 5:
            raise redis.exceptions.ConnectionError("Redis is loading")
        while True:
            loop.beat()
            await asyncio.sleep(0.01)

    sup.spawn("reader", needs_redis)
    await wait_for(lambda: _async(calls > 5), timeout=2)
    assert sup.live() and not sup.fatal.is_set() and sup.loops["reader"].restarts == 0
    await sup.stop()


async def _async(value: bool) -> bool:
    return value


# ---- every loop of every service, for real -------------------------------------------------------


def _inject(obj: Any, method: str) -> Callable[[], int]:
    """Make `obj.method` raise Injected once; returns how many times it was called since."""
    real = getattr(obj, method)
    calls = 0

    async def once(*args: Any, **kw: Any) -> Any:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise Injected(f"{method} exploded")
        return await real(*args, **kw)

    setattr(obj, method, once)
    return lambda: calls


LOOPS = [
    # (service, loop, object path from the service, method that loop calls)
    ("referee", "intake", "reader", "_step"),
    ("referee", "leases", "leases", "tick"),
    ("referee", "lag", "reader", "measure_lag"),
    ("referee", "clients", "", "_load_clients"),
    ("referee", "retention", "", "_trim"),
    ("projector", "bus", "reader", "_step"),
    ("projector", "leases", "leases", "tick"),
    ("turns", "bus", "reader", "_step"),
    ("turns", "timer", "", "fire_due"),
    ("turns", "retention", "", "_trim"),
    ("botrunner", "notices", "notices", "_step"),
    ("botrunner", "seats", "runner", "answer"),
]


@pytest.mark.parametrize(("service", "loop", "path", "method"), LOOPS)
async def test_a_fault_in_any_loop_is_recovered_and_the_service_answers_again(
    settings: Settings, redis_url: str, client: Any, service: str, loop: str, path: str, method: str
) -> None:
    keys = Keys(settings.prefix)
    cli = Client(client, keys, settings.shards)
    # Trimming every 10 s would leave the retention loop's fault for later than the wait below.
    settings = msgspec.structs.replace(settings, trim_every_ms=300)
    async with running(settings, redis_url) as run:
        svc = run.services[service]
        target = getattr(svc, path) if path else svc
        await cli.call("before", lc.CreateGame(game_type="sentient", num_players=2))
        with structlog.testing.capture_logs() as logs:
            calls = _inject(target, method)
            await wait_for(lambda: _async(calls() >= 2), timeout=15)  # failed once, then ran again
        failed = [e for e in logs if e["event"] == "loop_failed"]
        assert failed and failed[0]["loop"] == loop and failed[0]["service"] == service, logs
        assert svc.supervisor.loops[loop].restarts >= 1
        # The whole pipeline still works: a new game is created, projected and seated by a bot.
        created = await cli.call("after", lc.CreateGame(game_type="sentient", num_players=2), timeout_s=15)
        assert created.outcome.status == "accepted"

        async def projected() -> bool:
            return await run.projector.projector.game("after") is not None

        await wait_for(projected, timeout=15)
        await wait_for(lambda: _async(svc.live()[0]), timeout=10)
        assert not svc.supervisor.fatal.is_set()
    await cli.close()


async def test_metrics_count_commands_per_game_type_and_outcome_and_report_leases(
    settings: Settings, redis_url: str, client: Any
) -> None:
    """What /metrics serves: judged commands by game type and outcome, batch sizes, leases held,
    loops up; read over real HTTP from the health endpoint `serve` starts."""
    import httpx
    import msgspec

    settings = msgspec.structs.replace(settings, health_addr="127.0.0.1:0")
    keys = Keys(settings.prefix)
    cli = Client(client, keys, settings.shards)
    async with running(settings, redis_url, ("referee",), health=True) as run:
        assert run.health is not None
        await cli.call("metered", lc.CreateGame(game_type="sentient", num_players=2))
        await cli.call("metered", lc.StartGame(), seat=0, token="forged")  # refused
        async with httpx.AsyncClient(base_url=run.health.url) as http:
            text = (await http.get("/metrics")).text
            live = await http.get("/livez")
            ready = await http.get("/readyz")
    assert 'dicestream_commands_total{game_type="sentient",outcome="accepted"}' in text
    assert 'dicestream_commands_total{game_type="sentient",outcome="refused"}' in text
    assert 'dicestream_leases_held{role="referee"} 4.0' in text
    assert 'dicestream_loop_up{loop="intake",service="referee"} 1.0' in text
    assert "dicestream_batch_entries_count" in text
    assert live.status_code == 200 and ready.status_code == 200
    assert ready.json()["services"]["referee"]["leases"]["held"] == [0, 1, 2, 3]
    await cli.close()


async def test_a_start_step_waits_out_a_redis_restart_and_raises_anything_else() -> None:
    """A service starting while Redis restarts (issue 16's fault runs: a referee restarted one
    second before Redis was killed exited 3) waits for it; a real fault is raised at once."""
    calls: list[float] = []

    async def flaky() -> str:
        calls.append(time.monotonic())
        if len(calls) < 3:
            raise redis.exceptions.ConnectionError("Error 111 connecting to 127.0.0.1:1. Connection refused.")
        return "ok"

    assert await patiently(flaky, "test") == "ok" and len(calls) == 3

    async def broken() -> None:
        calls.append(time.monotonic())
        raise redis.exceptions.ResponseError("WRONGTYPE Operation against a key holding the wrong kind of value")

    calls.clear()
    with pytest.raises(redis.exceptions.ResponseError):
        await patiently(broken, "test")
    assert len(calls) == 1

    async def down() -> None:
        raise redis.exceptions.ConnectionError("Connection refused.")

    started = time.monotonic()
    with pytest.raises(redis.exceptions.ConnectionError):
        await patiently(down, "test", timeout_s=0.5)
    assert time.monotonic() - started < 2.0

"""The gateway as its least-privilege Redis user (deploy/redis/users.acl `gateway`): a whole game
and every read, with rate limits on (their Lua scripts run as that user too), and Redis logs no
refused command for it."""

from __future__ import annotations

import asyncio
import contextlib
import json
from pathlib import Path

import httpx
import pytest
import redis

from dicestream.runtime import build
from services.config import Settings
from services.gateway.app import GatewayService
from services.gateway.settings import GatewaySettings
from tests.deploy.test_deploy_static import real_redis
from tests.gateway.helpers import Api, gather, play

pytestmark = pytest.mark.redis


async def test_a_whole_game_and_every_read_as_the_gateway_user(tmp_path: Path) -> None:
    with real_redis(tmp_path) as port:
        admin = redis.Redis(port=port, username="admin", password="CHANGE-ME-admin")
        admin.acl_log_reset()
        settings = Settings(prefix="ds", shards=2, consumer="acl-gw", reclaim_idle_ms=1000, log_level="warning")
        url = f"redis://gateway:CHANGE-ME-gateway@127.0.0.1:{port}/0"
        async with contextlib.AsyncExitStack() as stack:
            for name in ("referee", "projector", "turns", "botrunner"):
                svc = build(name, settings, f"redis://{name}:CHANGE-ME-{name}@127.0.0.1:{port}/0")
                await svc.start()
                stack.push_async_callback(svc.stop)
            limits = GatewaySettings(port=0, rate_limit="1000/second", client_rate_limit="1000/second")
            gw = GatewayService(settings, url, limits)
            await gw.start()
            stack.push_async_callback(gw.stop)
            from services.gateway.apikeys import ApiKeys
            from services.redis_conn import connect

            operator = connect(f"redis://admin:CHANGE-ME-admin@127.0.0.1:{port}/0")
            key = await ApiKeys(operator, "ds").add("acl", ("create", "bots", "admin"))
            await operator.aclose()

            a, b = Api(gw.url, key), Api(gw.url)
            stack.push_async_callback(a.close)
            stack.push_async_callback(b.close)
            game_id = await a.create("sentient", 2)
            seats = [await a.join(game_id, 0, "a"), await b.join(game_id, 1, "b")]
            playing = [
                asyncio.ensure_future(play(a, seats[0], "sentient", "greedy", over_ws=False)),
                asyncio.ensure_future(play(b, seats[1], "sentient", "random", over_ws=True)),
            ]
            await asyncio.sleep(0.2)
            await a.start(seats[0])
            await gather(*playing, timeout=60)
            for path, params in (
                ("/v1/games", {}),
                (f"/v1/games/{game_id}", {}),
                (f"/v1/games/{game_id}", {"version": 5}),
                (f"/v1/games/{game_id}/events", {"limit": 10}),
                (f"/v1/games/{game_id}/audit", {"version": 5}),
                (f"/v1/games/{game_id}/export", {}),
                (f"/v1/games/{game_id}/seats/0", {}),
                ("/readyz", {}),
            ):
                r = await a.request("GET", path, params=params, headers=a.bearer(seats[0].token))
                assert r.status_code == 200, (path, r.text)
            async with a.socket(f"/v1/games/{game_id}/events/ws?from_version=3") as ws:
                assert json.loads(await ws.recv())["event"]["version"] == 3
            async with (
                httpx.AsyncClient(base_url=gw.url) as http,
                http.stream("GET", f"/v1/games/{game_id}/events/sse") as sse,
            ):
                async for line in sse.aiter_lines():
                    if line.startswith("data:"):
                        break
            other = await a.create("sentient", 2)
            r = await a.request("POST", f"/v1/games/{other}/seats/1/bot", json={"kind": "random"}, headers=a.key())
            assert r.status_code == 202
            for _ in range(100):
                if admin.xlen(f"ds:game:{{{other}}}:log") >= 2:
                    break
                await asyncio.sleep(0.05)
            assert admin.xlen(f"ds:game:{{{other}}}:log") == 2, "the hosted bot did not join"
        refused = [e for e in admin.acl_log(count=100) if e.get("username") == "gateway"]
        assert not refused, refused
        admin.close()

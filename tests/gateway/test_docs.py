"""docs/http.md is what a bot author works from: its example bot plays a whole game as a separate
process with nothing but HTTP and WebSocket, its code block is that bot's code, and every path
of /openapi.json is in its table."""

from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path

import pytest

from games import match as m
from services.eventstore.keys import Keys
from services.eventstore.redis_store import RedisEventStore
from services.gateway.folding import fold_into
from tests.gateway.conftest import Stack

pytestmark = pytest.mark.redis
ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "http.md").read_text()
BOT = ROOT / "examples" / "http_bot.py"


def test_the_documented_bot_is_the_example_file() -> None:
    block = DOC.split("```python\n", 1)[1].split("```", 1)[0]
    assert block.strip() in BOT.read_text(), "docs/http.md's Python block differs from examples/http_bot.py"


async def test_the_example_bot_plays_a_whole_game_as_its_own_process(stack: Stack) -> None:
    api = stack.api()
    try:
        game_id = await api.create("sentient", 2)
        hosted = await api.request(
            "POST", f"/v1/games/{game_id}/seats/0/bot", json={"kind": "greedy"}, headers=api.key()
        )
        assert hosted.status_code == 202
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            str(BOT),
            stack.url,
            game_id,
            "1",
            "--start",
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(proc.communicate(), 120)
        assert proc.returncode == 0, err.decode()
        printed = re.search(rb"final scores: \[([\d, ]+)\]", out)
        assert printed, out
        store = RedisEventStore(stack.run.client(), Keys(stack.settings.prefix))
        agg = fold_into(m.Match(game_id=game_id), await store.read(game_id))
        await store.close()
        assert agg.status == m.OVER and agg.result is not None
        assert [int(x) for x in printed.group(1).split(b",")] == agg.result.scores
    finally:
        await api.close()


async def test_every_path_of_the_api_is_documented(stack: Stack) -> None:
    api = stack.api()
    try:
        doc = (await api.request("GET", "/openapi.json")).json()
    finally:
        await api.close()
    paths = [*doc["paths"], *doc["x-websockets"]]
    assert len(paths) > 10
    for path in paths:
        if path.startswith("/schema"):
            continue
        written = path.replace("{game_id}", "{game}").replace("{rule_id}", "{rule}")
        assert written in DOC or written.split("?")[0] in DOC, f"{path} is not in docs/http.md"

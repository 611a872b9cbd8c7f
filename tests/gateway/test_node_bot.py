"""examples/node_bot.mjs, a bot written in Node.js from docs/bots.md, docs/http.md and /openapi.json
alone, plays a whole game of every title in every seat, as separate `node` processes talking only
HTTP to a running gateway; the scores each one prints are those of the game's log.

Needs `node`, Node.js 18 or later (its built-in `fetch`): the Debian package `nodejs` (bookworm's
own is 18.19; CI installs 20 from NodeSource's `node_20.x` repository, whose package has the same
name). Skipped, saying so, without it."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from contracts import codec
from contracts.outcome import decode_outcome
from games import match as m
from services.eventstore.keys import Keys
from services.eventstore.redis_store import RedisEventStore
from services.gateway.folding import fold_into
from tests.gateway.conftest import Stack

ROOT = Path(__file__).resolve().parents[2]
BOT = ROOT / "examples" / "node_bot.mjs"
NODE = shutil.which("node")


def node_major() -> int:
    if NODE is None:
        return 0
    out = subprocess.run([NODE, "--version"], capture_output=True, text=True, timeout=30).stdout
    found = re.match(r"v(\d+)\.", out.strip())
    return int(found.group(1)) if found else 0


pytestmark = [
    pytest.mark.redis,
    pytest.mark.skipif(NODE is None, reason="`node` is not installed (Debian package `nodejs`, Node.js 18 or later)"),
    pytest.mark.skipif(NODE is not None and node_major() < 18, reason="Node.js older than 18 has no built-in fetch"),
]
# Seats per title: Prosperity with 3 asks several seats at one version (its set-up).
TITLES = {"sentient": 3, "prosperity": 3, "mechanica": 2, "artifacts": 2}
SCORES = re.compile(r"^final scores: (\[.*\])$", re.M)
WINNERS = re.compile(r"^winners: (\[.*\])$", re.M)
MOVES = re.compile(r"seat (\d+): (\d+) moves, (\d+) stale")


async def run_bot(url: str, game_id: str, seat: int, token: str | None) -> tuple[int, str, str]:
    args = [str(BOT), url, game_id, str(seat), "--start", "--seed", str(seat + 7), "--poll-ms", "25,250"]
    if token is not None:
        args += ["--token", token]
    assert NODE is not None
    proc = await asyncio.create_subprocess_exec(
        NODE, *args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    try:
        out, err = await asyncio.wait_for(proc.communicate(), 240)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        raise
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


@pytest.mark.standalone_only(
    "the gateway's HTTP is the same on a cluster (tests/gateway/test_play.py plays every title there)"
)
@pytest.mark.parametrize("title", sorted(TITLES))
async def test_node_bots_in_every_seat_play_a_whole_game(stack: Stack, title: str) -> None:
    players = TITLES[title]
    api = stack.api()
    try:
        game_id = await api.create(title, players)
        # Seat 0 is joined here and handed to its bot as a token; the others join by themselves.
        given = await api.join(game_id, 0, "given-token")
        started = time.monotonic()
        results = await asyncio.gather(
            *(run_bot(stack.url, game_id, seat, given.token if seat == 0 else None) for seat in range(players))
        )
        seconds = time.monotonic() - started
    finally:
        await api.close()
    for seat, (code, _, err) in enumerate(results):
        assert code == 0, f"seat {seat} exited {code}:\n{err}"
    store = RedisEventStore(stack.run.client(), Keys(stack.settings.prefix))
    try:
        log = await store.read(game_id)
        agg = fold_into(m.Match(game_id=game_id), log)
        types = [codec.decode_event(data, game_id, v).type for v, data in log]
        audit = [decode_outcome(o, game_id) for o in await store.audit(game_id)]
    finally:
        await store.close()
    assert agg.status == m.OVER and agg.result is not None
    moves = 0
    for seat, (_, out, err) in enumerate(results):
        scores, winners, counted = SCORES.search(out), WINNERS.search(out), MOVES.search(err)
        assert scores and winners and counted, (out, err)
        assert json.loads(scores.group(1)) == agg.result.scores, f"seat {seat} printed other scores"
        assert json.loads(winners.group(1)) == agg.result.winners
        assert int(counted.group(1)) == seat and int(counted.group(2)) > 0, err
        moves += int(counted.group(2))
    # Every move a bot counted was accepted; the only refusals are the harmless ones the docs name.
    accepted = [o for o in audit if o.status == "accepted" and o.seat is not None]
    assert len(accepted) >= moves
    assert {o.rule for o in audit if o.status != "accepted"} <= {
        "GAME-STALE",
        "GAME-SEATS-EMPTY",
        "GAME-NOT-OPEN",
    }
    assert "lifecycle.DefaultActionForced" not in types  # no deadline, nobody resigned: all played
    print(f"\n{title} ({players} seats): {moves} moves, scores {agg.result.scores}, {seconds:.1f} s")

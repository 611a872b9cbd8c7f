"""An archived game through the gateway: given a finished game, when it is archived, then what a
spectator, a replay and an audit read (state, events, states, audit, fairness, export) is what
they read before, the lobby lists it as archived, and a gateway without the archive folder says
so (410) instead of pretending the game does not exist."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

from services.archive import ArchiveFolder, archive_game
from services.config import Settings
from services.eventstore.keys import Keys
from services.gateway.app import GatewayService
from tests.gateway.conftest import OPEN, start_stack
from tests.gateway.helpers import Api
from tests.gateway.test_reads import finished_game
from tests.platform.test_redis_integration import wait_for

pytestmark = pytest.mark.redis

READS = ("", "/events?limit=1000", "/states?from_version=1&limit=200", "/audit?version=6", "/fairness", "/export")


async def test_an_archived_game_reads_as_before_through_the_gateway(
    settings: Settings, redis_url: str, tmp_path: Path
) -> None:
    folder = tmp_path / "archive"
    settings = msgspec.structs.replace(settings, archive_dir=str(folder))
    keys = Keys(settings.prefix)
    async with start_stack(settings, redis_url) as stack:
        api = stack.api()
        try:
            game_id, _ = await finished_game(api)

            async def listed_over() -> bool:
                r = await api.request("GET", "/v1/games", params={"status": "over"})
                return any(g["game_id"] == game_id for g in r.json()["games"])

            await wait_for(listed_over, timeout=20)
            before = {path: await api.request("GET", f"/v1/games/{game_id}{path}") for path in READS}
            assert all(r.status_code == 200 for r in before.values()), {p: r.text[:200] for p, r in before.items()}
            redis = stack.gateway.deps.redis
            done = await archive_game(redis, keys, settings.shards, ArchiveFolder(folder), game_id)
            assert done.status == "archived"
            assert not await redis.exists(keys.public(game_id), keys.log(game_id), keys.audit(game_id))

            for path, was in before.items():
                now = await api.request("GET", f"/v1/games/{game_id}{path}")
                assert now.status_code == 200, (path, now.text[:300])
                if path == "":
                    # The state as it was, but from the archive file rather than the read model.
                    assert now.json()["view"] == was.json()["view"]
                    assert now.json()["summary"]["scores"] == was.json()["summary"]["scores"]
                else:
                    assert now.content == was.content, path
            page = await api.request("GET", f"/v1/games/{game_id}/events", params={"after": "10-0", "limit": 5})
            assert [e["cursor"] for e in page.json()["events"]] == [
                e["cursor"] for e in before["/events?limit=1000"].json()["events"] if _after(e["cursor"], (10, 0))
            ][:5]
            listed = await api.request("GET", "/v1/games", params={"status": "archived"})
            assert [g["game_id"] for g in listed.json()["games"]] == [game_id]
            # Nothing live to follow: the live streams say so (410), not "no such game".
            sse = await api.request("GET", f"/v1/games/{game_id}/events/sse")
            assert (sse.status_code, sse.json()["type"].rsplit(":", 1)[-1]) == (410, "archived"), sse.text
            async with api.socket(f"/v1/games/{game_id}/events/ws") as ws:
                problem = json.loads(await ws.recv())
            assert (problem["type"], problem["problem"]["status"]) == ("problem", 410), problem
            unknown = await api.request("GET", "/v1/games/never-was/events/sse")
            assert unknown.status_code == 404

            # A damaged file is said to be one, not served.
            assert done.file is not None
            archive_file = folder / done.file
            good = archive_file.read_bytes()
            archive_file.write_bytes(good[:-1] + bytes([good[-1] ^ 1]))
            stack.gateway.deps.store.folder = ArchiveFolder(folder)  # no verified copy cached
            damaged = await api.request("GET", f"/v1/games/{game_id}/export")
            assert (damaged.status_code, damaged.json()["type"].rsplit(":", 1)[-1]) == (500, "archive-damaged")
            archive_file.write_bytes(good)

            # A gateway started without the folder names the archive instead of a 404.
            bare = GatewayService(msgspec.structs.replace(settings, archive_dir=None), redis_url, OPEN)
            await bare.start()
            other = Api(bare.url)
            try:
                gone = await other.request("GET", f"/v1/games/{game_id}/export")
                assert gone.status_code == 410, gone.text
                assert gone.json()["type"].endswith("archived") and "DICESTREAM_ARCHIVE_DIR" in gone.json()["detail"]
            finally:
                await other.close()
                await bare.stop()
        finally:
            await api.close()


def _after(cursor: str, start: tuple[int, int]) -> bool:
    ms, _, seq = cursor.partition("-")
    return (int(ms), int(seq)) > start

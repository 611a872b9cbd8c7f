"""Archiving over a real Redis (standalone and cluster). Given a finished bot game, when it is
archived, then Redis keeps only its marker (a few hundred bytes) and its summary, its history reads
back byte for byte from the file (replay, verify, audit, export: the CLI too), the referee refuses
every command to it and writes nothing, and a game that changes during its export or is still
running is left alone."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest
import redis.asyncio as aredis

from contracts import codec
from contracts import lifecycle as lc
from contracts.protocol import HOSTED, HostBot
from dicestream.runtime import Running, running
from services import history
from services.archive import ArchiveDamaged, ArchivedGame, ArchiveFolder, ArchiveReads, archive_game
from services.client import Client
from services.config import Settings
from services.eventstore.keys import Keys, shard_of
from services.eventstore.redis_store import RedisEventStore
from services.readmodel import ReadModelKeys
from tests.platform.cli_helpers import cli_env, fails, ok
from tests.platform.helpers import memory
from tests.platform.test_redis_integration import wait_for

pytestmark = pytest.mark.redis


async def play(run: Running, client: aredis.Redis, keys: Keys, game_id: str, shards: int) -> None:
    cli = Client(client, keys, shards)
    assert (await cli.call(game_id, lc.CreateGame(game_type="sentient", num_players=2))).outcome.status == "accepted"
    runner = run.bots.runner
    for seat in range(2):
        assert (await runner.host(HostBot(game_id=game_id, seat=seat, kind="random", seed=seat))).status == HOSTED
    await runner.start_game(game_id, 0)

    async def over() -> bool:
        return game_id in runner.finished

    await wait_for(over, timeout=60)


async def game_keys(client: aredis.Redis, keys: Keys, game_id: str) -> list[str]:
    return sorted([k.decode() async for k in client.scan_iter(match=f"{keys.prefix}:game:{{{game_id}}}:*", count=500)])


async def test_an_archived_game_leaves_a_marker_reads_back_whole_and_takes_no_commands(
    settings: Settings, redis_url: str, client: aredis.Redis, tmp_path: Path
) -> None:
    keys = Keys(settings.prefix)
    folder = ArchiveFolder(tmp_path / "archive")
    gid, live = "arch-done", "arch-live"
    async with running(settings, redis_url) as run:
        await play(run, client, keys, gid, settings.shards)
        cli = Client(client, keys, settings.shards)
        # A refusal after the end is part of the history too.
        late = await cli.call(gid, lc.JoinSeat(seat=0, name="late", kind="human"))
        assert late.outcome.status == "rejected"
        assert (await cli.call(live, lc.CreateGame(game_type="sentient", num_players=2))).outcome.status == "accepted"

        store = RedisEventStore(client, keys)
        before = await history.load(store, gid)
        raw_log = [codec.encode(codec.decode_event(d, gid, v)) for v, d in await store.read(gid)]  # whole envelopes
        rm = ReadModelKeys(keys)
        shard = shard_of(gid, settings.shards)

        async def projected() -> bool:
            raw = await client.hget(rm.games(shard), gid)
            return raw is not None and b'"status":"over"' in raw

        await wait_for(projected, timeout=20)
        assert await client.exists(rm.game(shard, gid))

        done = await archive_game(client, keys, settings.shards, folder, gid)
        assert done.status == "archived" and done.events == len(before.events)
        assert done.outcomes == len(before.outcomes) and done.file is not None
        assert (folder.folder / done.file).stat().st_size == done.file_bytes > 0
        assert (await archive_game(client, keys, settings.shards, folder, live)).status == "open"

        # Then: one key left in the game's slot, its marker, read as the log at the next version.
        assert await game_keys(client, keys, gid) == [keys.archived(gid)]
        marker = await client.get(keys.archived(gid))
        assert await store.read(gid) == [(len(before.events) + 1, marker)]
        assert await store.read(gid, after=len(before.events) + 1) == []
        assert await memory(client, keys.archived(gid)) < 1024
        assert not await client.exists(rm.game(shard, gid)), await client.hget(rm.games(shard), gid)
        listed = await client.hget(rm.games(shard), gid)
        assert listed is not None
        summary = json.loads(listed)
        assert summary["status"] == "archived" and summary["version"] == len(before.events) + 1
        result = history.fold(before).result
        assert result is not None and summary["scores"] == result.scores
        # The summary still says which data the game was played with (the page draws it with that).
        assert summary["data_version"] == history.fold(before).data_version == "sentient-data-1"

        # Its history reads back from the file, byte for byte.
        reads = ArchiveReads(client, keys, ArchiveFolder(folder.folder))
        after = await history.load(reads, gid)
        assert [codec.encode(e) for e in after.events] == raw_log
        assert codec.encode(after.outcomes) == codec.encode(before.outcomes)
        verdict = history.verify(after)
        assert verdict.ok and verdict.seed_verified
        assert history.export_lines(after) == history.export_lines(before)
        assert [(v, d) for v, d in await reads.read(gid, after=10)] == [
            (e.version, codec.encode(e)) for e in after.events[10:]
        ]
        with pytest.raises(ArchivedGame, match="DICESTREAM_ARCHIVE_DIR"):
            await history.load(ArchiveReads(client, keys, None), gid)
        # A damaged or missing file is named, never read as the game.
        path = folder.folder / done.file
        good = path.read_bytes()
        path.write_bytes(good[:-1] + bytes([good[-1] ^ 1]))
        with pytest.raises(ArchiveDamaged, match="SHA-256"):
            await history.load(ArchiveReads(client, keys, ArchiveFolder(folder.folder)), gid)
        path.unlink()
        with pytest.raises(ArchiveDamaged, match="cannot be read"):
            await history.load(ArchiveReads(client, keys, ArchiveFolder(folder.folder)), gid)
        path.write_bytes(good)

        # The referee refuses every command to it, CreateGame included, and writes no key.
        for payload in (
            lc.CreateGame(game_type="sentient", num_players=2),
            lc.JoinSeat(seat=1, name="x", kind="human"),
        ):
            refused = await cli.call(gid, payload)
            assert (refused.outcome.status, refused.outcome.rule) == ("rejected", "GAME-ARCHIVED"), refused
        assert await game_keys(client, keys, gid) == [keys.archived(gid)]

        # Archiving it again changes nothing.
        again = await archive_game(client, keys, settings.shards, folder, gid)
        assert (again.status, again.file) == ("archived", done.file)
        assert await client.get(keys.archived(gid)) == marker
        await cli.close()


class RefusedDuringExport(ArchiveFolder):
    """An archive folder during whose first write one more outcome reaches the game's audit (a
    copy of its last one: what a late refusal appends)."""

    def __init__(self, folder: Path, client: Any, keys: Keys, game_id: str) -> None:
        super().__init__(folder)
        self.sync, self.keys, self.game_id, self.writes = client, keys, game_id, 0

    def write(self, game_id: str, lines: list[bytes]) -> tuple[str, str]:
        self.writes += 1
        if self.writes == 1:
            last = self.sync.xrevrange(self.keys.audit(self.game_id), count=1)
            self.sync.xadd(self.keys.audit(self.game_id), {"data": last[0][1][b"data"]})
        return super().write(game_id, lines)


async def test_a_game_that_changes_during_its_export_is_exported_again(
    settings: Settings, redis_url: str, client: aredis.Redis, tmp_path: Path
) -> None:
    from tests.conftest import sync_client

    keys = Keys(settings.prefix)
    gid = "arch-moved"
    async with running(settings, redis_url) as run:
        await play(run, client, keys, gid, settings.shards)
    sync = sync_client(redis_url)
    try:
        audit_before = await client.xlen(keys.audit(gid))
        folder = RefusedDuringExport(tmp_path / "a", sync, keys, gid)
        done = await archive_game(client, keys, settings.shards, folder, gid)
        # The first swap saw the audit grow and wrote nothing; the second export holds the record.
        assert (done.status, folder.writes, done.outcomes) == ("archived", 2, audit_before + 1)
        reads = ArchiveReads(client, keys, ArchiveFolder(folder.folder))
        assert len((await history.load(reads, gid)).outcomes) == audit_before + 1
    finally:
        sync.close()


async def test_the_cli_archives_finished_games_and_reads_them_back(
    settings: Settings, redis_url: str, client: aredis.Redis, tmp_path: Path
) -> None:
    keys = Keys(settings.prefix)
    settings = msgspec.structs.replace(settings, shards=4)
    gid = "arch-cli"
    async with running(settings, redis_url) as run:
        await play(run, client, keys, gid, settings.shards)
        shard = shard_of(gid, settings.shards)

        async def projected() -> bool:
            raw = await client.hget(ReadModelKeys(keys).games(shard), gid)
            return raw is not None and b'"status":"over"' in raw

        await wait_for(projected, timeout=20)
    archive_dir = tmp_path / "archive"
    env = cli_env(redis_url, settings.prefix, tmp_path)
    # Finished just now: not yet past --older-than's default hour.
    assert json.loads(ok(env, "archive", "--dir", str(archive_dir), "--json"))["games"] == []
    dry = json.loads(ok(env, "archive", "--dir", str(archive_dir), "--older-than", "0", "--dry-run", "--json"))
    assert dry["games"] == [{"game_id": gid, "status": "would archive"}]
    assert await client.exists(keys.public(gid))
    done = json.loads(ok(env, "archive", "--dir", str(archive_dir), "--older-than", "0", "--json"))
    assert [(g["game_id"], g["status"]) for g in done["games"]] == [(gid, "archived")]
    assert not await client.exists(keys.public(gid))
    # Without the folder the CLI names it; with it, replay, verify, audit and export work.
    _, line = fails(env, 2, "verify", gid)
    assert "archived" in line and "DICESTREAM_ARCHIVE_DIR" in line
    env["DICESTREAM_ARCHIVE_DIR"] = str(archive_dir)
    verdict = json.loads(ok(env, "verify", gid, "--json"))
    assert verdict["ok"] is True and verdict["seed_verified"] is True
    steps = [json.loads(line) for line in ok(env, "replay", gid, "--json").splitlines()]
    assert steps[-1]["type"] == "lifecycle.SeedRevealed"
    assert "verdict" in ok(env, "audit", gid, "--version", "5").lower()
    out = tmp_path / "again.jsonl"
    ok(env, "export", gid, "--out", str(out))
    assert history.parse_export(out.read_bytes().splitlines())[1].events[-1].type == "lifecycle.SeedRevealed"
    # A file changed after archiving is refused, naming why (exit 1), never verified as the game.
    path = archive_dir / ArchiveFolder(archive_dir).name_for(gid)
    path.write_bytes(path.read_bytes() + b"x")
    _, line = fails(env, 1, "verify", gid)
    assert "SHA-256" in line and gid in line

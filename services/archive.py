"""Archiving finished games: the whole history goes to a file, and the game's Redis keys are
replaced by one small marker (docs/scaling.md, "Archiving").

A game is archived once it is over: its history (every private event and command outcome) is
written as the JSON Lines file `dicestream export` writes, gzip-compressed, into the archive
folder (a local or mounted volume), read back and checked; then one script replaces its log by a
`lifecycle.GameArchived` marker at the next version (who played, the result, the seed, the file
and its SHA-256) and deletes its other keys, unless the game changed since the export. The
read model keeps the game's summary, marked archived.

Readers find archived games through `ArchiveReads`: an event store whose reads substitute the
file's history for the marker, so replay, verify, audit, export and the web page work on them.
The referee refuses every command to an archived game (GAME-ARCHIVED) and writes nothing.
"""

from __future__ import annotations

import asyncio
import gzip
import hashlib
import os
import time
from collections import OrderedDict
from importlib.resources import files
from pathlib import Path
from typing import Any, cast

import msgspec
import structlog

from contracts import codec
from contracts import lifecycle as lc
from contracts.envelope import EventEnvelope, event_id
from games import match as m
from services import history
from services.eventstore.keys import Keys, shard_of
from services.eventstore.redis_store import RedisEventStore
from services.follower import ARCHIVED_MARK
from services.readmodel import ReadModelKeys, summary
from services.redis_conn import AnyRedis, Entries, stream_id

log = structlog.get_logger("archive")
_SWAP = files("services").joinpath("archive.lua").read_text()


def is_marker(data: bytes) -> bool:
    return ARCHIVED_MARK in data


class ArchivedGame(LookupError):
    """A game whose history is in the archive, asked of a process that has no archive folder."""

    def __init__(self, game_id: str, file: str) -> None:
        super().__init__(
            f"game {game_id!r} is archived (file {file}); set DICESTREAM_ARCHIVE_DIR to the archive folder to read it"
        )
        self.game_id = game_id
        self.file = file


class ArchiveDamaged(ValueError):
    """An archive file that is missing, outside the folder, or not what its marker recorded."""


class ArchiveFolder:
    """Game files under one folder: `<2 hex of the id's SHA-256>/<game id>.jsonl.gz`."""

    def __init__(self, folder: str | Path, cached: int = 8) -> None:
        self.folder = Path(folder)
        self._cache: OrderedDict[str, history.History] = OrderedDict()
        self._cached = cached

    def name_for(self, game_id: str) -> str:
        return f"{hashlib.sha256(game_id.encode()).hexdigest()[:2]}/{game_id}.jsonl.gz"

    def write(self, game_id: str, lines: list[bytes]) -> tuple[str, str]:
        """Write the file atomically (a temporary file, fsync, rename); returns (name, SHA-256)."""
        name = self.name_for(game_id)
        path = self.folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        # mtime=0: the same history gives the same bytes (and digest) when archived again.
        data = gzip.compress(b"\n".join(lines) + b"\n", mtime=0)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        with tmp.open("wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        tmp.replace(path)
        folder = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(folder)
        finally:
            os.close(folder)
        return name, hashlib.sha256(data).hexdigest()

    def read(self, name: str, sha256: str) -> history.History:
        """The history in `name`, checked against the digest its marker recorded."""
        if name in self._cache:
            self._cache.move_to_end(name)
            return self._cache[name]
        path = (self.folder / name).resolve()
        if self.folder.resolve() not in path.parents:
            raise ArchiveDamaged(f"archive file {name!r} is outside the archive folder")
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise ArchiveDamaged(f"archive file {name} cannot be read in {self.folder}: {exc.strerror}") from None
        if hashlib.sha256(data).hexdigest() != sha256:
            raise ArchiveDamaged(f"archive file {name} does not match the SHA-256 its marker recorded")
        _, hist = history.parse_export(gzip.decompress(data).splitlines())
        self._cache[name] = hist
        while len(self._cache) > self._cached:
            self._cache.popitem(last=False)
        return hist


def marker_of(data: bytes) -> lc.GameArchived:
    marker = codec.decode_event_payload(data)
    assert isinstance(marker, lc.GameArchived), type(marker)
    return marker


class ArchiveReads(RedisEventStore):
    """An event store whose reads of an archived game come from its file (the marker names it);
    without a folder, such a read raises ArchivedGame, naming the file."""

    def __init__(self, client: AnyRedis, keys: Keys, folder: ArchiveFolder | None, **kw: Any) -> None:
        super().__init__(client, keys, **kw)
        self.folder = folder

    def _history(self, game_id: str, marker: bytes) -> history.History:
        found = marker_of(marker)
        if self.folder is None:
            raise ArchivedGame(game_id, found.file)
        return self.folder.read(found.file, found.sha256)

    async def read(self, game_id: str, after: int = 0) -> list[tuple[int, bytes]]:
        entries = await super().read(game_id, after)
        if not (entries and is_marker(entries[0][1])):
            return entries
        hist = self._history(game_id, entries[0][1])
        return [(e.version, codec.encode(e)) for e in hist.events if e.version > after]

    async def audit(self, game_id: str) -> list[bytes]:
        records = await super().audit(game_id)
        if records:
            return records
        archived = await self.archived(game_id)
        return [codec.encode(o) for o in archived.outcomes] if archived is not None else records

    async def archived(self, game_id: str) -> history.History | None:
        """The archived history of `game_id`, or None when it is not archived."""
        marker = cast(bytes | None, await self._reader.get(self.keys.archived(game_id)))
        return self._history(game_id, marker) if marker is not None else None


def marker_for(
    hist: history.History, agg: m.Match, file: str, sha256: str, now_ms: int
) -> tuple[lc.GameArchived, EventEnvelope]:
    """The marker of a finished game (`agg`, folded from `hist`) archived into `file`, and its
    envelope at the version after the game's last event."""
    assert agg.result is not None and agg.seed is not None, f"{hist.game_id} is not over"
    marker = lc.GameArchived(
        file=file,
        sha256=sha256,
        events=len(hist.events),
        outcomes=len(hist.outcomes),
        game_type=agg.game_type,
        num_players=agg.num_players,
        players=[s.name if s else None for s in agg.seats],
        kinds=[s.kind if s else None for s in agg.seats],
        scores=agg.result.scores,
        winners=agg.result.winners,
        seed_commitment=agg.seed_commitment,
        seed=agg.seed,
        created_at_ms=agg.created_at_ms,
        rules_version=agg.rules_version,
        data_version=agg.data_version,
    )
    version = agg.version + 1
    return marker, EventEnvelope(
        type="lifecycle.GameArchived",
        game_id=hist.game_id,
        version=version,
        event_id=event_id(hist.game_id, version),
        recorded_at_ms=now_ms,
        payload=msgspec.Raw(codec.encode(marker)),
    )


class Archived(msgspec.Struct, frozen=True, kw_only=True):
    """What `archive_game` did: `archived` (file, bytes in it), or why not (`running`, `moved`:
    the game changed during the export and was left for the next run, `gone`: no log)."""

    game_id: str
    status: str
    file: str | None = None
    file_bytes: int = 0
    events: int = 0
    outcomes: int = 0


async def archive_game(
    client: AnyRedis, keys: Keys, shards: int, folder: ArchiveFolder, game_id: str, attempts: int = 3
) -> Archived:
    store = RedisEventStore(client, keys)
    try:
        for _ in range(attempts):
            done = await _archive_once(client, store, keys, shards, folder, game_id)
            if done.status != "moved":
                return done
        return done
    finally:
        await store.close()


async def _archive_once(
    client: AnyRedis, store: RedisEventStore, keys: Keys, shards: int, folder: ArchiveFolder, game_id: str
) -> Archived:
    hist = await history.load(store, game_id)  # an archived game's: its marker alone
    if not hist.events:
        return Archived(game_id=game_id, status="gone")
    last = hist.events[-1]
    if last.type == "lifecycle.GameArchived":
        return Archived(game_id=game_id, status="archived", file=marker_of(codec.encode(last)).file)
    agg = history.fold(hist)
    if agg.status != m.OVER or agg.seed is None or agg.result is None:
        return Archived(game_id=game_id, status=agg.status)
    lines = history.export_lines(hist)
    name, sha = folder.write(game_id, lines)
    check = ArchiveFolder(folder.folder, cached=0).read(name, sha)  # what a reader will get
    if codec.encode(check.events) != codec.encode(hist.events) or codec.encode(check.outcomes) != codec.encode(
        hist.outcomes
    ):
        raise RuntimeError(f"{game_id}: the archive file {name} does not read back as the game's history")
    marker, envelope = marker_for(hist, agg, name, sha, int(time.time() * 1000))
    others = [keys.public(game_id), keys.commands(game_id), *(keys.seat(game_id, s) for s in range(agg.num_players))]
    reply = await client.eval(
        _SWAP,
        3 + len(others),
        keys.log(game_id),
        keys.audit(game_id),
        keys.archived(game_id),
        *others,
        last.version,
        len(hist.outcomes),
        codec.encode(envelope),
    )
    status = reply[0].decode()
    if status != "ok":
        log.info("archive_skipped", game_id=game_id, reason=status)
        return Archived(game_id=game_id, status=status)
    archived = m.evolve(m.Match(game_id=game_id, version=last.version), marker)
    shard = shard_of(game_id, shards)
    rm = ReadModelKeys(keys)
    # A projector that read the log just before the swap may still write the game's model: wait
    # until it is past every bus notice published before the swap (it reads the marker after).
    await _projected_past(client, keys, rm, shard)
    pipe = client.pipeline(transaction=True)
    pipe.hset(rm.games(shard), game_id, codec.encode(summary(archived)))
    pipe.delete(rm.game(shard, game_id))  # not UNLINK: the cluster pipeline does not queue it
    await pipe.execute()
    size = (folder.folder / name).stat().st_size
    log.info("game_archived", game_id=game_id, file=name, bytes=size, version=last.version)
    return Archived(
        game_id=game_id,
        status="archived",
        file=name,
        file_bytes=size,
        events=len(hist.events),
        outcomes=len(hist.outcomes),
    )


async def _projected_past(client: AnyRedis, keys: Keys, rm: ReadModelKeys, shard: int, wait_s: float = 10.0) -> None:
    tail = cast(Entries, await client.xrevrange(keys.bus(shard), count=1))
    if not tail:
        return  # nothing unread: the bus is trimmed only past what every group acknowledged
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        pos = cast(bytes | None, await client.get(rm.position(shard)))
        if pos is not None and stream_id(pos) >= stream_id(tail[0][0]):
            return
        await asyncio.sleep(0.05)
    log.warning("archive_projector_behind", shard=shard, waited_s=wait_s)


async def finished_before(client: AnyRedis, keys: Keys, shards: int, before_ms: int) -> list[str]:
    """Games the read models list as over whose last event was recorded before `before_ms`."""
    rm = ReadModelKeys(keys)
    over: list[str] = []
    for shard in range(shards):
        for gid, raw in (await client.hgetall(rm.games(shard))).items():
            if b'"status":"over"' in raw:
                over.append(gid.decode() if isinstance(gid, bytes) else gid)
    out: list[str] = []
    for start in range(0, len(over), 200):
        chunk = over[start : start + 200]
        pipe = client.pipeline(transaction=False)
        for g in chunk:
            pipe.xrevrange(keys.log(g), count=1)
        for g, last in zip(chunk, await pipe.execute(), strict=True):
            if last and 0 < codec.recorded_at_ms(last[0][1][b"data"]) < before_ms:
                out.append(g)
    return out

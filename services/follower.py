"""Following game logs: folding a log (or its tail) into an aggregate, and a cache of aggregates
that read-side services catch up from the bus notices' entries or the logs, each event folded once.

The referee folds strictly; readers (projector, turn service, gateway) fold leniently, skipping
event types a newer version wrote instead of crashing.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable

import structlog

from contracts import codec
from contracts.bus import BusNotice, entry_crc
from games import match as m
from services.eventstore.base import EventStore

log = structlog.get_logger("follower")
ARCHIVED_MARK = b'"type":"lifecycle.GameArchived"'


def rebuild(
    game_id: str, entries: list[tuple[int, bytes]], into: m.Match | None = None, strict: bool = True
) -> m.Match:
    """Fold a log (or its tail) into an aggregate. A referee folds strictly: an event type it does
    not know (written by a newer version) means it cannot judge the game. Read-side consumers
    pass strict=False and skip such events instead of crashing."""
    agg = into or m.Match(game_id=game_id)
    for version, data in entries:
        if version <= agg.version:
            continue  # already folded (two catch-ups of one game read the same tail)
        if version != agg.version + 1:
            if not (agg.version == 0 and ARCHIVED_MARK in data):
                raise ValueError(f"{game_id}: log jumps from {agg.version} to {version}")
            agg.version = version - 1  # an archived game: only its marker is left (services/archive.py)
        if version == 1:
            agg.created_at_ms = codec.recorded_at_ms(data)
        try:
            event = codec.decode_event_payload(data)
        except codec.UnknownType as exc:
            if strict:
                raise
            log.warning("unknown_event_skipped", game_id=game_id, version=version, type=str(exc))
            agg.version = version
            continue
        m.evolve(agg, event)
    return agg


# How many versions back a follower remembers each game's entries by their CRC-32: a bus entry it
# is already past is checked against them, and a log read against the one it asked from.
KEPT_CRCS = 16


class LogFollower:
    """Aggregates of recently moved games, caught up on demand. A bus notice that carries its
    command's log entries (contracts/bus.py) is folded as it is when it continues the cached game:
    its first version follows the cached one and it names the CRC-32 of the entry folded at that
    version; one the cached game is already past needs nothing if its last entry is the one folded
    at its version. Anything else (a game not cached, a gap, a notice without its entries, one that
    names other entries) is caught up from the log: the first catch-up reads the whole log, later
    ones only what was appended since, plus the last entry already folded, to check it is still
    there as it was. So neither path folds over a history rewritten under it (after a failover that
    lost acknowledged writes, Redis replicating asynchronously, new events take the lost versions)
    once an entry of the new history reaches it: the game is then folded again from its log."""

    def __init__(self, store: EventStore, cache_games: int = 20000) -> None:
        self.store = store
        self.cache: OrderedDict[str, m.Match] = OrderedDict()
        self.cache_games = cache_games
        # Per cached game, the CRC-32 of the entries folded at its last KEPT_CRCS versions.
        self._crcs: dict[str, dict[int, int]] = {}
        self.log_reads = 0  # games caught up from their logs (tests, metrics)

    async def follow(self, notices: Iterable[tuple[BusNotice, list[tuple[int, bytes]] | None]]) -> list[m.Match]:
        """The games these notices (with their entries, when they carry them) are about, caught up:
        each in the order of its first notice."""
        order: dict[str, m.Match | None] = {}
        from_log: list[str] = []
        for notice, events in notices:
            g = notice.game_id
            if g in order and order[g] is None:
                continue  # its log will be read: that covers this notice too
            order[g] = self._fold_notice(notice, events)
            if order[g] is None:
                from_log.append(g)
        for agg in await self.catch_up(from_log):
            order[agg.game_id] = agg
        return [agg for agg in order.values() if agg is not None]

    def _fold_notice(self, notice: BusNotice, events: list[tuple[int, bytes]] | None) -> m.Match | None:
        """The cached game with a notice's entries folded if they continue it (or it is already
        past them, with the same entries); None if the log must be read instead."""
        g = notice.game_id
        agg = self.cache.get(g)
        crcs = self._crcs.get(g, {})
        if agg is not None and notice.to_version <= agg.version:
            same = events is not None and crcs.get(notice.to_version) == entry_crc(events[-1][1])
            return agg if same else None
        if events is None or notice.prev_crc is None:
            return None
        if agg is None:
            if notice.from_version != 0 or notice.prev_crc != 0:
                return None
            agg = m.Match(game_id=g)
        elif agg.version != notice.from_version or crcs.get(agg.version) != notice.prev_crc:
            return None
        try:
            folded = rebuild(g, events, agg, strict=False)
        except Exception:
            log.exception("notice_unreadable", game_id=g, version=notice.to_version)
            self.forget(g)
            return None
        self._keep(g, folded, events)
        return folded

    async def catch_up(self, game_ids: Iterable[str]) -> list[m.Match]:
        ids = list(dict.fromkeys(game_ids))
        if not ids:
            return []
        self.log_reads += len(ids)
        # Read from the entry at the cached version, to check it is still the one folded there.
        asked = {g: self.cache[g].version if g in self.cache else 0 for g in ids}
        logs = await self.store.read_many({g: max(0, v - 1) for g, v in asked.items()})
        # A bus entry may have been folded meanwhile: the check is against what was asked from.
        again = [g for g in ids if asked[g] and not self._continues(g, logs[g], asked[g])]
        if again:
            if rewritten := [g for g in again if g in self.cache]:
                log.warning("log_rewritten_refolding", game_ids=rewritten[:20], games=len(rewritten))
            for g in again:
                self.forget(g)
            logs.update(await self.store.read_many(dict.fromkeys(again, 0)))
        out = []
        for g in ids:
            try:
                agg = rebuild(g, logs[g], self.cache.get(g), strict=False)
            except Exception:
                # An unreadable log is the referee's problem to report; skip it, keep the rest.
                log.exception("log_unreadable", game_id=g)
                self.forget(g)
                continue
            self._keep(g, agg, logs[g])
            out.append(agg)
        return out

    def _keep(self, game_id: str, agg: m.Match, entries: list[tuple[int, bytes]]) -> None:
        self.cache[game_id] = agg
        self.cache.move_to_end(game_id)
        crcs = self._crcs.setdefault(game_id, {})
        for version, data in entries[-KEPT_CRCS:]:
            crcs[version] = entry_crc(data)
        for version in [v for v in crcs if v <= agg.version - KEPT_CRCS]:
            del crcs[version]
        while len(self.cache) > self.cache_games:
            self._crcs.pop(self.cache.popitem(last=False)[0], None)

    def _continues(self, game_id: str, entries: list[tuple[int, bytes]], version: int) -> bool:
        crcs = self._crcs.get(game_id)
        return (
            crcs is not None
            and bool(entries)
            and entries[0][0] == version
            and crcs.get(version) == entry_crc(entries[0][1])
        )

    def clear(self) -> None:
        self.cache.clear()
        self._crcs.clear()

    def forget(self, game_id: str) -> None:
        self.cache.pop(game_id, None)
        self._crcs.pop(game_id, None)

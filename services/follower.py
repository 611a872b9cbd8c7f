"""Following game logs: folding a log (or its tail) into an aggregate, and a cache of aggregates
that read-side services catch up from the logs, each event folded once.

The referee folds strictly; readers (projector, turn service, gateway) fold leniently, skipping
event types a newer version wrote instead of crashing.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable

import structlog

from contracts import codec
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


class LogFollower:
    """Aggregates of recently moved games, caught up from their logs on demand: a game's first
    catch-up reads its whole log, later ones only what was appended since, plus the last entry
    already folded, to check it is still there as it was. It is not after a failover that lost
    acknowledged writes (Redis replicates asynchronously) and a new history was written over the
    same versions: then the game is folded again from its log."""

    def __init__(self, store: EventStore, cache_games: int = 20000) -> None:
        self.store = store
        self.cache: OrderedDict[str, m.Match] = OrderedDict()
        self.cache_games = cache_games
        self._last: dict[str, int] = {}  # hash of the last folded entry, per cached game

    async def catch_up(self, game_ids: Iterable[str]) -> list[m.Match]:
        ids = list(dict.fromkeys(game_ids))
        logs = await self.store.read_many({g: self.cache[g].version - 1 if g in self.cache else 0 for g in ids})
        diverged = [g for g in ids if g in self.cache and not self._continues(g, logs[g])]
        if diverged:
            log.warning("log_rewritten_refolding", game_ids=diverged[:20], games=len(diverged))
            for g in diverged:
                self.forget(g)
            logs.update(await self.store.read_many(dict.fromkeys(diverged, 0)))
        out = []
        for g in ids:
            try:
                agg = rebuild(g, logs[g], self.cache.get(g), strict=False)
            except Exception:
                # An unreadable log is the referee's problem to report; skip it, keep the rest.
                log.exception("log_unreadable", game_id=g)
                self.forget(g)
                continue
            self.cache[g] = agg
            self.cache.move_to_end(g)
            if logs[g]:
                self._last[g] = hash(logs[g][-1][1])
            out.append(agg)
        while len(self.cache) > self.cache_games:
            self._last.pop(self.cache.popitem(last=False)[0], None)
        return out

    def _continues(self, game_id: str, entries: list[tuple[int, bytes]]) -> bool:
        version = self.cache[game_id].version
        return bool(entries) and entries[0][0] == version and hash(entries[0][1]) == self._last.get(game_id)

    def clear(self) -> None:
        self.cache.clear()
        self._last.clear()

    def forget(self, game_id: str) -> None:
        self.cache.pop(game_id, None)
        self._last.pop(game_id, None)

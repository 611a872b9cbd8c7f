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
            raise ValueError(f"{game_id}: log jumps from {agg.version} to {version}")
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
    catch-up reads its whole log, later ones only what was appended since."""

    def __init__(self, store: EventStore, cache_games: int = 20000) -> None:
        self.store = store
        self.cache: OrderedDict[str, m.Match] = OrderedDict()
        self.cache_games = cache_games

    async def catch_up(self, game_ids: Iterable[str]) -> list[m.Match]:
        ids = list(dict.fromkeys(game_ids))
        logs = await self.store.read_many({g: self.cache[g].version if g in self.cache else 0 for g in ids})
        out = []
        for g in ids:
            try:
                agg = rebuild(g, logs[g], self.cache.get(g), strict=False)
            except Exception:
                # An unreadable log is the referee's problem to report; skip it, keep the rest.
                log.exception("log_unreadable", game_id=g)
                self.cache.pop(g, None)
                continue
            self.cache[g] = agg
            self.cache.move_to_end(g)
            out.append(agg)
        while len(self.cache) > self.cache_games:
            self.cache.popitem(last=False)
        return out

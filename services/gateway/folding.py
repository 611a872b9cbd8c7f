"""Games folded from their logs, in the gateway: to check a seat's token (SHA-256 against the
seat's `token_hash`), to show a seat its own view, and to show any version of a game.

A cache of aggregates (LRU) is caught up from the log's tail on each use, so a check costs one
XRANGE of what is new; a token check of a seat already known costs nothing (a seat's token hash
never changes once joined)."""

from __future__ import annotations

import hmac
from collections import OrderedDict

import structlog

from games import match as m
from services.eventstore.redis_store import RedisEventStore
from services.follower import rebuild
from services.tokens import token_hash

log = structlog.get_logger("gateway")


def fold_into(agg: m.Match, entries: list[tuple[int, bytes]], upto: int | None = None) -> m.Match:
    """Fold log entries after `agg.version` (up to `upto`), as every reader does
    (`services.follower.rebuild`, lenient: a newer writer's event types are skipped)."""
    shown = entries if upto is None else [(v, d) for v, d in entries if v <= upto]
    return rebuild(agg.game_id, shown, into=agg, strict=False)


class GameCache:
    def __init__(self, store: RedisEventStore, size: int) -> None:
        self.store = store
        self.size = max(1, size)
        self._cache: OrderedDict[str, m.Match] = OrderedDict()

    async def current(self, game_id: str) -> m.Match | None:
        """The game as its log is now; None if it has no log."""
        agg = self._cache.get(game_id) or m.Match(game_id=game_id)
        fold_into(agg, await self.store.read(game_id, after=agg.version))
        if agg.version == 0:
            self._cache.pop(game_id, None)
            return None
        self._remember(agg)
        return agg

    async def at(self, game_id: str, version: int) -> m.Match | None:
        """The game as it was at `version` (folded from the start); None if it has no log."""
        agg = fold_into(m.Match(game_id=game_id), await self.store.read(game_id), upto=version)
        return agg if agg.version else None

    def _remember(self, agg: m.Match) -> None:
        self._cache[agg.game_id] = agg
        self._cache.move_to_end(agg.game_id)
        while len(self._cache) > self.size:
            self._cache.popitem(last=False)

    def known_hash(self, game_id: str, seat: int) -> str | None:
        agg = self._cache.get(game_id)
        if agg is None or not 0 <= seat < len(agg.seats):
            return None
        info = agg.seats[seat]
        return info.token_hash if info is not None else None

    async def check_token(self, game_id: str, seat: int, token: str, fresh: bool = False) -> tuple[m.Match, bool]:
        """The game, and whether `token` is `seat`'s; reads the log only when the seat's hash is
        not known yet (or, `fresh`, to return the game as it is now). Raises LookupError when the
        game has no log."""
        digest = token_hash(token)
        known = self.known_hash(game_id, seat)
        if known is not None and not fresh:
            return self._cache[game_id], hmac.compare_digest(known, digest)
        agg = await self.current(game_id)
        if agg is None:
            raise LookupError(game_id)
        return agg, m.authenticated(agg, seat, digest)

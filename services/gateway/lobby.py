"""Reading games for everyone: the game list and each game's public state from the projector's
read models (folded from the log when asked for another version, or when the model lags)."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Container
from typing import Any

import msgspec

from games import match as m
from games.catalog import GAMES
from services import ratings
from services.eventstore.keys import shard_of
from services.gateway.auth import no_such_game
from services.gateway.deps import Deps
from services.gateway.problems import Problem
from services.gateway.responses import GameList, ListedGame, PublicState, RatedPlayer, Ratings
from services.readmodel import GameSummary, public_state

_summary = msgspec.json.Decoder(GameSummary)
_state = msgspec.json.Decoder(PublicState)
CURSOR = re.compile(r"(\d{1,16})\.([A-Za-z0-9][A-Za-z0-9_.-]{0,99})")


class _Recorded(msgspec.Struct):
    recorded_at_ms: int = 0


_recorded = msgspec.json.Decoder(_Recorded)


async def _created(deps: Deps, summaries: list[GameSummary]) -> None:
    """Fill `deps.created` for these games: from the summary the projector wrote, else (a model
    written before summaries had `created_at_ms`) from the public GameCreated (entry `1-0`)."""
    for s in summaries:
        if s.created_at_ms and s.game_id not in deps.created:
            deps.created[s.game_id] = s.created_at_ms
    missing = [s.game_id for s in summaries if s.game_id not in deps.created]
    for start in range(0, len(missing), 500):
        chunk = missing[start : start + 500]
        pipe = deps.redis.pipeline(transaction=False)
        for g in chunk:
            pipe.xrange(deps.keys.public(g), min="1-0", max="1-0", count=1)
        for g, entries in zip(chunk, await pipe.execute(), strict=True):
            at = 0
            if entries:
                try:
                    at = _recorded.decode(entries[0][1][b"data"]).recorded_at_ms
                except (KeyError, msgspec.DecodeError, msgspec.ValidationError):
                    at = 0
            deps.created[g] = at


async def _summaries(deps: Deps, title: str | None, statuses: Container[str] | None) -> list[GameSummary]:
    """Every game's summary from the read models (all shards), filtered, newest first."""
    shards = await asyncio.gather(*(deps.redis.hgetall(deps.rm.games(s)) for s in range(deps.settings.shards)))
    found: list[GameSummary] = []
    for models in shards:
        for raw in models.values():
            try:
                summary = _summary.decode(raw)
            except (msgspec.DecodeError, msgspec.ValidationError):
                continue
            if (title is None or summary.game_type == title) and (statuses is None or summary.status in statuses):
                found.append(summary)
    await _created(deps, found)
    return sorted(found, key=lambda s: (-deps.created.get(s.game_id, 0), s.game_id))


async def list_games(deps: Deps, title: str | None, status: str | None, limit: int, cursor: str | None) -> GameList:
    after: tuple[int, str] | None = None
    if cursor is not None:
        parsed = CURSOR.fullmatch(cursor)
        if parsed is None:
            raise Problem(400, "invalid-parameter", "Invalid cursor", "pass the `next` of the previous page")
        after = (-int(parsed.group(1)), parsed.group(2))
    found = await _summaries(deps, title, None if status is None else (status,))
    ordered = found
    if after is not None:
        ordered = [s for s in found if (-deps.created.get(s.game_id, 0), s.game_id) > after]
    page = ordered[:limit]
    games = [ListedGame(**{**msgspec.structs.asdict(s), "created_at_ms": deps.created.get(s.game_id, 0)}) for s in page]
    more = len(ordered) > limit
    last = games[-1] if games else None
    return GameList(
        games=games,
        next=f"{last.created_at_ms}.{last.game_id}" if more and last else None,
        total=len(found),
    )


async def player_ratings(deps: Deps, title: str | None) -> Ratings:
    """Ratings per title and player name over every finished game the read models hold (archived
    ones too: their summary keeps the players and the result), oldest first."""
    finished = await _summaries(deps, title, (m.OVER, m.ARCHIVED))
    oldest_first = sorted(finished, key=lambda s: (deps.created.get(s.game_id, 0), s.game_id))
    # The same finished games give the same table: the lobby asks every 5 s, per open page.
    key = tuple((s.game_id, s.version) for s in oldest_first)
    cached = deps.rated.get(title)
    if cached is not None and cached[0] == key:
        answer: Ratings = cached[1]
        return answer
    by_title: dict[str, list[ratings.Finished]] = {}
    for s in oldest_first:
        if s.scores is None or s.winners is None or any(p is None for p in s.players):
            continue
        g = ratings.Finished(seats=[p for p in s.players if p is not None], scores=s.scores, winners=s.winners)
        if ratings.informative(g):
            by_title.setdefault(s.game_type, []).append(g)
    rated: list[RatedPlayer] = []
    for game_type, games in sorted(by_title.items()):
        # OpenSkill in Python costs tens of µs a game: off the event loop for a long history.
        table = await asyncio.to_thread(ratings.rate, games)
        rated += [RatedPlayer(title=game_type, **msgspec.structs.asdict(r)) for r in table.values()]
    rated.sort(key=lambda r: (r.title, -r.rating, r.name))
    answer = Ratings(ratings=rated, games=sum(len(g) for g in by_title.values()))
    if title is None or title in GAMES:  # any string may be asked for: cache the real titles only
        deps.rated[title] = (key, answer)
    return answer


def _state_of(agg: m.Match) -> PublicState:
    built: dict[str, Any] = public_state(agg, plain=True)
    return msgspec.convert(built, PublicState)


async def game_state(deps: Deps, game_id: str, version: int | None, min_version: int | None) -> PublicState:
    if version is not None:
        agg = await deps.games.at(game_id, version)
        if agg is None:
            raise no_such_game(game_id)
        if agg.version < version:
            raise Problem(
                404, "no-such-version", "No such version", f"the game is at version {agg.version}", game_id=game_id
            )
        return _state_of(agg)
    raw = await deps.redis.get(deps.rm.game(shard_of(game_id, deps.settings.shards), game_id))
    if raw is not None:
        try:
            state = _state.decode(raw)
        except (msgspec.DecodeError, msgspec.ValidationError):
            state = None
        if state is not None and (min_version is None or state.summary.version >= min_version):
            return state
    # No model yet (the projector lags, or is not running), or an older one than asked for.
    current = await deps.games.current(game_id)
    if current is None:
        raise no_such_game(game_id)
    return _state_of(current)

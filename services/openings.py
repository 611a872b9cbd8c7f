"""What each turn position took first, how often a seat that took a thing won, each position's mean
score and the events written for it: read from logs.

`dicestream balance` says how often each turn position wins; a designer tuning the data then asks
why: which purchase the first player opens with, and whether one tile or card decides the game.
This report answers from finished games' logs (export files, or a `balance --keep` folder), so a
figure in a rules doc is one command away from the games it counts. What a seat "took" is the
game's own reading of its events (`GameSpec.acquisition`: a tile bought, a card upgraded, a truck).

Turn positions are `dicestream balance`'s: `GameSpec.turn_order` read from the final state, or
else the order in which seats first acted alone. A win shared by k seats counts 1/k.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator

import msgspec

from contracts import codec
from contracts import lifecycle as lc
from contracts.outcome import ACCEPTED
from contracts.registry import type_name
from games import match as m
from games.catalog import VARIANT_DATA_ENV, rules_for, spec_for
from games.spec import GameSpec
from services.history import History


class NotComparable(ValueError):
    """The games cannot share one report: another game or player count, or a game without the hook."""


class PositionRow(msgspec.Struct, frozen=True, kw_only=True):
    position: int
    games: int
    wins: float
    share: float
    mean_score: float  # the game's final score (rules.result), a game on average


class EventRow(msgspec.Struct, frozen=True, kw_only=True):
    """How often an event naming a seat (`seat`) was written for each position, a game on average,
    and the games it was written in at all: the tempo behind a share (tiles bought, Income taken,
    dives, end triggers)."""

    event: str
    games: int
    by_position: list[float]


class Opening(msgspec.Struct, frozen=True, kw_only=True):
    """The first things a position's seat took, in the order taken ([] for none), and how that seat fared."""

    position: int
    items: list[str]
    games: int
    wins: float
    share: float


class ItemRow(msgspec.Struct, frozen=True, kw_only=True):
    """The games `item` was taken in, the seats that took it at least once in a game (`takers`, per
    position: more than the games where several seats may take one, as Mechanica's trucks) and
    their win share. `wins_by_position` splits the takers' wins by position, so that a position's
    wins in the games it did not take the item are its `PositionRow.wins` less these: whether a
    race for one tile is what puts a position ahead."""

    item: str
    games: int
    takers: int
    by_position: list[int]
    wins: float
    share: float
    wins_by_position: list[float]


class Openings(msgspec.Struct, frozen=True, kw_only=True):
    game: str
    players: int
    games: int
    unfinished: int  # read but left out: no result yet
    other: int  # read but left out: another game or player count than the one asked for
    data_versions: list[str]
    first: int
    min_share: float
    positions: list[PositionRow]
    openings: list[Opening]  # most played first, per position
    items: list[ItemRow]  # taken in at least min_share x games, highest win share first
    events: list[EventRow]  # every event type that names a seat, by name


class ReadGame(msgspec.Struct, kw_only=True):
    """One finished game as the report counts it: seats in order of play, winners, what each seat
    took, the final scores, and the game's events naming each seat."""

    order: list[int]
    winners: list[int]
    taken: dict[int, list[str]]
    scores: list[int]
    # Per seat, the game's events naming it (`seat`: the seat that acted, or was counted or awarded),
    # by type name.
    wrote: dict[int, dict[str, int]]


def judged_states(history: History, took: Callable[[msgspec.Struct], None]) -> Iterator[m.Match]:
    """The game as each accepted command found it (folded to its `judged_at_version`), in the order
    played, then as the log leaves it; every event folded is handed to `took` on the way."""
    agg = m.Match(game_id=history.game_id)
    # A deadline's ForceDefault carries no seat but plays a turn: every accepted command counts.
    judged = sorted(o.judged_at_version for o in history.outcomes if o.status == ACCEPTED)
    events = iter(history.events)
    pending = next(events, None)
    for version in [*judged, None]:
        while pending is not None and (version is None or pending.version <= version):
            event = codec.event_payload(pending)
            m.evolve(agg, event)
            took(event)
            pending = next(events, None)
        yield agg


def read_game(spec: GameSpec, history: History) -> tuple[m.Match, ReadGame | None]:
    """Fold the log; note the seats' order of play and what each took (None: not finished)."""
    hook = spec.acquisition
    assert hook is not None
    alone: list[int] = []
    taken: dict[int, list[str]] = defaultdict(list)
    wrote: dict[int, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    own = f"{spec.name}."

    def took(event: msgspec.Struct) -> None:
        got = hook(event)
        if got is not None:
            taken[got[0]].append(got[1])
        seat = getattr(event, "seat", None)
        if type(seat) is int:
            kind = type_name(event)
            # The game's own events: the lifecycle's (a seat joined) say nothing of how it played.
            if kind.startswith(own):
                wrote[seat][kind] += 1

    agg = m.Match(game_id=history.game_id)
    for agg in judged_states(history, took):
        # What `games.play.play_game` notes before each command it plays (after the last
        # command the game is over and waits on nobody).
        waiting = m.to_act(agg)
        if len(waiting) == 1 and waiting[0] not in alone:
            alone.append(waiting[0])
    if agg.result is None:
        return agg, None
    n = agg.num_players
    if spec.turn_order is not None:
        order = spec.turn_order(agg.game)
    else:
        order = alone + [s for s in range(n) if s not in alone]
    return agg, ReadGame(
        order=order,
        winners=list(agg.result.winners),
        taken=dict(taken),
        scores=list(agg.result.scores),
        wrote={seat: dict(kinds) for seat, kinds in wrote.items()},
    )


def _created(history: History) -> lc.GameCreated:
    try:
        created = codec.event_payload(history.events[0]) if history.events else None
    except (codec.UnknownType, msgspec.ValidationError, msgspec.DecodeError) as exc:
        raise NotComparable(f"{history.game_id}: its first event cannot be read: {exc}") from None
    if not isinstance(created, lc.GameCreated):
        raise NotComparable(f"{history.game_id}: the log does not start with the game's creation")
    return created


def report(
    histories: Iterable[History],
    first: int = 2,
    min_share: float = 0.1,
    game: str | None = None,
    players: int | None = None,
) -> Openings:
    """The report over the `histories` of `game` with `players` (default: those of the first one
    read; a history of another game or count is then an error, and with them given, left out).
    Raises NotComparable."""
    if first < 1:
        raise ValueError("first must be at least 1")
    if not 0 <= min_share <= 1:
        raise ValueError("min_share must be between 0 and 1")
    versions: set[str] = set()
    other = 0
    played: list[ReadGame] = []
    unfinished = 0
    current: tuple[str, int] | None = None
    for history in histories:
        created = _created(history)
        key = (created.game_type, created.num_players)
        if (game is not None and key[0] != game) or (players is not None and key[1] != players):
            other += 1
            continue
        spec = spec_for(created.game_type)
        if spec is None:
            raise NotComparable(f"{history.game_id}: {created.game_type!r} is not a game this build runs")
        if spec.acquisition is None:
            raise NotComparable(f"{history.game_id}: {spec.name} declares nothing a seat takes (GameSpec.acquisition)")
        kept = rules_for(created.game_type, created.data_version or None)
        if kept is None or kept.data_version != created.data_version:
            # Folded on today's data, its states could differ from those its players saw.
            raise NotComparable(
                f"{history.game_id}: played on data {created.data_version!r}, which this build does not keep: "
                "read it with the build that played it, or name that data's file in "
                f"{VARIANT_DATA_ENV} (GAME=FILE)"
            )
        if kept.rules_version != created.rules_version:
            # Other rules code may fold the same events into other states (as `verify` refuses to
            # re-judge such a game).
            raise NotComparable(
                f"{history.game_id}: played by rules {created.rules_version!r}, this build runs "
                f"{kept.rules_version!r}: read it with the build that played it"
            )
        if current is None:
            current = key
        elif key != current:
            raise NotComparable(
                f"{history.game_id}: {key[0]} with {key[1]} players, the games before it are {current[0]} with "
                f"{current[1]} players: report them apart (--game, --players)"
            )
        try:
            agg, read = read_game(spec, history)
        except codec.UnknownType as exc:
            raise NotComparable(
                f"{history.game_id}: an event of unknown type {exc} (written by a newer build?)"
            ) from None
        except (msgspec.ValidationError, msgspec.DecodeError) as exc:
            raise NotComparable(f"{history.game_id}: an event cannot be read: {exc}") from None
        versions.add(agg.data_version)
        if read is None:
            unfinished += 1
        else:
            played.append(read)
    if current is None:
        raise NotComparable("no games to read" + (f" ({other} of another game or player count)" if other else ""))
    return _tally(current[0], current[1], played, unfinished, other, sorted(versions), first, min_share)


def _tally(
    game: str,
    n: int,
    played: list[ReadGame],
    unfinished: int,
    other: int,
    versions: list[str],
    first: int,
    min_share: float,
) -> Openings:
    wins = [0.0] * n
    scores = [0] * n
    wrote: dict[str, list[int]] = defaultdict(lambda: [0] * n)
    written_in: dict[str, int] = defaultdict(int)
    opened: dict[tuple[int, tuple[str, ...]], list[float]] = defaultdict(lambda: [0, 0.0])
    takers: dict[str, list[int]] = defaultdict(lambda: [0] * n)
    taker_wins: dict[str, list[float]] = defaultdict(lambda: [0.0] * n)
    taken_in: dict[str, int] = defaultdict(int)
    for g in played:
        for item in {i for things in g.taken.values() for i in things}:
            taken_in[item] += 1
        for kind in {k for kinds in g.wrote.values() for k in kinds}:
            written_in[kind] += 1
        share = {s: 1.0 / len(g.winners) for s in g.winners}
        for position, seat in enumerate(g.order):
            won = share.get(seat, 0.0)
            wins[position] += won
            scores[position] += g.scores[seat]
            for kind, count in g.wrote.get(seat, {}).items():
                wrote[kind][position] += count
            took = g.taken.get(seat, [])
            row = opened[position, tuple(took[:first])]
            row[0] += 1
            row[1] += won
            for item in set(took):
                takers[item][position] += 1
                taker_wins[item][position] += won
    games = len(played)
    positions = [
        PositionRow(
            position=p,
            games=games,
            wins=w,
            share=w / games if games else 0.0,
            mean_score=scores[p] / games if games else 0.0,
        )
        for p, w in enumerate(wins)
    ]
    events = [
        EventRow(event=kind, games=written_in[kind], by_position=[c / games for c in by])
        for kind, by in sorted(wrote.items())
    ]
    openings = [
        Opening(position=p, items=list(items), games=int(c), wins=w, share=w / c)
        for (p, items), (c, w) in sorted(opened.items(), key=lambda kv: (kv[0][0], -kv[1][0], kv[0][1]))
    ]
    floor = min_share * games
    items = [
        ItemRow(
            item=item,
            games=taken_in[item],
            takers=sum(by),
            by_position=by,
            wins=sum(taker_wins[item]),
            share=sum(taker_wins[item]) / sum(by),
            wins_by_position=taker_wins[item],
        )
        for item, by in takers.items()
        if taken_in[item] >= floor
    ]
    items.sort(key=lambda r: (-r.share, -r.takers, r.item))
    return Openings(
        game=game,
        players=n,
        games=games,
        unfinished=unfinished,
        other=other,
        data_versions=versions,
        first=first,
        min_share=min_share,
        positions=positions,
        openings=openings,
        items=items,
        events=events,
    )

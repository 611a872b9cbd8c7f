"""Seat balance: how often each seat wins when every seat is played by the same bot line-up.

Pure and offline (`games.play.play_game`, no referee, no Redis, no I/O besides the optional
progress callback). Seat s of every game gets line-up entry `s % len(makers)`: a line-up of one
kind (all greedy) measures the seat advantage alone; a mixed one (greedy, random) measures it for
that seating. Game i is seeded `f"{seed_prefix}-{num_players}-{i}"`, and seat s's bot gets the seed
`i * num_players + s`, so the same arguments give the same table. The line-up may hold search bots
(`Kind(game, "ismcts", iterations)`: the hosted ISMCTS bounded by iterations, never by the clock,
so that its games are seeded like the others). `workers` > 1 plays the games in that many
processes (the makers must then pickle, as `Kind` does); every game is seeded and the table is
summed in game order, so it is the same table whatever the number of workers.

A seat's win share is its wins over its games, a win shared by k seats counting 1/k. Its 95%
interval is the Wilson score interval (z = 1.96) on that share, chosen over the normal (Wald)
interval because it stays inside [0, 1] and keeps its coverage near 0 and 1 (a seat that never or
always wins, short runs); shared wins make the share a little less spread than a binomial
proportion, so the interval is, if anything, slightly conservative. The fair share is 1/n; the
target (the issue's) is every seat's share within 1/n +- 0.05.

Seat numbers and turn positions differ: every game here picks its first player at random, so the
seat table says only that seat numbers are fair. The position table says what a line-up of one
kind gains from playing first, second, ...: a seat's position is its place in the order of play
the game declares (`GameSpec.turn_order`, read by `games.play.play_game`), else the rank of its
first turn taken alone (while the game waits on that seat only); a seat that never acts alone
takes the last positions, in seat order.

`keep` is handed every game as played (`KeptGame`: its seed and its commands in order), so that a
caller can have the referee play it again from the same seed and keep it as a log
(`dicestream balance --keep`): a figure of a run can then be checked game by game.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import multiprocessing
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Annotated, Any

import msgspec

from games.base import Rules
from games.bots import Bot
from games.offline import SearchBot
from games.play import play_game

Z95 = 1.959963984540054  # the standard normal's 97.5% quantile
TARGET = 0.05  # a seat is balanced when its share is within 1/n +- TARGET
SEARCH_KIND = "ismcts"  # the hosted search bot (games.mcts.searcher), bounded by iterations
SEARCH_ITERATIONS = 200  # its default budget a move in a balance run
WITHIN, OUTSIDE, UNDECIDED = "within", "outside", "undecided"  # SeatShare.verdict

Maker = Callable[[int], Bot | SearchBot]


@dataclass(frozen=True)
class Kind:
    """A bot kind of `game` as a maker that pickles (for `workers` > 1): `kind(seed)` builds a
    fresh bot. `ismcts` is `games.mcts.searcher` with `iterations` a move and no time limit; the
    other kinds are `games.catalog.bot_makers(game, rules)`'s."""

    game: str
    kind: str
    iterations: int = SEARCH_ITERATIONS
    # The game over other data (a variant file being measured): the bot reads that data. None:
    # the catalog's rules. Give the same object to `seat_shares`.
    rules: Rules[Any] | None = None

    def __call__(self, seed: int) -> Bot | SearchBot:
        from games.catalog import SPECS, bot_makers

        if self.kind == SEARCH_KIND:
            from games.mcts import searcher

            return searcher(SPECS[self.game], seed=seed, iterations=self.iterations, seconds=None, rules=self.rules)
        return bot_makers(self.game, self.rules)[self.kind](seed)

    def bound(self) -> Rules[Any] | None:
        """The rules its bots play: `rules`, else the catalog's."""
        from games.catalog import rules_for

        return self.rules if self.rules is not None else rules_for(self.game)


def kinds_for(game: str, rules: Rules[Any] | None = None) -> list[str]:
    """Every bot kind a balance run can seat in `game` (over `rules`, when given): the rule-based
    ones, then ismcts when the game has bots over those rules."""
    from games.catalog import SPECS, bot_makers

    spec = SPECS.get(game)
    searchable = rules is None or (spec is not None and spec.bots_for(rules) is not None)
    return [*bot_makers(game, rules), *([SEARCH_KIND] if searchable else [])]


class SeatShare(msgspec.Struct, frozen=True, kw_only=True):
    """One seat's figures over the games played."""

    seat: int
    bot: str
    games: Annotated[int, msgspec.Meta(ge=1)]
    wins: Annotated[float, msgspec.Meta(ge=0)]  # a win shared by k seats counts 1/k
    share: float  # wins / games
    low: float  # the 95% Wilson score interval on `share`
    high: float
    mean_score: float
    within_target: bool  # |share - fair_share| <= target
    # What the 95% interval says of the target: "within" (it lies inside fair_share +- target),
    # "outside" (it lies wholly beyond one edge) or "undecided" (it crosses an edge: more games).
    # A share within the target by its point value alone is not evidence of balance.
    verdict: str = ""


class SeatTable(msgspec.Struct, frozen=True, kw_only=True):
    """Every seat of one player count."""

    game: str
    num_players: Annotated[int, msgspec.Meta(ge=1)]
    games: Annotated[int, msgspec.Meta(ge=1)]
    seed_prefix: str
    fair_share: float  # 1 / num_players
    target: float  # the allowed distance of a share from the fair share
    seats: list[SeatShare]
    balanced: bool  # every seat within_target
    # The same figures by turn position (`seat` is then the position, 0 = first to play); `bot`
    # is the line-up's entry when every position had the same one, else "mixed".
    positions: list[SeatShare] = msgspec.field(default_factory=list)
    positions_balanced: bool = True
    # The number of the first game (games first_game .. first_game + games - 1 were played).
    first_game: Annotated[int, msgspec.Meta(ge=0)] = 0


def wilson(successes: float, trials: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion; (0, 1) for no trials."""
    if trials <= 0:
        return 0.0, 1.0
    p = successes / trials
    z2 = z * z
    denom = 1 + z2 / trials
    centre = (p + z2 / (2 * trials)) / denom
    half = z / denom * math.sqrt(max(p * (1 - p) / trials + z2 / (4 * trials * trials), 0.0))
    # It contains p in exact arithmetic; at p = 0 or 1 float error could leave p just outside.
    return max(0.0, min(p, centre - half)), min(1.0, max(p, centre + half))


def seat_shares(
    rules: Rules[Any],
    makers: Sequence[Maker],
    num_players: int,
    games: int,
    seed_prefix: str = "balance",
    progress: Callable[[int], None] | None = None,
    names: Sequence[str] = (),
    target: float = TARGET,
    workers: int = 1,
    first: int = 0,
    keep: Callable[[KeptGame], None] | None = None,
) -> SeatTable:
    """Play `games` seeded games of `num_players` seats, seat s played by `makers[s % len(makers)]`
    (`maker(bot_seed)` builds a fresh bot), and tabulate each seat. `names` labels the line-up's
    entries (default "bot0", "bot1", ...); `progress(done)` is called after each game, in game
    order; `workers` > 1 plays in that many processes (picklable makers, e.g. `Kind`). `first`
    numbers the first game: games first .. first + games - 1 are played, so that a run can be
    extended by another (`pool` sums them into the table of the whole range). `keep(game)` is called
    with each game as played, in game order, before `progress`."""
    if not makers:
        raise ValueError("the line-up needs at least one bot maker")
    if not rules.min_players <= num_players <= rules.max_players:
        raise ValueError(f"{rules.name} takes {rules.min_players}-{rules.max_players} players, not {num_players}")
    if games < 1:
        raise ValueError(f"games must be at least 1, not {games}")
    if workers < 1:
        raise ValueError(f"workers must be at least 1, not {workers}")
    if first < 0:
        raise ValueError(f"the first game's number must be at least 0, not {first}")
    for maker in makers:
        # A bot over other rules than the games' would read other tile and card values (random
        # reads none).
        if isinstance(maker, Kind) and maker.kind != "random" and maker.bound() is not rules:
            raise ValueError(f"the {maker.kind} bot is bound to other rules than the games' ({rules.data_version})")
    labels = [names[k] if k < len(names) else f"bot{k}" for k in range(len(makers))]
    entry = [s % len(makers) for s in range(num_players)]
    wins = [0.0] * num_players
    scores = [0] * num_players
    at_wins = [0.0] * num_players
    at_scores = [0] * num_players
    at_bots: list[set[str]] = [set() for _ in range(num_players)]
    job = _Job(rules, tuple(makers), tuple(entry), num_players, seed_prefix, keep=keep is not None)
    for i, (winners, game_scores, order, commands) in enumerate(_outcomes(job, range(first, first + games), workers)):
        if keep is not None:
            assert commands is not None
            number = first + i
            kept = KeptGame(
                number=number,
                seed=job.seed(number),
                num_players=num_players,
                commands=commands,
                winners=winners,
                scores=game_scores,
            )
            keep(kept)
        for w in winners:
            wins[w] += 1 / len(winners)
            at_wins[order.index(w)] += 1 / len(winners)
        for s in range(num_players):
            scores[s] += game_scores[s]
            at_scores[order.index(s)] += game_scores[s]
            at_bots[order.index(s)].add(labels[entry[s]])
        if progress is not None:
            progress(i + 1)
    seat_bots = [labels[entry[s]] for s in range(num_players)]
    position_bots = [next(iter(b)) if len(b) == 1 else "mixed" for b in at_bots]
    return _table(
        rules.name,
        num_players,
        first,
        games,
        seed_prefix,
        target,
        (seat_bots, wins, scores),
        (position_bots, at_wins, at_scores),
    )


# Per seat (or position): the bot, the wins, the summed scores.
_Column = tuple[Sequence[str], Sequence[float], Sequence[int]]


def _table(
    game: str, n: int, first: int, games: int, prefix: str, target: float, seats: _Column, positions: _Column
) -> SeatTable:
    fair = 1 / n
    by_seat = [_share(s, seats[0][s], games, seats[1][s], seats[2][s], fair, target) for s in range(n)]
    by_position = [_share(p, positions[0][p], games, positions[1][p], positions[2][p], fair, target) for p in range(n)]
    return SeatTable(
        game=game,
        num_players=n,
        games=games,
        first_game=first,
        seed_prefix=prefix,
        fair_share=fair,
        target=target,
        seats=by_seat,
        balanced=all(s.within_target for s in by_seat),
        positions=by_position,
        positions_balanced=all(s.within_target for s in by_position),
    )


def pool(tables: Sequence[SeatTable]) -> SeatTable:
    """The table of runs that extend one another (`seat_shares(..., first=)`): the same game,
    player count, seed prefix, target and line-up, over consecutive ranges of game numbers, in any
    order. It is the table one run over the whole range gives (up to float rounding in the wins,
    which sum 1/k shares in another order). Anything else is refused: shares over other data, bots
    or games are not one measurement."""
    if not tables:
        raise ValueError("nothing to pool")
    for t in tables:
        check_table(t)
    ordered = sorted(tables, key=lambda t: t.first_game)
    head = ordered[0]
    for t in ordered[1:]:
        same = (t.game, t.num_players, t.seed_prefix, t.target) == (
            head.game,
            head.num_players,
            head.seed_prefix,
            head.target,
        )
        if not same or [s.bot for s in t.seats] != [s.bot for s in head.seats]:
            raise ValueError(
                f"{t.game}, {t.num_players} players, prefix {t.seed_prefix!r} (games {_span(t)}) is not "
                f"the run of {head.game}, {head.num_players} players, prefix {head.seed_prefix!r} with the same line-up"
            )
    for before, after in itertools.pairwise(ordered):
        if after.first_game != before.first_game + before.games:
            raise ValueError(f"games {_span(before)} and {_span(after)} are not consecutive (a gap or an overlap)")
    games = sum(t.games for t in ordered)

    def column(rows: Callable[[SeatTable], list[SeatShare]]) -> _Column:
        n = head.num_players
        bots = [
            rows(head)[k].bot if all(rows(t)[k].bot == rows(head)[k].bot for t in ordered) else "mixed"
            for k in range(n)
        ]
        wins = [math.fsum(rows(t)[k].wins for t in ordered) for k in range(n)]
        scores = [sum(round(rows(t)[k].mean_score * t.games) for t in ordered) for k in range(n)]
        return bots, wins, scores

    return _table(
        head.game,
        head.num_players,
        head.first_game,
        games,
        head.seed_prefix,
        head.target,
        column(lambda t: t.seats),
        column(lambda t: t.positions),
    )


def check_table(t: SeatTable) -> None:
    """Raise ValueError unless `t` is a table as `seat_shares` writes it: a row per seat and per
    position, each over its games (one read back from a document may not be)."""
    n = t.num_players
    if len(t.seats) != n or len(t.positions) != n:
        raise ValueError(
            f"games {_span(t)} of {n} players hold {len(t.seats)} seat and {len(t.positions)} position rows, "
            f"not {n} of each (a table without positions was written before they were counted)"
        )
    if any(s.games != t.games or s.wins > t.games for s in (*t.seats, *t.positions)):
        raise ValueError(f"games {_span(t)} of {n} players: a row counts other games than its table")


def _span(t: SeatTable) -> str:
    return f"{t.first_game}-{t.first_game + t.games - 1}"


# One game's outcome: (winners, scores by seat, seats in order of play, its (seat, command) list
# when the run keeps its games, else None).
Outcome = tuple[list[int], list[int], list[int], list[tuple[int, Any]] | None]


class KeptGame(msgspec.Struct, frozen=True, kw_only=True):
    """One game of a run, as `seat_shares(keep=)` hands it over: enough to play it again."""

    number: int  # i in the seed
    seed: str  # f"{seed_prefix}-{num_players}-{number}"
    num_players: int
    commands: list[tuple[int, Any]]  # (seat, command), in the order played
    winners: list[int]
    scores: list[int]


@dataclass(frozen=True)
class _Job:
    rules: Rules[Any]
    makers: tuple[Maker, ...]
    entry: tuple[int, ...]
    num_players: int
    seed_prefix: str
    keep: bool = False

    def play(self, i: int) -> Outcome:
        n = self.num_players
        bots = [self.makers[self.entry[s]](i * n + s) for s in range(n)]
        played = play_game(self.rules, bots, self.seed(i), n)
        commands = played.history if self.keep else None
        return list(played.result.winners), list(played.result.scores), list(played.turn_order), commands

    def seed(self, i: int) -> str:
        return game_seed(self.seed_prefix, self.num_players, i)


def game_seed(seed_prefix: str, num_players: int, number: int) -> str:
    """The seed of game `number` of `num_players` in a run with `seed_prefix`."""
    return f"{seed_prefix}-{num_players}-{number}"


def _outcomes(job: _Job, games: range, workers: int) -> Iterator[Outcome]:
    """Every game's outcome, in game order: here, or from `workers` processes."""
    if workers == 1:
        for i in games:
            yield job.play(i)
        return
    # Spawned, not forked: the caller may run threads (a progress bar's), and a fork copies their
    # locks. Each worker gets the job once and then only game numbers.
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=_adopt, initargs=(job,)) as executor:
        yield from executor.map(_play_adopted, games)


_ADOPTED: _Job | None = None


def _adopt(job: _Job) -> None:
    """A worker's start: keep the job, over this process's own copy of a catalog game's rules
    (unpickling made a new one, and the catalog's carries what is cached per rules object, such as
    a native core's tables), the bots bound to the job's rules rebound with it. A variant (of data or
    of code) stays the unpickled copy: it may carry a catalog version's name with other values."""
    global _ADOPTED
    from games.catalog import catalog_twin

    mine = job.rules
    same = catalog_twin(mine)
    if same is not None:
        makers = tuple(
            dataclasses.replace(m, rules=same) if isinstance(m, Kind) and m.rules is mine else m for m in job.makers
        )
        job = dataclasses.replace(job, rules=same, makers=makers)
    _ADOPTED = job


def _play_adopted(i: int) -> Outcome:
    assert _ADOPTED is not None, "the worker was not given its job"
    return _ADOPTED.play(i)


def _share(seat: int, bot: str, games: int, wins: float, scores: int, fair: float, target: float) -> SeatShare:
    share = wins / games
    low, high = wilson(wins, games)
    return SeatShare(
        seat=seat,
        bot=bot,
        games=games,
        wins=wins,
        share=share,
        low=low,
        high=high,
        mean_score=scores / games,
        # a little slack for float error: 0.3 - 1/4 is 0.04999...
        within_target=abs(share - fair) <= target + 1e-9,
        verdict=verdict(low, high, fair, target),
    )


def verdict(low: float, high: float, fair: float, target: float) -> str:
    """What an interval [low, high] says of a share's distance from `fair` (SeatShare.verdict)."""
    lo, hi = fair - target - 1e-9, fair + target + 1e-9
    if lo <= low and high <= hi:
        return WITHIN
    if high < lo or low > hi:
        return OUTSIDE
    return UNDECIDED

"""The `dicestream` command line (typer + rich)."""

from __future__ import annotations

import asyncio
import functools
import os
import signal
import sys
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import msgspec
import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from contracts import codec
from contracts import lifecycle as lc
from contracts.registry import command_type
from contracts.schema import documents, render
from dicestream import errors, ops
from dicestream import openings as openings_cli
from dicestream.acl import acl_app
from dicestream.errors import InputError, NotFound, Refused, Unreachable
from dicestream.gateway_cli import gateway_app
from dicestream.loop import run as run_loop
from services import logs
from services.client import Client
from services.config import Settings, from_env
from services.eventstore.keys import Keys, valid_game_id
from services.redis_conn import connect
from services.redis_server import EmbeddedRedis, resolve_url

if TYPE_CHECKING:
    from dicestream.kept import Keeper

app = typer.Typer(
    help="Event-sourced board game referee over Redis Streams.",
    no_args_is_help=True,
    # Exit codes and one-line errors for every command (dicestream/errors.py).
    cls=errors.Group,
    epilog=errors.EPILOG,
    pretty_exceptions_show_locals=False,
)
projector_app = typer.Typer(help="Read models.", no_args_is_help=True)
app.add_typer(projector_app, name="projector")
app.add_typer(gateway_app, name="gateway")
app.add_typer(acl_app, name="acl")
app.add_typer(ops.dead_app, name="dead")
app.command()(ops.status)
app.command()(openings_cli.openings)
console = Console()
DATA_DIR = Path(os.environ.get("DICESTREAM_DATA", ".dicestream"))
Json = Annotated[bool, typer.Option("--json", help="print the result as JSON (docs/cli.md)")]


@app.callback()
def _options(
    debug: Annotated[
        bool, typer.Option("--debug", envvar="DICESTREAM_DEBUG", help="show the traceback of a failure")
    ] = False,
) -> None:
    errors.set_debug(debug)


def _settings() -> Settings:
    return from_env()  # a ConfigError exits 2 with its one line (dicestream/errors.py)


def _setup(quiet: bool = False) -> tuple[Settings, str, EmbeddedRedis | None]:
    settings = _settings()
    logs.configure("warning" if quiet else settings.log_level, settings.log_format)
    url, server = resolve_url(settings.redis_url, DATA_DIR / "redis")
    errors.using(url)
    if server is not None:
        # On stderr: stdout is for results (--json).
        Console(stderr=True).print(
            f"[dim]No Redis configured or answering: started an embedded one at {url} (data in {server.dir}).[/]"
        )
    return settings, url, server


def _game_id(game_id: str) -> str:
    if not valid_game_id(game_id):
        raise InputError(f"bad game id {game_id!r}: letters, digits, '_', '.', '-', at most 100, no braces")
    return game_id


def _progress_bar(out: Console, disable: bool) -> Progress:
    """The bar of the commands that play games (tournament, balance): what, bar, n of N, time."""
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=out,
        disable=disable,
    )


def _titles(names: list[str]) -> list[str]:
    from games.catalog import GAMES

    unknown = [t for t in names if t not in GAMES]
    if unknown:
        raise InputError(f"unknown game type {', '.join(map(repr, unknown))}; known: {', '.join(GAMES)}")
    return names


def _run(coro: Any) -> Any:
    return run_loop(coro)


@app.command()
def up() -> None:
    """Run every service (referee, projector, turns, bot runner, gateway) in this process until Ctrl-C."""
    settings, url, _server = _setup()
    if _run(_serve(settings, url, None)):
        raise typer.Exit(1)


@app.command()
def serve(name: Annotated[str, typer.Argument(help="referee | projector | turns | botrunner | gateway")]) -> None:
    """Run one service (what each container runs). Needs REDIS_URL: a service never starts an
    embedded Redis. Exits 1 when a loop keeps failing, so that the orchestrator restarts it."""
    from dicestream.runtime import SERVICES

    if name not in SERVICES:
        raise typer.BadParameter(f"one of {', '.join(SERVICES)}")
    settings = _settings()
    logs.configure(settings.log_level, settings.log_format)
    if not settings.redis_url:
        raise InputError(
            "REDIS_URL is not set: `serve` needs the Redis (or any Redis Cluster node) to use, "
            "e.g. REDIS_URL=redis://user:password@redis:6379/0"
        )
    errors.using(settings.redis_url)
    if _run(_serve(settings, settings.redis_url, (name,))):
        raise typer.Exit(1)


async def _ping(url: str) -> None:
    import redis.asyncio as aredis

    probe = aredis.Redis.from_url(url, socket_connect_timeout=2.0, socket_timeout=2.0)
    try:
        await probe.ping()
    finally:
        await probe.aclose()


async def _serve(settings: Settings, url: str, names: tuple[str, ...] | None) -> str:
    """Serve until SIGINT/SIGTERM (returns "") or until a supervisor gives up (returns why)."""
    from dicestream.gateway_cli import check_env
    from dicestream.runtime import SERVICES, running
    from services.supervise import patiently

    if "gateway" in (names or SERVICES):
        check_env()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    # A service (re)started while Redis restarts or fails over waits for it (DICESTREAM_START_WAIT_S),
    # as its loops do, rather than exiting at once; past that, or for a wrong password, it exits 3.
    await patiently(lambda: _ping(url), "redis", timeout_s=settings.start_wait_s)
    async with running(settings, url, names or SERVICES, health=True) as run:
        health = f"; health on {run.health.url}" if run.health else ""
        # One line a script can read, whatever the terminal's width.
        console.print(
            f"[green]running {', '.join(names or SERVICES)} on {url}[/]{health} (Ctrl-C stops)", soft_wrap=True
        )
        if "gateway" in run.services:
            gw = run.services["gateway"].url
            console.print(f"gateway: [bold]{gw}[/] (API: /openapi.json, docs/http.md)", soft_wrap=True)
            console.print(f"web page: [bold]{gw}/[/] (every game; a game's board at {gw}/games/GAME)", soft_wrap=True)
        stopping = asyncio.ensure_future(stop.wait())
        fatal = asyncio.ensure_future(run.fatal())
        await asyncio.wait([stopping, fatal], return_when=asyncio.FIRST_COMPLETED)
        stopping.cancel()
        fatal.cancel()
        reason = fatal.result() if fatal.done() and not fatal.cancelled() else ""
        if reason:
            console.print(f"[red]stopping: {escape(reason)}[/]")
        return reason


@app.command()
def demo(
    games: Annotated[int, typer.Option(help="games to play of each title")] = 1,
    players: Annotated[str, typer.Option(help="player counts, cycled over all the games")] = "2,3,4",
    bots: Annotated[str, typer.Option(help="bot kinds, cycled over the seats")] = "greedy,random",
    titles: Annotated[str, typer.Option(help="game types, comma-separated (default: every game)")] = "",
    web: Annotated[
        str, typer.Option(help="where the web page listens while the demo runs: HOST:PORT (port 0: a free one), or off")
    ] = "127.0.0.1:0",
    keep: Annotated[
        bool, typer.Option("--keep", help="keep every service and the page running after the games")
    ] = False,
    as_json: Json = False,
) -> None:
    """Start everything, play full games of every title between reference bots over the bus, show
    scores and each game's page (a gateway on a free port while the demo runs; --keep: until Ctrl-C)."""
    from games.catalog import GAMES

    names = _titles([t for t in titles.split(",") if t] or list(GAMES))
    counts, kinds = _counts(players), _bots(bots, names)
    page = _web(web)
    settings, url, _server = _setup(quiet=True)
    _run(_demo(settings, url, names, games, counts, kinds, as_json, page, keep))


def _web(web: str) -> Any:
    """The gateway settings for the demo's page (None: no page)."""
    from services.gateway.settings import from_env, parse_addr

    if web.strip().lower() in ("off", "no", "none", ""):
        return None
    try:
        host, port = parse_addr(web)
        return msgspec.structs.replace(from_env(), host=host, port=port)
    except ValueError as exc:
        raise InputError(f"--web {web!r}: {exc}") from None


def _counts(players: str) -> list[int]:
    try:
        return [int(p) for p in players.split(",")]
    except ValueError:
        raise InputError(f"--players {players!r}: expected player counts like 2,3,4") from None


def _bots(bots: str, titles: list[str]) -> list[str]:
    from services.bots import kinds_for

    kinds = [b.strip() for b in bots.split(",") if b.strip()]
    if not kinds:
        raise InputError("--bots: give at least one bot kind, e.g. greedy,random")
    for title in titles:
        known = kinds_for(title)
        unknown = [b for b in kinds if b not in known]
        if unknown:
            raise InputError(f"no bot {', '.join(map(repr, unknown))} for {title}; known: {', '.join(known)}")
    return kinds


async def _demo(
    settings: Settings,
    url: str,
    titles: list[str],
    games: int,
    counts: list[int],
    kinds: list[str],
    as_json: bool = False,
    web: Any = None,
    keep: bool = False,
) -> None:
    from dicestream.runtime import running
    from games.catalog import GAMES
    from services.gateway.app import GatewayService

    table = Table(title="Final scores")
    for col in ("game", "seats", "scores", "winners", "events"):
        table.add_column(col)
    first = ""
    played: list[Any] = []
    async with running(settings, url) as run:
        gateway = None
        if web is not None:
            gateway = GatewayService(settings, url, web)
            await gateway.start()
        base = gateway.url if gateway is not None else None
        if base and not as_json:
            console.print(f"web page: [bold]{base}/[/] (open a game below to watch it live)", soft_wrap=True)

        def created(game_id: str) -> None:
            if base and not as_json:
                console.print(f"  {game_id}: {base}/games/{game_id}", soft_wrap=True, highlight=False)

        try:
            for k, title in enumerate(titles):
                rules = GAMES[title]
                # Cycle the counts over all games, skipping what a title does not take.
                mine = [n for n in counts if rules.min_players <= n <= rules.max_players] or [rules.min_players]
                mine = mine[k % len(mine) :] + mine[: k % len(mine)]
                _, records = await _tournament(
                    run, settings, title, kinds, games, mine, f"playing {title}", as_json, created
                )
                played += records
                for r in records:
                    table.add_row(
                        r.game_id,
                        ", ".join(r.seats),
                        " / ".join(map(str, r.scores)),
                        ", ".join(f"seat {w} ({r.seats[w]})" for w in r.winners),
                        str(r.version),
                    )
                first = first or records[0].game_id
            if as_json:
                errors.emit(
                    {
                        "games": [
                            {**msgspec.to_builtins(r), **({"url": f"{base}/games/{r.game_id}"} if base else {})}
                            for r in played
                        ],
                        **({"web": base} if base else {}),
                    }
                )
                return
            console.print(table)
            console.print(
                f"Replay a game with [bold]dicestream replay {first}[/], check it with "
                f"[bold]dicestream verify {first}[/], tail it with [bold]dicestream watch {first}[/]."
            )
            if base is None:
                console.print("See it on a board: [bold]dicestream up[/], then open /games/GAME on the URL it prints.")
            elif keep:
                console.print(f"Every game on its board: [bold]{base}/[/] (Ctrl-C stops)", soft_wrap=True)
                await _until_stopped()
            else:
                console.print(
                    "The page stopped with the demo: [bold]dicestream demo --keep[/] keeps it open after the games; "
                    "[bold]dicestream up[/] serves these games too (open /games/GAME on the URL it prints).",
                    soft_wrap=True,
                )
        finally:
            if gateway is not None:
                await gateway.stop()


async def _until_stopped() -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()


async def _play(
    settings: Settings,
    url: str,
    game_type: str,
    bots: list[str],
    games: int,
    players: list[int],
    title: str,
    quiet: bool = False,
) -> Any:
    from dicestream.runtime import running

    async with running(settings, url) as run:
        return await _tournament(run, settings, game_type, bots, games, players, title, quiet)


async def _tournament(
    run: Any,
    settings: Settings,
    game_type: str,
    bots: list[str],
    games: int,
    players: list[int],
    title: str,
    quiet: bool = False,
    created: Any = None,
) -> Any:
    from services.eventstore.redis_store import RedisEventStore
    from services.tournament import tournament

    client = Client(run.client(), Keys(settings.prefix), settings.shards)
    started = time.monotonic()
    with _progress_bar(console, disable=quiet) as progress:  # --json: stdout is for the document
        task = progress.add_task(title, total=games)
        result = await tournament(
            client,
            run.bots.runner,
            RedisEventStore(client.redis, Keys(settings.prefix)),
            game_type=game_type,
            bots=bots,
            games=games,
            players=players,
            progress=lambda done: progress.update(task, completed=done),
            **({"created": created} if created is not None else {}),
        )
    if not quiet:
        console.print(f"{games} {game_type} games in {time.monotonic() - started:.1f} s")
    await client.close()
    return result


@app.command()
def tournament(
    game: Annotated[str, typer.Option(help="game type")] = "sentient",
    bots: Annotated[str, typer.Option(help="bot kinds, comma-separated")] = "greedy,random",
    games: Annotated[int, typer.Option(help="number of games")] = 20,
    players: Annotated[str, typer.Option(help="player counts, cycled")] = "2",
    as_json: Json = False,
) -> None:
    """Play N games between bot kinds over the bus (seats rotated) and print a results table."""
    _titles([game])
    kinds, counts = _bots(bots, [game]), _counts(players)
    settings, url, _ = _setup(quiet=True)
    started = time.monotonic()
    standings, records = _run(_play(settings, url, game, kinds, games, counts, f"{game} tournament", as_json))
    if as_json:
        seconds = round(time.monotonic() - started, 3)
        errors.emit({"game": game, "games": games, "seconds": seconds, "standings": standings, "records": records})
        return
    table = Table(title=f"{game}: {games} games")
    for col in ("bot", "rating", "games", "wins", "win rate", "mean score", "win rate by seat", "refused", "timed out"):
        table.add_column(col)
    for st in sorted(standings, key=lambda s: -s.rating):
        seats = sorted(st.games_by_seat.items())
        by_seat = " ".join(f"{seat}:{st.wins_by_seat.get(seat, 0) / n:.2f}" for seat, n in seats)
        table.add_row(
            st.bot,
            f"{st.rating:.1f} ({st.rating_mu:.1f} ± {st.rating_sigma:.1f})",
            str(st.games),
            f"{st.wins:g}",
            f"{st.wins / max(st.games, 1):.2f}",
            f"{st.mean_score:.1f}",
            by_seat,
            str(st.refused),
            str(st.timed_out),
        )
    console.print(table)


def _balance_counts(players: str, game: str) -> list[int]:
    from games.catalog import GAMES

    rules = GAMES[game]
    if not players.strip():
        return list(range(rules.min_players, rules.max_players + 1))
    counts = _counts(players)
    bad = [n for n in counts if not rules.min_players <= n <= rules.max_players]
    if bad:
        raise InputError(
            f"--players {players!r}: {game} takes {rules.min_players}-{rules.max_players} players, "
            f"not {', '.join(map(str, bad))}"
        )
    return list(dict.fromkeys(counts))


def _balance_makers(bots: str, game: str, iterations: int, rules: Any) -> tuple[list[str], list[Any]]:
    from games.balance import Kind, kinds_for
    from games.catalog import GAMES

    kinds = [b.strip() for b in bots.split(",") if b.strip()]
    if not kinds:
        raise InputError("--bots: give at least one bot kind, e.g. greedy or greedy,random")
    bound = None if rules is GAMES[game] else rules
    known = kinds_for(game, bound)
    unknown = [b for b in kinds if b not in known]
    if unknown:
        raise InputError(f"no bot {', '.join(map(repr, unknown))} for {game}; known: {', '.join(known)}")
    return kinds, [Kind(game, k, iterations, bound) for k in kinds]


def _balance_rules(game: str, data: str | None) -> Any:
    """The rules a balance run measures: the game's, or the same rules over a data file (a variant
    being tuned). A variant must carry a data_version of its own, so that figures name their data."""
    from games.catalog import EARLIER, SPECS, VARIANT_DATA_ENV, VARIANTS, catalog_twin

    spec = SPECS[game]
    if data is None:
        return spec.rules
    if spec.with_data is None:
        raise InputError(f"--data: {game} reads no other data file")
    path = Path(data)
    if not path.is_file():
        raise InputError(f"--data {data}: no such file (or not a file)")
    try:
        rules = spec.with_data(path)
    except Exception as exc:  # whatever the game's loader refuses (TOML, a value out of range) names itself
        raise InputError(f"--data {data}: {exc}") from exc
    known = {spec.rules.data_version, *(v for g, v in [*EARLIER, *VARIANTS] if g == game)}
    if rules.data_version not in known:
        return rules
    twin = catalog_twin(rules)
    if twin is not None and hasattr(rules, "data"):
        return twin
    raise InputError(
        f"--data {data}: it names its data {rules.data_version!r}, which this build's {game} data (or a "
        f"variant named in {VARIANT_DATA_ENV}) is called, with other values; give the variant a data_version "
        "of its own"
    )


def _balance_keeper(folder: Path, game: str, kinds: list[str], rules: Any) -> Keeper:
    """--keep: the referee plays each game again over the run's data (with --data, a variant's or an
    earlier version's, whose logs then name that data)."""
    from dicestream.kept import Keeper
    from games.catalog import SPECS, admit_variant
    from games.spec import GameSpecError

    if rules is SPECS[game].rules:
        return Keeper(folder, game, kinds)
    try:
        return Keeper(folder, game, kinds, admit_variant(rules))
    except GameSpecError as exc:  # _balance_rules refuses these first; a variant set in the environment
        raise InputError(f"--keep: {exc}") from exc


def _advance(progress: Progress, task: Any, done: int) -> None:
    progress.update(task, completed=done)


@app.command()
def balance(
    game: Annotated[str, typer.Argument(help="game type")],
    players: Annotated[
        str, typer.Option(help="player counts, comma-separated (default: every count the game takes)")
    ] = "",
    games: Annotated[int, typer.Option(help="games per player count")] = 200,
    bots: Annotated[str, typer.Option(help="bot line-up, cycled over the seats (greedy: every seat greedy)")] = (
        "greedy"
    ),
    seed: Annotated[str, typer.Option(help="seed prefix: game i of n players is seeded SEED-n-i")] = "balance",
    iterations: Annotated[int, typer.Option(help="ismcts seats: iterations a move (no time limit)")] = 200,
    workers: Annotated[int, typer.Option(help="processes playing the games (same figures whatever the number)")] = 1,
    data: Annotated[
        str | None,
        typer.Option(help="a component data file to measure instead of the game's own (a variant being tuned)"),
    ] = None,
    first_game: Annotated[
        int, typer.Option(help="the first game's number: extends a run that played games 0 to N-1 with N")
    ] = 0,
    pool: Annotated[
        list[str] | None,
        typer.Option(help="play nothing: sum the --json documents of runs extending one another (repeat it)"),
    ] = None,
    keep: Annotated[
        Path | None,
        typer.Option(
            help="write every game played into this folder as the referee's log (the file `export` writes: "
            "replay, verify, audit, import read it)"
        ),
    ] = None,
    any_code: Annotated[
        bool,
        typer.Option(
            "--any-code",
            help="with --pool: sum parts played by different code too (the sum then says code 'mixed')",
        ),
    ] = False,
    as_json: Json = False,
) -> None:
    """Seat balance, offline (no Redis): each seat's win share with its 95% (Wilson) interval over
    N seeded games per player count, every seat played by the bot line-up (games/balance.py).
    A long run can be played in parts (--first-game) and their documents summed (--pool)."""
    from dicestream.fingerprint import code_fingerprint
    from games.balance import SEARCH_KIND, TARGET, seat_shares

    _titles([game])
    if pool:
        playing = {
            "--games": games != 200,
            "--bots": bots != "greedy",
            "--seed": seed != "balance",
            "--iterations": iterations != 200,
            "--workers": workers != 1,
            "--data": data is not None,
            "--first-game": first_game != 0,
            "--keep": keep is not None,
        }
        if any(playing.values()):
            given = ", ".join(k for k, v in playing.items() if v)
            raise InputError(f"--pool plays nothing: {given} would be ignored (the parts' documents say theirs)")
        _balance_pooled(game, players, pool, as_json, any_code)
        return
    if any_code:
        raise InputError("--any-code sums parts: it goes with --pool")
    counts = _balance_counts(players, game)
    if iterations < 1:
        raise InputError(f"--iterations {iterations}: search at least one iteration a move")
    rules = _balance_rules(game, data)
    kinds, makers = _balance_makers(bots, game, iterations, rules)
    if games < 1:
        raise InputError(f"--games {games}: play at least one game")
    if workers < 1:
        raise InputError(f"--workers {workers}: play in at least one process")
    if first_game < 0:
        raise InputError(f"--first-game {first_game}: games are numbered from 0")
    keeper = None
    if keep is not None:
        keeper = _balance_keeper(keep, game, kinds, rules)
        keeper.prepare(keeper.seeds(counts, seed, first_game, games))
    tables = []
    started = time.monotonic()
    data_file = None if data is None else Path(data)
    # Workers import the code afresh for each count: taken before and after, a change on disk
    # during the run shows.
    code = code_fingerprint(game, data_file)
    # --json: stdout holds the document alone; a run of hours still shows its bar on a terminal
    # (the descriptor's own answer: rich's would say yes to a log file under FORCE_COLOR).
    with _progress_bar(Console(stderr=True), disable=as_json and not sys.stderr.isatty()) as progress:
        for n in counts:
            task = progress.add_task(f"{game}, {n} players", total=games)
            tables.append(
                seat_shares(
                    rules,
                    makers,
                    n,
                    games,
                    seed,
                    progress=functools.partial(_advance, progress, task),
                    names=kinds,
                    workers=workers,
                    first=first_game,
                    keep=keeper,
                )
            )
    run = _BalanceRun(
        game=game,
        data_version=rules.data_version,
        games=games,
        first_game=first_game,
        bots=kinds,
        seed=seed,
        iterations=iterations if SEARCH_KIND in kinds else None,
        target=TARGET,
        seconds=round(time.monotonic() - started, 3),
        code=_code_after(code, code_fingerprint(game, data_file)),
        tables=tables,
    )
    _balance_out(run, as_json)


class _BalanceRun(msgspec.Struct, kw_only=True):
    """`dicestream balance --json`'s document."""

    game: str
    data_version: str
    games: int | None  # per player count; None when pooled counts differ
    # The number of the first game played (the lowest over the counts in a pooled document); 0 in
    # documents written before runs could start elsewhere.
    first_game: int = 0
    bots: list[str]
    seed: str
    iterations: int | None  # ismcts seats' budget a move; None without them
    interval: str = "wilson-95"
    target: float
    seconds: float  # playing time (summed over pooled runs)
    # The code that played it (dicestream.fingerprint); MIXED_CODE when parts of it were played by
    # different code; None in documents written before it was recorded, and in a sum with such a part.
    code: str | None = None
    tables: list[Any]  # games.balance.SeatTable


MIXED_CODE = "mixed"


def _code_after(before: str, after: str) -> str:
    if before == after:
        return before
    errors.fail(
        f"warning: the code changed on disk during the run ({before}, then {after}): "
        f"its document says code {MIXED_CODE!r}"
    )
    return MIXED_CODE


def _balance_pooled(game: str, players: str, files: list[str], as_json: bool, any_code: bool) -> None:
    """`balance --pool`: the runs' tables summed per player count (games.balance.pool)."""
    from games.balance import SeatTable, check_table, pool

    runs: list[_BalanceRun] = []
    parts: dict[int, list[tuple[str, SeatTable]]] = {}  # per player count: (file, table)
    for name in files:
        try:
            part = msgspec.json.decode(Path(name).read_bytes(), type=_BalanceRun)
            tables = msgspec.convert(part.tables, list[SeatTable])
        except OSError as exc:
            raise InputError(f"--pool {name}: {exc.strerror or exc}") from exc
        except msgspec.DecodeError as exc:  # ValidationError included
            raise InputError(f"--pool {name}: not a `dicestream balance --json` document ({exc})") from exc
        for t in tables:
            try:
                check_table(t)
            except ValueError as exc:
                raise InputError(f"--pool {name}: {exc}") from exc
            parts.setdefault(t.num_players, []).append((name, t))
        runs.append(part)
    head = runs[0]
    reference = next((r for r in runs if r.code is not None), None)  # the first part naming its code
    for name, r in zip(files, runs, strict=True):
        if r.game != game:
            raise InputError(f"--pool {name}: a run of {r.game}, not {game}")
        differ = [
            f"{what} {mine} ({files[0]}: {theirs})"
            for what, mine, theirs in (
                ("data", r.data_version, head.data_version),
                ("bots", ",".join(r.bots), ",".join(head.bots)),
                ("seed", r.seed, head.seed),
                ("iterations", r.iterations, head.iterations),
            )
            if mine != theirs
        ]
        if not any_code and r.code == MIXED_CODE:
            differ.append(
                f"code {MIXED_CODE}: its games were played by different code (--any-code sums it all the same)"
            )
        elif not any_code and reference is not None and r.code is not None and r.code != reference.code:
            differ.append(
                f"code {r.code} ({files[runs.index(reference)]}: {reference.code}): played by another build "
                "(--any-code sums them all the same)"
            )
        if differ:
            raise InputError(f"--pool {name}: not the same measurement: {'; '.join(differ)}")
    wanted = _balance_counts(players, game) if players.strip() else sorted(parts)
    missing = [n for n in wanted if n not in parts]
    if missing:
        raise InputError(f"--players: no run in --pool has {', '.join(map(str, missing))} players")
    tables = []
    for n in wanted:
        try:
            tables.append(pool([t for _, t in parts[n]]))
        except ValueError as exc:
            spans = ", ".join(f"{name} games {t.first_game}-{t.first_game + t.games - 1}" for name, t in parts[n])
            raise InputError(f"--pool, {n} players ({spans}): {exc}") from exc
    sizes = {t.games for t in tables}
    run = _BalanceRun(
        game=game,
        data_version=head.data_version,
        games=sizes.pop() if len(sizes) == 1 else None,
        first_game=min(t.first_game for t in tables),
        bots=head.bots,
        seed=head.seed,
        iterations=head.iterations,
        target=head.target,
        seconds=round(sum(r.seconds for r in runs), 3),
        code=_pooled_code([r.code for r in runs]),
        tables=tables,
    )
    _balance_out(run, as_json)


# The interval's verdict on the target (games.balance.verdict).
_VERDICT_STYLE = {"within": "[green]within[/]", "outside": "[red]outside[/]", "undecided": "[yellow]undecided[/]"}


def _pooled_code(codes: list[str | None]) -> str | None:
    known = set(codes) - {None}
    if len(known) > 1 or MIXED_CODE in known:
        return MIXED_CODE
    return None if None in codes else known.pop()


def _balance_out(run: _BalanceRun, as_json: bool) -> None:
    if as_json:
        errors.emit(msgspec.to_builtins(run))
        return
    for t in run.tables:
        span = f"games {t.first_game}-{t.first_game + t.games - 1}" if t.first_game else f"{t.games} games"
        table = Table(
            title=f"{run.game} ({run.data_version}), {t.num_players} players: {span}, fair share "
            f"{t.fair_share:.3f} (target ±{t.target:g})"
        )
        # Six narrow columns: an 80-column terminal (or a pipe) shows each row on one line.
        for col in ("", "bot", "share", "95% interval", "mean", "in target"):
            table.add_column(col)
        for label, rows in (("seat", t.seats), ("position", t.positions)):
            for s in rows:
                table.add_row(
                    f"{label} {s.seat}",
                    s.bot,
                    f"{s.share:.3f}",
                    f"{s.low:.3f}-{s.high:.3f} {_VERDICT_STYLE.get(s.verdict, s.verdict)}",
                    f"{s.mean_score:.1f}",
                    "[green]yes[/]" if s.within_target else "[red]no[/]",
                )
            if label == "seat":
                table.add_section()
        console.print(table)
    per_count = "" if run.games is None else f"{run.games} games per count "
    played = {None: ", code not recorded", MIXED_CODE: ", code mixed"}.get(run.code, f", code {run.code}")
    console.print(f"{per_count}in {run.seconds:.1f} s (seed prefix {run.seed!r}{played})")


@app.command()
def new(
    game_type: Annotated[str, typer.Argument()] = "sentient",
    players: Annotated[int, typer.Option()] = 2,
    game_id: Annotated[str | None, typer.Option()] = None,
    move_timeout: Annotated[float | None, typer.Option(help="seconds per decision")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print the reply and the game id as one JSON line")] = False,
    timeout: Annotated[float, typer.Option(help="seconds to wait for the referee's answer")] = 10.0,
) -> None:
    """Create a game and print its id (needs a running referee: `dicestream up`).

    Exits 1 when the referee refuses it; 2 for an unknown game type or a bad game id, before
    sending anything; 3 when no referee answers within --timeout."""
    _titles([game_type])
    gid = _game_id(game_id) if game_id is not None else uuid.uuid4().hex[:12]
    settings, url, _ = _setup(quiet=True)
    create = lc.CreateGame(game_type=game_type, num_players=players, move_timeout_s=move_timeout)
    reply = _run(_call(settings, url, gid, create, timeout_s=timeout))
    if as_json:
        errors.emit({"game_id": gid, **msgspec.json.decode(msgspec.json.encode(reply))})
    else:
        _print_reply(reply)
        if reply.outcome.status == "accepted":
            console.print(f"game id: [bold]{gid}[/]")
    _refused(reply)


@app.command()
def send(
    game_id: str,
    command: Annotated[str, typer.Argument(help="type, e.g. lifecycle.JoinSeat or sentient.Pass")],
    payload: Annotated[str, typer.Argument(help="JSON payload")] = "{}",
    seat: Annotated[int | None, typer.Option()] = None,
    token: Annotated[str | None, typer.Option(envvar="DICESTREAM_TOKEN")] = None,
    expected_version: Annotated[int | None, typer.Option()] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print the reply as one JSON line")] = False,
    timeout: Annotated[float, typer.Option(help="seconds to wait for the referee's answer")] = 10.0,
) -> None:
    """Send one command and print its outcome (and the seat token for JoinSeat).

    Exits 1 when the referee refuses it; 2 for an unknown type, a payload that is not that type's
    JSON or a bad game id; 3 when no referee answers within --timeout."""
    _game_id(game_id)
    cls = command_type(command)
    if cls is None:
        raise InputError(f"unknown command type {command!r} (e.g. lifecycle.JoinSeat, sentient.Pass)")
    try:
        body = msgspec.json.decode(payload.encode(), type=cls)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise InputError(f"payload of {command}: {exc}") from None
    settings, url, _ = _setup(quiet=True)
    reply = _run(
        _call(
            settings, url, game_id, body, seat=seat, token=token, expected_version=expected_version, timeout_s=timeout
        )
    )
    _print_reply(reply, as_json)
    _refused(reply)


async def _call(
    settings: Settings, url: str, game_id: str, payload: msgspec.Struct, timeout_s: float = 10.0, **kw: Any
) -> Any:
    client = Client(connect(url), Keys(settings.prefix), settings.shards)
    try:
        return await client.call(game_id, payload, timeout_s=timeout_s, **kw)
    except TimeoutError:
        raise Unreachable(
            f"no answer from a referee within {timeout_s:g} s on {errors.shown_url(url)} "
            "(is one running for this prefix and shard count? dicestream status)"
        ) from None
    finally:
        await client.close()


def _refused(reply: Any) -> None:
    """Exit 1, with one line, when the referee refused the command."""
    o = reply.outcome
    if o.status != "accepted":
        raise Refused(f"{o.command_type} {o.status}: {o.rule}: {o.text}")


def _print_reply(reply: Any, as_json: bool = False) -> None:
    if as_json:
        sys.stdout.write(msgspec.json.encode(reply).decode() + "\n")
        return
    o = reply.outcome
    colour = "green" if o.status == "accepted" else "red"
    console.print(f"[{colour}]{o.status}[/] {o.command_type} at version {o.judged_at_version} -> {o.to_version}")
    if o.rule:
        console.print(f"  rule {o.rule}: {o.text}\n  {o.detail}")
    if reply.token:
        # Never wrapped: scripts cut the token from this line.
        console.print(f"  seat token (keep it secret): {reply.token}", soft_wrap=True)


@app.command()
def watch(
    game_id: str,
    follow: Annotated[bool, typer.Option(help="keep waiting for new events")] = True,
    as_json: Annotated[bool, typer.Option("--json", help="each event envelope whole, one JSON line each")] = False,
    wait: Annotated[bool, typer.Option(help="wait for a game that does not exist yet (default: exit 4)")] = False,
) -> None:
    """Tail a game's public stream (what every audience may see).

    Exits 4 at once for a game that does not exist, unless --wait."""
    _game_id(game_id)
    settings, url, _ = _setup(quiet=True)
    run_loop(_watch(settings, url, game_id, follow, as_json, wait), interrupt_at_once=True)


async def _watch(
    settings: Settings, url: str, game_id: str, follow: bool, as_json: bool = False, wait: bool = False
) -> None:
    client = connect(url)
    stream = Keys(settings.prefix).public(game_id)
    last = "0-0"
    while not await client.exists(stream):
        if not wait:
            await client.aclose()
            raise NotFound(
                f"no game {game_id!r} in {errors.shown_url(url)} (prefix {settings.prefix}); --wait waits for it"
            )
        await asyncio.sleep(0.2)
    while True:
        got: Any = await client.xread({stream: last}, count=200, block=1000 if follow else None)
        if not got:
            if not follow:
                break
            continue
        for _, entries in got:
            for entry_id, fields in entries:
                last = entry_id.decode()
                env = codec.decode_event(fields[b"data"], game_id, codec.entry_version(entry_id))
                if as_json:
                    sys.stdout.write(codec.encode(env).decode() + "\n")
                    sys.stdout.flush()
                    continue
                payload = bytes(env.payload).decode()
                console.print(
                    f"[cyan]{entry_id.decode():>8}[/] [bold]{escape(env.type)}[/] {escape(payload[:160])}",
                    highlight=False,
                    soft_wrap=True,
                )
                if env.type == "lifecycle.SeedRevealed" and not follow:
                    break
    await client.aclose()


@app.command()
def schema(
    out: Annotated[Path, typer.Option(help="directory to write")] = Path("schema"), as_json: Json = False
) -> None:
    """Write the JSON Schema of every command, event and protocol message."""
    for name, doc in documents().items():
        path = out / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(render(doc))
    if as_json:
        errors.emit({"out": str(out), "documents": sorted(documents())})
        return
    console.print(f"wrote {len(documents())} schema documents to {out}/")


@app.command()
def games(as_json: Json = False) -> None:
    """The games this build runs (games.catalog, plus DICESTREAM_GAME_PACKAGES): name, players,
    versions, whether search bots get a determinizer."""
    from games.catalog import SPECS

    rows: list[dict[str, Any]] = [
        {
            "name": name,
            "title": spec.title,
            "players": [spec.rules.min_players, spec.rules.max_players],
            "rules_version": spec.rules.rules_version,
            "data_version": spec.rules.data_version,
            "determinizer": spec.determinize is not None,
            "package": type(spec.rules).__module__.rpartition(".")[0],
        }
        for name, spec in SPECS.items()
    ]
    if as_json:
        errors.emit({"games": rows})
        return
    table = Table("name", "title", "players", "rules", "data", "determinizer")
    for row in rows:
        low, high = row["players"]
        table.add_row(
            str(row["name"]), str(row["title"]), f"{low}-{high}", str(row["rules_version"]),
            str(row["data_version"]), "yes" if row["determinizer"] else "-",
        )  # fmt: skip
    console.print(table)


@app.command()
def screenshots(
    check: Annotated[bool, typer.Option("--check", help="only say whether the committed ones are stale")] = False,
) -> None:
    """Screenshots of the web page's boards (docs/screenshots, shown in README.md) from seeded games,
    in headless Chromium through a gateway that needs no Redis; --check exits 1 if they are stale."""
    try:
        from dicestream import screenshots as shots
    except ImportError as exc:  # pragma: no cover - the dev extra is not installed
        raise InputError(f"needs the dev extra (pip install -e '.[dev]'): {exc}") from None
    raise typer.Exit(shots.main(["--check"] if check else []))


async def _history(settings: Settings, url: str, game_id: str) -> Any:
    from services import history
    from services.archive import ArchiveDamaged, ArchivedGame, ArchiveFolder, ArchiveReads

    client = connect(url)
    folder = ArchiveFolder(settings.archive_dir) if settings.archive_dir else None
    store = ArchiveReads(client, Keys(settings.prefix), folder)
    try:
        hist = await history.load(store, game_id)
    except ArchivedGame as exc:
        raise InputError(str(exc)) from None
    except ArchiveDamaged as exc:
        raise Refused(f"{game_id}: {exc}") from None
    finally:
        await store.close()
        await client.aclose()
    if not hist.events:
        raise NotFound(f"no game {game_id!r} in {errors.shown_url(url)} (prefix {settings.prefix})")
    return hist


def _parse_export(path: Path) -> Any:
    from services import history

    try:
        return history.parse_export(path.read_bytes().splitlines())
    except ValueError as exc:
        raise InputError(f"{path}: not a dicestream game file: {exc}") from None


def _source(target: str) -> Any:
    """A game from an export file (no Redis needed) or, failing that, from Redis by id."""
    path = Path(target)
    if path.is_file():
        return _parse_export(path)[1]
    if not valid_game_id(target):
        raise InputError(f"{target!r} is neither a file nor a valid game id")
    settings, url, _ = _setup(quiet=True)
    return _run(_history(settings, url, target))


@app.command()
def replay(
    target: Annotated[str, typer.Argument(help="game id, or an export file")],
    to: Annotated[int | None, typer.Option("--to", help="stop after this version")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="JSON lines for machines")] = False,
) -> None:
    """Rebuild a game from its log and tell it step by step (public information only)."""
    from services import history

    steps, state = history.replay(_source(target), to)
    if as_json:
        for step in steps:
            sys.stdout.write(msgspec.json.encode(step).decode() + "\n")
        return
    table = Table(title=f"{state.game_id}: {state.game_type}, version {state.version}, {state.status}")
    for col in ("v", "event", "seat", "what happened"):
        table.add_column(col, overflow="fold")
    for step in steps:
        what = step.summary + (f"  [bold]scores {step.scores}[/]" if step.scores else "")
        table.add_row(str(step.version), step.type, "" if step.seat is None else str(step.seat), what)
    console.print(table)


@app.command("export")
def export_game(
    game_id: str,
    out: Annotated[Path | None, typer.Option(help="file to write (default GAME_ID.jsonl)")] = None,
    allow_running: Annotated[
        bool, typer.Option(help="export a game not over yet (the file holds its secrets)")
    ] = False,
    as_json: Json = False,
) -> None:
    """Write a game, with every event and command outcome, as a self-contained JSON Lines file.

    The file is the private log (seed, deck order, seat token hashes): for a finished game those
    are revealed anyway; a running game's export is refused unless --allow-running."""
    from services import history

    _game_id(game_id)
    settings, url, _ = _setup(quiet=True)
    hist = _run(_history(settings, url, game_id))
    if not allow_running and history.fold(hist).status != "over":
        raise Refused(f"{game_id} is not over: its export would reveal its seed and deck order (--allow-running)")
    lines = history.export_lines(hist)
    path = out or Path(f"{game_id}.jsonl")
    path.write_bytes(b"\n".join(lines) + b"\n")
    if as_json:
        errors.emit(
            {
                "path": str(path),
                "game_id": game_id,
                "records": len(lines) - 1,
                "events": len(hist.events),
                "commands": len(hist.outcomes),
            }
        )
        return
    console.print(f"wrote {len(lines) - 1} records to {path}")


@app.command()
def archive(
    game_ids: Annotated[list[str] | None, typer.Argument(help="games to archive (default: every finished one)")] = None,
    folder: Annotated[
        Path | None, typer.Option("--dir", help="archive folder (default DICESTREAM_ARCHIVE_DIR)")
    ] = None,
    older_than: Annotated[
        float, typer.Option(help="only games whose last event is at least this many seconds old")
    ] = 3600.0,
    limit: Annotated[int, typer.Option(help="archive at most this many games")] = 10_000,
    dry_run: Annotated[bool, typer.Option(help="list what would be archived, change nothing")] = False,
    as_json: Json = False,
) -> None:
    """Move finished games out of Redis into the archive folder (gzip JSON Lines, one file a game).

    Each game's file is written and read back before its keys are replaced by a small marker;
    replay, verify, audit, export and the web page read it from the folder afterwards. A game
    that changed during its export is left for the next run. Without game ids: the games the read
    models list as over, finished at least --older-than seconds ago (run it from cron)."""
    from services.archive import ArchiveFolder, archive_game, finished_before

    for g in game_ids or []:
        _game_id(g)
    settings, url, _ = _setup(quiet=True)
    where = folder or (Path(settings.archive_dir) if settings.archive_dir else None)
    if where is None:
        raise InputError("no archive folder: pass --dir or set DICESTREAM_ARCHIVE_DIR")
    archive_folder = ArchiveFolder(where)

    async def go() -> list[Any]:
        client = connect(url)
        keys = Keys(settings.prefix)
        try:
            before = int((time.time() - older_than) * 1000)
            ids = list(game_ids or await finished_before(client, keys, settings.shards, before))[:limit]
            if dry_run:
                return [{"game_id": g, "status": "would archive"} for g in ids]
            done = []
            with Progress(console=Console(stderr=True), disable=as_json or not ids, transient=True) as bar:
                task = bar.add_task("archiving", total=len(ids))
                for g in ids:
                    done.append(await archive_game(client, keys, settings.shards, archive_folder, g))
                    bar.advance(task)
            return done
        finally:
            await client.aclose()

    results = _run(go())
    rows = [r if isinstance(r, dict) else msgspec.to_builtins(r) for r in results]
    if as_json:
        errors.emit({"folder": str(where), "games": rows})
        return
    archived = [r for r in rows if r["status"] == "archived"]
    for r in rows:
        if r["status"] not in ("archived", "would archive"):
            console.print(f"[yellow]{r['game_id']}: not archived ({r['status']})[/]")
    size = sum(r.get("file_bytes", 0) for r in archived)
    verb = "would archive" if dry_run else "archived"
    console.print(f"{verb} {len(archived) if not dry_run else len(rows)} games into {where} ({size:,} bytes)")


@app.command("import")
def import_game(
    file: Path,
    game_id: Annotated[str | None, typer.Option(help="new id (default: the file's, suffixed -imported)")] = None,
    as_json: Json = False,
) -> None:
    """Append an exported game to this installation as a new game with the same history.

    Exits 1 when the installation refuses it (a game with that id exists), 2 for a bad file."""
    from services import history
    from services.eventstore.redis_store import RedisEventStore

    if not file.is_file():
        raise InputError(f"{file}: no such file")
    header, hist = _parse_export(file)
    new_id = _game_id(game_id or f"{header.game_id}-imported")
    settings, url, _ = _setup(quiet=True)

    async def go() -> int:
        client = connect(url)
        try:
            store = RedisEventStore(client, Keys(settings.prefix))
            return await history.import_history(store, history.rebase(hist, new_id))
        except ValueError as exc:
            raise Refused(str(exc)) from None
        finally:
            await client.aclose()

    events = _run(go())
    if as_json:
        errors.emit({"game_id": new_id, "events": events, "file": str(file)})
        return
    console.print(f"imported {events} events as game [bold]{new_id}[/]")


@app.command()
def verify(target: Annotated[str, typer.Argument(help="game id, or an export file")], as_json: Json = False) -> None:
    """Check a log: well formed, every event re-derived from its command and the seed, result right.

    Exits 1 on FAIL, 4 for a game that does not exist."""
    from services import history

    verdict = history.verify(_source(target))
    if as_json:
        errors.emit({"ok": verdict.ok, **msgspec.to_builtins(verdict)})
        if not verdict.ok:
            raise typer.Exit(1)
        return
    if verdict.ok:
        seed = (
            "the revealed seed matches its commitment and reproduces every roll and shuffle"
            if verdict.seed_verified
            else "seed not revealed yet (game running)"
        )
        console.print(f"[green]OK[/] {verdict.game_id}: {verdict.events} events, {verdict.commands} commands; {seed}")
        return
    for f in verdict.findings:
        console.print(f"[red]FAIL[/] {f.check} at version {f.version}: {f.problem}")
    raise typer.Exit(1)


@app.command()
def audit(
    target: Annotated[str, typer.Argument(help="game id, or an export file")],
    version: Annotated[int | None, typer.Option(help="the command that wrote this version")] = None,
    command: Annotated[str | None, typer.Option(help="a command id")] = None,
    rejudge: Annotated[bool, typer.Option(help="judge the command again under today's rules")] = False,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Show a disputed command: the state before, what was asked, the verdict and rule, what was legal."""
    from services import history

    if (version is None) == (command is None):
        raise InputError("give exactly one of --version or --command")
    hist = _source(target)
    try:
        report = history.audit(hist, history.find_outcome(hist, version, command), rejudge)
    except LookupError as exc:
        raise NotFound(f"{exc} in game {hist.game_id}") from None
    if as_json:
        sys.stdout.write(msgspec.json.encode(report).decode() + "\n")
        return
    console.rule(f"audit of {report.command['command_id']} in {report.game_id}")
    console.print("[bold]command as received[/]", report.command)
    console.print("[bold]verdict[/]", report.verdict)
    console.print(f"[bold]state before[/] (version {report.state_before['version']})", report.state_before.get("view"))
    console.print(f"[bold]legal actions then[/] ({len(report.legal_actions)})", report.legal_actions[:20])
    console.print("[bold]resulting events[/]", report.events)
    if report.rejudged is not None:
        colour = "green" if report.rejudged["agrees"] else "red"
        console.print(f"[{colour}]re-judged under today's rules[/]", report.rejudged)


@projector_app.command("rebuild")
def projector_rebuild(as_json: Json = False) -> None:
    """Drop the read models and rebuild them from every game's log."""
    settings, url, _ = _setup(quiet=True)

    async def go() -> int:
        from services.projector.app import Projector

        client = connect(url)
        with Progress(
            TextColumn("{task.description}"),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
            disable=as_json,
        ) as progress:
            task = progress.add_task("rebuilding read models, games", total=None)
            n = await Projector(client, Keys(settings.prefix), settings.shards).rebuild_all(
                lambda done: progress.update(task, completed=done)
            )
        await client.aclose()
        return n

    rebuilt = _run(go())
    if as_json:
        errors.emit({"games": rebuilt})
        return
    console.print(f"rebuilt read models of {rebuilt} games")


BENCH_SECTIONS = ("main", "cluster", "takeover", "durability", "pipeline")


@app.command()
def bench(
    quick: Annotated[bool, typer.Option(help="smaller sizes, for a smoke run")] = False,
    repeats: Annotated[int, typer.Option()] = 3,
    section: Annotated[
        str,
        typer.Option(
            help="main: (a)-(f) on REDIS_URL; cluster: (b) on a 3-master cluster with 1-3 referees; takeover: "
            "SIGKILLed referees; durability: appendfsync always, WAIT 1; pipeline: (e), every service a "
            "process, bots playing in a closed loop, against (b). All but main start their own "
            "redis-server processes on loopback."
        ),
    ] = "main",
) -> None:
    """Measure the referee against raw Redis baselines (see bench/README.md)."""
    if section not in BENCH_SECTIONS:
        raise typer.BadParameter(f"one of {', '.join(BENCH_SECTIONS)}", param_hint="--section")
    if section == "main":
        from bench.run import main as run_bench

        settings, url, _ = _setup(quiet=True)
        run_bench(url, settings, quick=quick, repeats=repeats, console=console)
        return
    from bench import sections_cli

    sections_cli.run(section, quick=quick, repeats=repeats, console=console)


def main() -> None:  # pragma: no cover - entry point
    app()


if __name__ == "__main__":  # pragma: no cover
    main()

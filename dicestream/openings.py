"""`dicestream openings`: what each turn position took first, and how often the seats that took a
thing won, over finished games' logs (services/openings.py)."""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated

import msgspec
import typer
from rich.console import Console
from rich.table import Table

from dicestream import errors
from dicestream.errors import InputError

console = Console()


def _files(paths: list[Path]) -> list[Path]:
    """Every game file named, a folder standing for the game files under it: a `balance --keep`
    folder (`*.jsonl`) or an archive folder (`*/<game id>.jsonl.gz`)."""
    out: list[Path] = []
    for path in paths:
        if path.is_dir():
            found = sorted([*path.rglob("*.jsonl"), *path.rglob("*.jsonl.gz")])
            if not found:
                raise InputError(f"{path}: no game files (*.jsonl, *.jsonl.gz) under this folder")
            out += found
        elif path.is_file():
            out.append(path)
        else:
            raise InputError(f"{path}: no such file or folder")
    # A file named and found again in a folder named is one game.
    return list({p.resolve(): p for p in out}.values())


def openings(
    paths: Annotated[
        list[Path],
        typer.Argument(
            help="game files (`export`; `archive`'s .jsonl.gz) or folders of them (`balance --keep`, the archive)"
        ),
    ],
    first: Annotated[int, typer.Option(help="an opening is the first N things a seat took")] = 2,
    min_share: Annotated[
        float, typer.Option(help="list a thing taken in at least this share of the games (0 to 1)")
    ] = 0.1,
    top: Annotated[int, typer.Option(help="openings shown per position in the table (--json: all)")] = 6,
    game: Annotated[
        str | None, typer.Option(help="read only the games of this type (without it, games of several are an error)")
    ] = None,
    players: Annotated[
        int | None, typer.Option(help="read only the games of this player count (without it, several are an error)")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print the result as JSON (docs/cli.md)")] = False,
) -> None:
    """What each turn position took first (a tile, a card, an upgrade, a truck) and how often it won,
    and for each thing taken, how often the seats that took it won: over finished games' logs.

    Positions as `dicestream balance` counts them; a win shared by k seats counts 1/k."""
    from services import history
    from services.openings import NotComparable, report

    if first < 1:
        raise InputError("--first: at least 1")
    if not 0 <= min_share <= 1:
        raise InputError("--min-share: a share between 0 and 1")

    def histories() -> Iterator[history.History]:
        # One game at a time: an archive may hold more games than fit in memory at once.
        for path in _files(paths):
            try:
                data = path.read_bytes()
            except OSError as exc:
                raise InputError(f"{path}: {exc.strerror or exc}") from None
            try:
                if path.suffix == ".gz":
                    data = gzip.decompress(data)
                yield history.parse_export(data.splitlines())[1]
            except (ValueError, EOFError, zlib.error, gzip.BadGzipFile) as exc:
                raise InputError(f"{path}: not a dicestream game file: {exc}") from None

    try:
        r = report(histories(), first=first, min_share=min_share, game=game, players=players)
    except NotComparable as exc:
        raise InputError(str(exc)) from None
    if as_json:
        errors.emit(msgspec.to_builtins(r))
        return
    left = f"; {r.unfinished} unfinished left out" if r.unfinished else ""
    left += f"; {r.other} of another game or player count left out" if r.other else ""
    console.print(
        f"[bold]{r.game}[/], {r.players} players: {r.games} finished games{left} ({', '.join(r.data_versions)})"
    )
    won = Table(title="Win share by turn position (0 plays first)")
    for name in ("position", "wins", "share", "mean score"):
        won.add_column(name, justify="right")
    for p in r.positions:
        won.add_row(str(p.position), f"{p.wins:g}", f"{p.share:.3f}", f"{p.mean_score:.1f}")
    console.print(won)
    opened = Table(title=f"Openings: the first {r.first} things taken, by position (top {top})")
    for name, justify in (("position", "right"), ("opening", "left"), ("games", "right"), ("won", "right")):
        opened.add_column(name, justify=justify)  # type: ignore[arg-type]
    shown: dict[int, int] = {}
    for o in r.openings:
        shown[o.position] = shown.get(o.position, 0) + 1
        if shown[o.position] <= top:
            opened.add_row(str(o.position), " + ".join(o.items) or "(nothing)", str(o.games), f"{o.share:.2f}")
    console.print(opened)
    items = Table(title=f"Taken in at least {r.min_share:g} of the games: how often a seat that took it won")
    for name in ("thing", "games", "takers", "by position", "won", "won by position"):
        items.add_column(name, justify="left" if name == "thing" else "right")
    for i in r.items:
        by = " / ".join(f"{w / t:.2f}" if t else "–" for w, t in zip(i.wins_by_position, i.by_position, strict=True))
        items.add_row(i.item, str(i.games), str(i.takers), " / ".join(map(str, i.by_position)), f"{i.share:.2f}", by)
    console.print(items)
    wrote = Table(title="Events naming a seat, a game on average, by position")
    wrote.add_column("event", justify="left")
    wrote.add_column("games", justify="right")
    for position in range(r.players):
        wrote.add_column(str(position), justify="right")
    for e in r.events:
        wrote.add_row(e.event, str(e.games), *(f"{x:.2f}" for x in e.by_position))
    console.print(wrote)

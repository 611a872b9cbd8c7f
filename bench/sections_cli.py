"""`dicestream bench --section cluster|takeover|durability|pipeline`: the sections that start their own
Redis servers (see bench/README.md); each also has its own command line (`python -m bench.<name>`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
from rich.console import Console

from dicestream.loop import run as run_loop

RESULTS = Path(__file__).resolve().parent / "results"


def run(section: str, *, quick: bool, repeats: int, console: Console) -> Any:
    if section == "cluster":
        from bench.cluster import run_cluster

        out: Any = run_loop(
            run_cluster(
                games=400 if quick else 1000, waves=3 if quick else 8, repeats=1 if quick else repeats, console=console
            )
        )
    elif section == "takeover":
        from bench.takeover import run_takeover, with_server

        async def both() -> list[dict[str, Any]]:
            runs = []
            for ttl in (3000,) if quick else (10000, 3000):

                async def one(url: str, ttl: int = ttl) -> dict[str, Any]:
                    return await run_takeover(url, kills=3 if quick else 10, ttl_ms=ttl, console=console)

                runs.append(await with_server(False, None, one))
            return runs

        out = run_loop(both())
    elif section == "durability":
        from bench.durability import run_durability

        out = run_loop(
            run_durability(
                rounds=1 if quick else repeats,
                games=400 if quick else 1000,
                waves=3 if quick else 8,
                seconds=3.0 if quick else 5.0,
                console=console,
            )
        )
    elif section == "pipeline":
        from bench.pipeline import FULL, QUICK, report, run_pipeline

        sizes = QUICK if quick else msgspec.structs.replace(FULL, repeats=repeats)
        out = run_loop(run_pipeline(sizes, console=console))
        report(out, console)
    else:
        raise ValueError(section)
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{section}.json"
    path.write_text(json.dumps(out, indent=2) + "\n")
    console.print(f"[dim]results written to {path}[/]")
    return out

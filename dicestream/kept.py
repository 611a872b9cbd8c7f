"""`dicestream balance --keep DIR`: every game of a balance run as the referee's log.

A balance run plays offline (games.balance), where nothing is written. To let a reader check a
figure game by game (who opened with what, why the first player lost), each game is played again
by the referee engine from the same seed with the same commands (services.selfplay.replay_commands)
and written as the file `dicestream export` writes: `dicestream replay`, `verify`, `audit` and
`import` read it, and an imported game is shown on the web page. The referee's result must be the
offline game's; a difference is a defect and stops the run.

A run over a variant's data (`--data`) has the referee create its games over that data: their logs
name the variant's data_version, and another process reads them once told where that data is
(DICESTREAM_VARIANT_DATA, games.catalog).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import structlog.testing

from dicestream.errors import InputError
from games.balance import KeptGame, game_seed
from games.base import Rules
from games.catalog import creating_over
from services.eventstore.keys import valid_game_id
from services.history import export_lines, fold
from services.selfplay import replay_commands


class Keeper:
    """Writes `DIR/GAME-SEED.jsonl` for each game handed over (`seat_shares(keep=)`)."""

    def __init__(self, folder: Path, game: str, kinds: Sequence[str], rules: Rules[Any] | None = None) -> None:
        """`rules`: the run's, when not the game's current ones (a variant's or an earlier data)."""
        self.folder = folder
        self.game = game
        self.kinds = list(kinds)
        self.rules = rules

    def game_id(self, seed: str) -> str:
        return f"{self.game}-{seed}"

    def path(self, seed: str) -> Path:
        return self.folder / f"{self.game_id(seed)}.jsonl"

    def seeds(self, counts: Sequence[int], seed_prefix: str, first: int, games: int) -> list[str]:
        return [game_seed(seed_prefix, n, i) for n in counts for i in range(first, first + games)]

    def prepare(self, seeds: Sequence[str]) -> None:
        """Refuse before anything is played (a run may take hours): a game id the referee would
        refuse, a folder that cannot be made or written, a file of another run in the way."""
        bad = next((s for s in seeds if not valid_game_id(self.game_id(s))), None)
        if bad is not None:
            raise InputError(
                f"--keep: the game id {self.game_id(bad)!r} is not one the referee takes "
                "(letters, digits, '_', '.', '-', at most 100): choose another --seed"
            )
        if self.folder.exists() and not self.folder.is_dir():
            raise InputError(f"--keep {self.folder}: not a folder")
        probe = self.folder / f".keep-{uuid.uuid4().hex}"
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            probe.touch()
            probe.unlink()
        except OSError as exc:
            raise InputError(f"--keep {self.folder}: {exc.strerror or exc}") from exc
        taken = [p for p in map(self.path, seeds) if p.exists()]
        if taken:
            more = f" and {len(taken) - 1} more" if len(taken) > 1 else ""
            raise InputError(f"--keep {self.folder}: {taken[0].name}{more} already there (keep each run apart)")

    def __call__(self, kept: KeptGame) -> None:
        names = [f"{self.kinds[s % len(self.kinds)]}-{s}" for s in range(kept.num_players)]
        game_id = self.game_id(kept.seed)
        # The in-memory referee logs every command at debug, which says nothing here and would
        # reach stdout (the --json document's) where nothing configured structlog; captured,
        # it is dropped but for errors. Capturing swaps no global configuration for good.
        over = contextlib.nullcontext() if self.rules is None else creating_over(self.rules)
        with over, structlog.testing.capture_logs() as entries:
            history = asyncio.run(replay_commands(self.game, kept.commands, kept.seed, names, game_id))
        errors = [e for e in entries if e.get("log_level") in ("error", "critical")]
        if errors:
            raise RuntimeError(f"{game_id}: the referee logged {errors[0]!r} playing the game again")
        result = fold(history).result
        if result is None or list(result.winners) != kept.winners or list(result.scores) != kept.scores:
            raise RuntimeError(
                f"{game_id}: the referee's result {result!r} is not the offline game's "
                f"(winners {kept.winners}, scores {kept.scores})"
            )
        path = self.path(kept.seed)
        part = path.with_name(path.name + ".part")
        part.write_bytes(b"\n".join(export_lines(history)) + b"\n")
        os.replace(part, path)  # a file that is there is whole

#!/usr/bin/env python3
"""Re-derive every die, shuffle, random pick and card draw of an exported dicestream game.

Written from docs/fairness.md alone, with the Python standard library only (3.11+: tomllib):

    python3 examples/check_fairness.py GAME.jsonl [--data FILE.toml] [--verbose]

Exit status 0 when every check matches, 1 otherwise (or when nothing could be checked).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
import tomllib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

# ---- the generator (docs/fairness.md section 3) ------------------------------------------------


class Generator:
    """SHA-256(key || 8-byte big-endian counter) blocks, read as 32-bit big-endian words."""

    def __init__(self, seed: str, version: int) -> None:
        self.key = hashlib.sha256(f"{seed}:{version}".encode()).digest()
        self.counter = 0
        self.buffer = b""
        self.words = 0

    def word(self) -> int:
        if not self.buffer:
            self.buffer = hashlib.sha256(self.key + self.counter.to_bytes(8, "big")).digest()
            self.counter += 1
        out, self.buffer = self.buffer[:4], self.buffer[4:]
        self.words += 1
        return int.from_bytes(out, "big")

    def below(self, n: int) -> int:
        if n < 1:
            raise ValueError(f"below({n})")
        limit = 2**32 - (2**32 % n)
        while True:
            x = self.word()
            if x < limit:
                return x % n

    def die(self) -> int:
        return self.below(6) + 1

    def shuffle(self, items: Sequence[Any]) -> list[Any]:
        out = list(items)
        for i in range(len(out) - 1, 0, -1):
            j = self.below(i + 1)
            out[i], out[j] = out[j], out[i]
        return out


# ---- the report ---------------------------------------------------------------------------------

CHECKS = ("commitment", "data", "log", "runs", "picks", "shuffles", "dice", "pile draws")
# Checks of outcomes (an event each, with how many values it holds); the others check the file.
DRAWN = ("picks", "shuffles", "dice", "pile draws")


class Report:
    def __init__(self) -> None:
        self.checked = dict.fromkeys(CHECKS, 0)
        self.failed = dict.fromkeys(CHECKS, 0)
        self.notes: dict[str, list[str]] = {k: [] for k in CHECKS}
        self.problems: list[str] = []
        self.items = dict.fromkeys(CHECKS, 0)

    def check(self, kind: str, ok: bool, where: str, problem: str = "", items: int = 1) -> bool:
        self.checked[kind] += 1
        self.items[kind] += items
        if not ok:
            self.failed[kind] += 1
            self.problems.append(f"{kind}: {where}: {problem}")
        return ok

    def note(self, kind: str, text: str) -> None:
        self.notes[kind].append(text)

    @property
    def ok(self) -> bool:
        random_checks = sum(self.checked[k] for k in ("picks", "shuffles", "dice"))
        return not any(self.failed.values()) and random_checks > 0


def where(env: dict[str, Any]) -> str:
    return f"v{env['version']} {env['type']}"


def same(report: Report, kind: str, env: dict[str, Any], field: str, recorded: Any, derived: Any) -> bool:
    items = len(derived) if isinstance(derived, list) else 1
    return report.check(
        kind,
        recorded == derived,
        where(env),
        f"{field} is {json.dumps(recorded)} but the seed gives {json.dumps(derived)}",
        items=items,
    )


def pile(report: Report, env: dict[str, Any], field: str, recorded: Any, expected: Any, source: str) -> bool:
    items = len(expected) if isinstance(expected, list) else 1
    return report.check(
        "pile draws",
        recorded == expected,
        where(env),
        f"{field} is {json.dumps(recorded)} but the top of {source} is {json.dumps(expected)}",
        items=items,
    )


# ---- the games (docs/fairness.md sections 6-9) --------------------------------------------------


class Game:
    """Follows one game's log: `event` is called for every game event of a run, in log order."""

    def __init__(self, data: dict[str, Any], num_players: int, report: Report) -> None:
        self.data = data
        self.n = num_players
        self.report = report

    def event(self, env: dict[str, Any], p: dict[str, Any], g: Generator) -> None:
        handler: Callable[[dict[str, Any], dict[str, Any], Generator], None] | None = getattr(
            self, "on_" + env["type"].split(".", 1)[1], None
        )
        if handler is not None:
            handler(env, p, g)

    def recorded_list(self, env: dict[str, Any], p: dict[str, Any], field: str) -> list[Any] | None:
        value = p.get(field)
        if not isinstance(value, list):
            self.report.check(
                "shuffles", False, where(env), f"{field} is withheld (a public copy?): nothing to compare"
            )
            return None
        return value


class Sentient(Game):
    def __init__(self, data: dict[str, Any], num_players: int, report: Report) -> None:
        super().__init__(data, num_players, report)
        self.sides = [s["id"] for s in data["board_sides"]]
        self.cards = [c["id"] for c in data["cards"]]
        self.investors = {r: [i["id"] for i in data["investors"] if i["round"] == r] for r in (1, 2, 3)}
        self.deck: list[str] = []
        self.discard: list[str] = []

    def on_BoardsDealt(self, env: dict[str, Any], p: dict[str, Any], g: Generator) -> None:
        same(self.report, "shuffles", env, "sides", p["sides"], g.shuffle(self.sides)[: self.n])

    def on_DeckShuffled(self, env: dict[str, Any], p: dict[str, Any], g: Generator) -> None:
        source = self.discard if p.get("from_discard") else self.cards
        derived = g.shuffle(source)
        cards = self.recorded_list(env, p, "cards")
        if cards is None:
            return
        same(self.report, "shuffles", env, "cards", cards, derived)
        self.report.check("log", p["size"] == len(cards), where(env), f"size {p['size']} but {len(cards)} cards")
        self.deck = list(cards)
        if p.get("from_discard"):
            self.discard = []

    def on_RoundStarted(self, env: dict[str, Any], p: dict[str, Any], g: Generator) -> None:
        if p["round"] == 1:
            same(self.report, "shuffles", env, "turn_order", p["turn_order"], g.shuffle(list(range(self.n))))
        same(self.report, "shuffles", env, "investors", p["investors"], g.shuffle(self.investors[p["round"]]))

    def on_FactoryRefilled(self, env: dict[str, Any], p: dict[str, Any], g: Generator) -> None:
        k = len(p["cards"])
        pile(self.report, env, "cards", p["cards"], self.deck[:k], "the deck")
        del self.deck[:k]

    def on_DiceRolled(self, env: dict[str, Any], p: dict[str, Any], g: Generator) -> None:
        same(self.report, "dice", env, f"seat {p['seat']} values", p["values"], [g.die() for _ in range(5)])

    def on_PlayerPassed(self, env: dict[str, Any], p: dict[str, Any], g: Generator) -> None:
        self.discard += p.get("discarded") or []

    def on_RoundEnded(self, env: dict[str, Any], p: dict[str, Any], g: Generator) -> None:
        self.discard += p.get("discarded") or []


class Prosperity(Game):
    def __init__(self, data: dict[str, Any], num_players: int, report: Report) -> None:
        super().__init__(data, num_players, report)
        tiles = data["tiles"]
        self.start = [t["id"] for t in tiles if "decade" not in t]
        decades = sorted({t["decade"] for t in tiles if "decade" in t})
        self.decades = [(d, [t["id"] for t in tiles if t.get("decade") == d]) for d in decades]
        self.deck: list[str] = []

    def on_TableSet(self, env: dict[str, Any], p: dict[str, Any], g: Generator) -> None:
        same(self.report, "picks", env, "first_player", p["first_player"], g.below(self.n))
        self.report.check(
            "log",
            p["research_board"] == self.start,
            where(env),
            "research_board is not the undated tiles in file order",
        )

    def on_DeckBuilt(self, env: dict[str, Any], p: dict[str, Any], g: Generator) -> None:
        tiles: list[str] = []
        backs: list[int] = []
        for decade, ids in self.decades:
            tiles += g.shuffle(ids)
            backs += [decade] * len(ids)
        recorded = self.recorded_list(env, p, "tiles")
        if recorded is None:
            return
        same(self.report, "shuffles", env, "tiles", recorded, tiles)
        self.report.check("log", p["backs"] == backs, where(env), f"backs {p['backs']} but the decades give {backs}")
        self.report.check("log", p["size"] == len(recorded), where(env), f"size {p['size']} but {len(recorded)} tiles")
        self.deck = list(recorded)

    def on_TileDrawn(self, env: dict[str, Any], p: dict[str, Any], g: Generator) -> None:
        pile(self.report, env, "tile", p["tile"], self.deck[0] if self.deck else None, "the deck")
        del self.deck[:1]


class Mechanica(Game):
    COPIES = 3

    def __init__(self, data: dict[str, Any], num_players: int, report: Report) -> None:
        super().__init__(data, num_players, report)
        self.improvements = [f"{k['id']}-{c}" for k in data["kinds"] for c in range(1, self.COPIES + 1)]
        self.blueprints = [b["id"] for b in data["blueprints"]]
        self.extras_count = data["setup"]["extras"]
        self.split = data["setup"]["blueprint_piles"][0]
        self.piles: dict[str, list[str]] = {"stack": [], "extras": []}
        self.blueprint_piles: list[list[str]] = []

    def on_GameSetUp(self, env: dict[str, Any], p: dict[str, Any], g: Generator) -> None:
        same(self.report, "picks", env, "first_player", p["first_player"], g.below(self.n))

    def on_ImprovementsShuffled(self, env: dict[str, Any], p: dict[str, Any], g: Generator) -> None:
        t = g.shuffle(self.improvements)
        extras, stack = t[: self.extras_count], t[self.extras_count :]
        rec_extras = self.recorded_list(env, p, "extras")
        rec_stack = self.recorded_list(env, p, "stack")
        if rec_extras is None or rec_stack is None:
            return
        same(self.report, "shuffles", env, "extras + stack", rec_extras + rec_stack, extras + stack)
        self.report.check(
            "log",
            (p["extras_size"], p["stack_size"]) == (len(rec_extras), len(rec_stack)),
            where(env),
            "extras_size/stack_size differ from the lists",
        )
        self.piles = {"stack": list(rec_stack), "extras": list(rec_extras)}

    def on_BlueprintsShuffled(self, env: dict[str, Any], p: dict[str, Any], g: Generator) -> None:
        b = g.shuffle(self.blueprints)
        piles = [b[: self.split], b[self.split :]]
        recorded = p.get("piles")
        if not isinstance(recorded, list):
            self.report.check("shuffles", False, where(env), "piles is withheld (a public copy?): nothing to compare")
            return
        same(self.report, "shuffles", env, "piles", recorded, piles)
        self.report.check(
            "log",
            p["face_up"] == [x[0] for x in recorded] and p["sizes"] == [len(x) for x in recorded],
            where(env),
            "face_up/sizes differ from the piles",
        )
        self.blueprint_piles = [list(x) for x in recorded]

    def on_ImprovementDrawn(self, env: dict[str, Any], p: dict[str, Any], g: Generator) -> None:
        source = self.piles.get(p["source"], [])
        pile(self.report, env, "improvement", p["improvement"], source[0] if source else None, p["source"])
        del source[:1]

    def on_BlueprintsReplaced(self, env: dict[str, Any], p: dict[str, Any], g: Generator) -> None:
        for x in self.blueprint_piles:
            x.append(x.pop(0))
        tops = [x[0] if x else None for x in self.blueprint_piles]
        pile(self.report, env, "face_up", p["face_up"], tops, "each blueprint pile")


class Artifacts(Game):
    DECKS = ("A", "B", "C", "D", "E")

    def __init__(self, data: dict[str, Any], num_players: int, report: Report) -> None:
        super().__init__(data, num_players, report)
        self.decks = {d: [a["id"] for a in data["assets"] if a["deck"] == d] for d in self.DECKS}
        self.underwater = [u["id"] for u in sorted(data["underwater"], key=lambda u: u["number"])]
        self.first_dice = data["table"]["first_player_dice"]
        self.market_slots = data["table"]["market_slots"]
        self.piles: dict[str, list[str]] = {d: [] for d in self.DECKS}

    def on_TableSet(self, env: dict[str, Any], p: dict[str, Any], g: Generator) -> None:
        self.report.check(
            "log", p["underwater"] == self.underwater, where(env), "underwater is not sorted by number, lowest on top"
        )

    def on_DeckShuffled(self, env: dict[str, Any], p: dict[str, Any], g: Generator) -> None:
        deck = p["deck"]
        derived = g.shuffle(self.decks.get(deck, []))
        cards = self.recorded_list(env, p, "cards")
        if cards is None:
            return
        same(self.report, "shuffles", env, f"deck {deck} cards", cards, derived)
        self.report.check("log", p["size"] == len(cards), where(env), f"size {p['size']} but {len(cards)} cards")
        self.piles[deck] = list(cards)

    def on_MarketRefilled(self, env: dict[str, Any], p: dict[str, Any], g: Generator) -> None:
        source = self.piles.setdefault(p["deck"], [])
        k = len(p["cards"])
        pile(self.report, env, "cards", p["cards"], source[:k], f"deck {p['deck']}")
        del source[:k]

    def on_FirstPlayerRolled(self, env: dict[str, Any], p: dict[str, Any], g: Generator) -> None:
        derived = [[g.die() for _ in range(self.first_dice)] for _ in p["seats"]]
        same(self.report, "dice", env, f"rolls of seats {p['seats']}", p["rolls"], derived)

    def on_TurnStarted(self, env: dict[str, Any], p: dict[str, Any], g: Generator) -> None:
        derived = [g.die() for _ in p["dice"]]
        same(self.report, "dice", env, f"seat {p['seat']} dice", p["dice"], derived)


GAMES: dict[str, type[Game]] = {
    "sentient": Sentient,
    "prosperity": Prosperity,
    "mechanica": Mechanica,
    "artifacts": Artifacts,
}


# ---- the file -----------------------------------------------------------------------------------


def read_export(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]:
    header: dict[str, Any] | None = None
    events: list[dict[str, Any]] = []
    outcomes: list[dict[str, Any]] = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"line {n}: not JSON ({exc})") from exc
        kind = record.get("type")
        if kind == "header":
            header = record
        elif kind == "event":
            events.append(record["event"])
        elif kind == "outcome":
            outcomes.append(record["outcome"])
        else:
            raise ValueError(f"line {n}: unknown record type {kind!r}")
    if header is None or header.get("format") != "dicestream-game":
        raise ValueError("no dicestream-game header line")
    return header, events, outcomes


def load_data(path: Path, game_type: str, recorded_version: str, report: Report) -> dict[str, Any] | None:
    try:
        raw = path.read_bytes()
        data = tomllib.loads(raw.decode("utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        report.check("data", False, str(path), f"cannot read: {exc}")
        return None
    version = str(data.get("data_version"))
    if game_type == "mechanica":
        version += "+" + hashlib.sha256(raw).hexdigest()[:12]
    ok = report.check(
        "data", version == recorded_version, str(path), f"is data version {version}, the game used {recorded_version}"
    )
    if ok:
        report.note("data", f"{path} is {version}")
    return data if ok else None


def split_runs(
    events: list[dict[str, Any]], outcomes: list[dict[str, Any]], report: Report
) -> list[tuple[int, list[dict[str, Any]], str]]:
    """(generator version, the run's events, what ran) for every run (section 4)."""
    runs: list[tuple[int, list[dict[str, Any]], str]] = []
    accepted = sorted((o for o in outcomes if o.get("status") == "accepted"), key=lambda o: o["judged_at_version"])
    covered = 0
    for o in accepted:
        lo, hi = o["judged_at_version"], o["to_version"]
        if not report.check(
            "log", lo == covered, f"outcome {o['command_id']}", f"judged at {lo}, but the log so far ends at {covered}"
        ):
            return runs
        span = events[lo:hi]
        ids = {e.get("command_id") for e in span}
        report.check(
            "log",
            ids <= {o["command_id"]},
            f"outcome {o['command_id']}",
            f"its events v{lo + 1}..v{hi} carry command ids {sorted(map(str, ids))}",
        )
        current: list[dict[str, Any]] = []
        for env in [*span, None]:
            if env is not None and not env["type"].startswith("lifecycle."):
                current.append(env)
                continue
            if current:
                before = events[current[0]["version"] - 2]["type"] if current[0]["version"] >= 2 else ""
                what = {
                    "lifecycle.GameStarted": "set-up",
                    "lifecycle.DefaultActionForced": "default action",
                }.get(before, o["command_type"])
                report.check(
                    "runs",
                    current[0]["version"] == lo + 1 or what != o["command_type"],
                    where(current[0]),
                    f"a run that neither starts command {o['command_id']} nor follows GameStarted/DefaultActionForced",
                )
                runs.append((current[0]["version"] - 1, current, what))
                current = []
        covered = hi
    report.check("log", covered == len(events), "outcomes", f"cover versions 1..{covered} of {len(events)}")
    return runs


def check(path: Path, data_path: Path | None, verbose: bool) -> Report:
    report = Report()
    try:
        header, events, outcomes = read_export(path)
    except (OSError, ValueError, KeyError) as exc:
        report.check("log", False, str(path), str(exc))
        return report
    versions = [e.get("version") for e in events]
    if not report.check("log", versions == list(range(1, len(events) + 1)), "events", "versions are not 1, 2, 3 ..."):
        return report
    if not events or events[0]["type"] != "lifecycle.GameCreated":
        report.check("log", False, "v1", "the first event is not lifecycle.GameCreated")
        return report
    created = events[0]["payload"]
    game_type, n = created["game_type"], created["num_players"]
    report.note("log", f"{len(events)} events, {len(outcomes)} outcomes")
    print(f"game {header['game_id']}: {game_type}, {n} players, {created['rules_version']}, {created['data_version']}")

    # Commitment and reveal (section 1).
    revealed = [e["payload"]["seed"] for e in events if e["type"] == "lifecycle.SeedRevealed"]
    seed = revealed[-1] if revealed else created.get("seed")
    if seed is None:
        report.check("commitment", False, "log", "no SeedRevealed and no GameCreated.seed: the seed is unknown")
        return report
    digest = hashlib.sha256(seed.encode()).hexdigest()
    report.check(
        "commitment",
        digest == created["seed_commitment"],
        "lifecycle.SeedRevealed" if revealed else "lifecycle.GameCreated.seed",
        f"sha256(seed) = {digest} but GameCreated.seed_commitment = {created['seed_commitment']}",
    )
    if revealed and created.get("seed") is not None:
        report.check("commitment", created["seed"] == seed, "v1 lifecycle.GameCreated", "seed differs from the reveal")
    if not revealed:
        report.note("commitment", "game not over: seed taken from GameCreated.seed (private)")
    else:
        report.note("commitment", f"sha256(revealed seed) = {digest[:16]}… = seed_commitment")

    cls = GAMES.get(game_type)
    if cls is None:
        report.check("data", False, "v1 lifecycle.GameCreated", f"unknown game type {game_type!r}")
        return report
    folder = Path(__file__).resolve().parent.parent / "games" / game_type / "data"
    # A game played on earlier data names its file: games/<game>/data/<data_version>.toml.
    version = str(created["data_version"]).split("+", 1)[0]
    earlier = folder / f"{version}.toml"
    named = re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", version) is not None  # a name, never a path
    default = earlier if named and earlier.is_file() else folder / f"{game_type}.toml"
    data = load_data(data_path or default, game_type, created["data_version"], report)
    if data is None:
        return report

    game = cls(data, n, report)
    runs = split_runs(events, outcomes, report)
    starts = [e for e in events if e["type"] == "lifecycle.GameStarted"]
    if starts:
        setup = [r for r in runs if r[2] == "set-up"]
        report.check(
            "runs",
            len(setup) == 1 and setup[0][0] == starts[0]["version"],
            "set-up",
            "no set-up run right after lifecycle.GameStarted",
        )
    drawing = 0
    for version, run, what in runs:
        g = Generator(seed, version)
        for env in run:
            game.event(env, env["payload"], g)
        if g.words:
            drawing += 1
            if verbose:
                print(f"  run v{version} ({what}, v{run[0]['version']}..v{run[-1]['version']}): {g.words} words")
    report.note("runs", f"{len(runs)} runs, {drawing} of them drawing")
    if starts:
        report.note("runs", f"set-up generator v{starts[0]['version']}")
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", type=Path, help="an exported game (JSON Lines, as `dicestream export` writes)")
    parser.add_argument(
        "--data",
        type=Path,
        help="the game's data file (default: games/<game>/data/<data_version>.toml when there is one, "
        "else games/<game>/data/<game>.toml)",
    )
    parser.add_argument("--verbose", action="store_true", help="one line per run that draws")
    args = parser.parse_args(argv)
    report = check(args.file, args.data, args.verbose)
    for kind in CHECKS:
        status = "FAIL" if report.failed[kind] else ("ok" if report.checked[kind] else "--")
        if kind in DRAWN:
            counts = f"{report.checked[kind]} checks, {report.items[kind]} values, {report.failed[kind]} differ"
        else:
            counts = f"{report.checked[kind]} checks, {report.failed[kind]} differ"
        extra = "; ".join(report.notes[kind])
        print((f"{status:4}  {kind:10}  {counts:32}" + (f"  {extra}" if extra else "")).rstrip())
    for problem in report.problems[:20]:
        print(f"  MISMATCH {problem}")
    if len(report.problems) > 20:
        print(f"  ... and {len(report.problems) - 20} more")
    verdict = "every outcome matches the seed" if report.ok else "NOT VERIFIED"
    print(f"result: {verdict}")
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())

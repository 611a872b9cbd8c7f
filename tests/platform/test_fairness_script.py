"""examples/check_fairness.py, the standalone checker written from docs/fairness.md: it re-derives
every die, shuffle, pick and pile draw of real referee games of every title and player count, and
names what was tampered with. It runs in an isolated interpreter (`-I -S`: no site-packages, no
repository on the path), so it can only use the standard library."""

from __future__ import annotations

import ast
import hashlib
import json
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import pytest

from contracts import codec
from contracts import lifecycle as lc
from contracts.envelope import CommandEnvelope
from contracts.registry import type_name
from games import fairnessdoc
from games import match as m
from games.bots import RandomBot
from games.catalog import GAMES, GREEDY
from games.rng import Rng, seed_commitment
from services import history as h
from services.eventstore.keys import Keys
from services.eventstore.memory_store import MemoryEventStore
from services.referee.engine import Referee
from services.referee.sink import MemorySink
from services.selfplay import EPOCH, SECRET, record_game
from services.tokens import seat_token
from tests.golden.games import GOLDEN
from tests.golden.games import HERE as GOLDEN_DIR

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "examples" / "check_fairness.py"
DOC = ROOT / "docs" / "fairness.md"

TITLES_AND_COUNTS = [
    (name, n) for name, rules in GAMES.items() for n in range(rules.min_players, rules.max_players + 1)
]


def run_script(path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-I", "-S", str(SCRIPT), str(path), *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=path.parent,
    )


def counts(output: str) -> dict[str, tuple[int, int, int]]:
    """check -> (checked, values, differ) from the script's summary lines."""
    out = {}
    for line in output.splitlines():
        found = re.match(r"^(ok|FAIL|--)\s+(\w+(?: draws)?)\s+(\d+) checks, (?:(\d+) values, )?(\d+) differ", line)
        if found:
            out[found.group(2)] = (int(found.group(3)), int(found.group(4) or 0), int(found.group(5)))
    return out


def write_export(history: h.History, path: Path) -> Path:
    """The file `dicestream export` writes."""
    path.write_bytes(b"\n".join(h.export_lines(history)) + b"\n")
    return path


async def record_with_referee_moves(
    game_type: str, bots: list[Any], seed: str, game_id: str, resign: dict[int, int], timeout: set[int]
) -> h.History:
    """Like services.selfplay.record_game, plus referee-played moves: before move k, seat
    `resign[k]` resigns; at move k in `timeout`, the turn timer forces the waited-for seat's default
    action (a `ForceDefault` on the shard's timer stream, where only the turn service may write)."""
    clock = iter(EPOCH + i / 1000 for i in range(1_000_000))
    store = MemoryEventStore()
    sink = MemorySink()
    ref = Referee(
        store, lambda: sink, Keys("fair"), shards=1, secret=SECRET, clock=lambda: next(clock), new_seed=lambda: seed
    )
    n = 0

    async def send(
        payload: msgspec.Struct, seat: int | None = None, token: str | None = None, stream: str = "fair"
    ) -> None:
        nonlocal n
        n += 1
        if token is None and seat is not None:
            token = seat_token(SECRET, game_id, seat, f"join-{seat}")
        env = CommandEnvelope(
            type=type_name(payload),
            game_id=game_id,
            command_id=f"join-{seat}" if isinstance(payload, lc.JoinSeat) else f"c{n:05d}",
            seat=seat,
            token=token,
            payload=msgspec.Raw(codec.encode(payload)),
        )
        await ref.handle(stream, [(f"{n}-0".encode(), {b"data": codec.encode(env)})])

    await send(lc.CreateGame(game_type=game_type, num_players=len(bots)))
    for seat in range(len(bots)):
        await send(lc.JoinSeat(seat=seat, name=f"bot-{seat}", kind="bot"), seat)
    await send(lc.StartGame(), 0)
    moves = 0
    while (agg := ref.cache.get(game_id)) is not None and agg.status == m.RUNNING:
        moves += 1
        if moves in resign:
            await send(lc.Resign(), resign[moves])
            continue
        seat = m.to_act(agg)[0]
        if moves in timeout:
            await send(lc.ForceDefault(seat=seat, at_version=agg.version), stream=Keys("fair").timer(0))
            continue
        rules = agg.rules
        await send(bots[seat].choose(rules.view(agg.game, seat), rules.legal_actions(agg.game, seat), seat), seat)
    return await h.load(store, game_id)


# ---- every title, every player count ----------------------------------------------------------


@pytest.mark.parametrize(("game_type", "players"), TITLES_AND_COUNTS)
async def test_the_script_rederives_a_whole_game(game_type: str, players: int, tmp_path: Path) -> None:
    bots = [GREEDY[game_type](), *(RandomBot(seat) for seat in range(1, players))]
    history = await record_game(game_type, bots, f"fairness-{game_type}-{players}", game_id=f"{game_type}-{players}p")
    assert h.verify(history).ok
    path = write_export(history, tmp_path / "game.jsonl")
    done = run_script(path)
    assert done.returncode == 0, done.stdout + done.stderr
    found = counts(done.stdout)
    assert found["commitment"][0] >= 1 and found["shuffles"][1] > 0 and found["runs"][0] > 0
    drawn = {"sentient": ("dice", "shuffles"), "prosperity": ("picks", "shuffles"), "mechanica": ("picks", "shuffles")}
    for kind in drawn.get(game_type, ("dice", "shuffles")):
        assert found[kind][0] > 0, f"no {kind} checked"
    assert found["pile draws"][0] > 0
    assert all(v[2] == 0 for v in found.values())
    assert "every outcome matches the seed" in done.stdout


@pytest.mark.parametrize(
    "name",
    [
        *sorted(GOLDEN),
        "sentient-3p.schema1.jsonl",
        "prosperity-3p.data1.jsonl",
        "prosperity-3p.data2.jsonl",
        "prosperity-3p.data3.jsonl",
        "artifacts-3p.data2.jsonl",
        "artifacts-3p.data3.jsonl",
        "mechanica-2p.data1.jsonl",
    ],
)
def test_the_script_checks_the_golden_files(name: str) -> None:
    done = run_script(GOLDEN_DIR / name)
    assert done.returncode == 0, done.stdout + done.stderr
    assert counts(done.stdout)["shuffles"][0] > 0


async def test_a_reshuffled_discard_pile_is_rederived(tmp_path: Path) -> None:
    """Four random Sentient players run the deck out: the discard pile is reshuffled."""
    history = await record_game("sentient", [RandomBot(s) for s in range(4)], "probe-0", game_id="reshuffle")
    again = [
        e for e in history.events if e.type == "sentient.DeckShuffled" and b'"from_discard":true' in bytes(e.payload)
    ]
    assert again, "this seed no longer reshuffles: pick another"
    done = run_script(write_export(history, tmp_path / "game.jsonl"))
    assert done.returncode == 0, done.stdout
    assert counts(done.stdout)["shuffles"][0] == 6 + len(again)


@pytest.mark.parametrize("game_type", ["sentient", "artifacts"])
async def test_runs_after_a_resignation_and_a_timeout_use_the_markers_version(game_type: str, tmp_path: Path) -> None:
    """Moves the referee plays (resigned seat, timed-out seat) draw on the generator of their
    `DefaultActionForced` event's version."""
    bots = [GREEDY[game_type](), RandomBot(1), RandomBot(2)]
    history = await record_with_referee_moves(
        game_type, bots, f"forced-{game_type}", f"forced-{game_type}", resign={7: 1}, timeout={4, 12}
    )
    assert h.verify(history).ok
    markers = [codec.event_payload(e) for e in history.events if e.type == "lifecycle.DefaultActionForced"]
    assert {x.reason for x in markers if isinstance(x, lc.DefaultActionForced)} == {"timeout", "resigned"}
    done = run_script(write_export(history, tmp_path / "game.jsonl"), "--verbose")
    assert done.returncode == 0, done.stdout
    assert re.search(r"run v\d+ \(default action, .*\): [1-9]\d* words", done.stdout), done.stdout


# ---- tampering ---------------------------------------------------------------------------------


def _tamper(lines: list[bytes], event_type: str, change: Callable[[dict[str, Any]], None], nth: int = 0) -> int:
    """Apply `change` to the payload of the `nth` event of `event_type`; its version."""
    seen = 0
    for i, raw in enumerate(lines):
        record = json.loads(raw)
        if record["type"] == "event" and record["event"]["type"] == event_type:
            if seen == nth:
                change(record["event"]["payload"])
                lines[i] = json.dumps(record, separators=(",", ":")).encode()
                return int(record["event"]["version"])
            seen += 1
    raise AssertionError(f"no {event_type} #{nth}")


def _bump_die(values: list[int], i: int = 0) -> None:
    values[i] = values[i] % 6 + 1


def _swap(items: list[Any], i: int, j: int) -> None:
    items[i], items[j] = items[j], items[i]


TAMPERING: dict[str, tuple[str, str, str, Callable[[dict[str, Any]], None], int]] = {
    # name: (golden file, event type, check named, change, which occurrence)
    "sentient die": ("sentient-3p.jsonl", "sentient.DiceRolled", "dice", lambda p: _bump_die(p["values"], 2), 4),
    "sentient deck": ("sentient-3p.jsonl", "sentient.DeckShuffled", "shuffles", lambda p: _swap(p["cards"], 30, 31), 0),
    "sentient investors": (
        "sentient-3p.jsonl",
        "sentient.RoundStarted",
        "shuffles",
        lambda p: _swap(p["investors"], 0, 4),
        2,
    ),
    "prosperity first player": (
        "prosperity-3p.jsonl",
        "prosperity.TableSet",
        "picks",
        lambda p: p.update(first_player=(p["first_player"] + 1) % 3),
        0,
    ),
    "prosperity tiles": (
        "prosperity-3p.jsonl",
        "prosperity.DeckBuilt",
        "shuffles",
        lambda p: _swap(p["tiles"], 6, 7),
        0,
    ),
    "mechanica blueprints": (
        "mechanica-2p.jsonl",
        "mechanica.BlueprintsShuffled",
        "shuffles",
        lambda p: _swap(p["piles"][1], 2, 3),
        0,
    ),
    "mechanica improvements": (
        "mechanica-2p.jsonl",
        "mechanica.ImprovementsShuffled",
        "shuffles",
        lambda p: _swap(p["stack"], 10, 11),
        0,
    ),
    "artifacts turn die": ("artifacts-3p.jsonl", "artifacts.TurnStarted", "dice", lambda p: _bump_die(p["dice"]), 9),
    "artifacts first player": (
        "artifacts-3p.jsonl",
        "artifacts.FirstPlayerRolled",
        "dice",
        lambda p: _bump_die(p["rolls"][1], 1),
        0,
    ),
    "artifacts deck": (
        "artifacts-3p.jsonl",
        "artifacts.DeckShuffled",
        "shuffles",
        lambda p: _swap(p["cards"], 5, 6),
        2,
    ),
    "artifacts market draw": (
        "artifacts-3p.jsonl",
        "artifacts.MarketRefilled",
        "pile draws",
        lambda p: p.update(cards=["A-01" if p["cards"][0] != "A-01" else "A-02"]),
        6,
    ),
}


@pytest.mark.parametrize("name", sorted(TAMPERING))
def test_a_tampered_outcome_fails_naming_it(name: str, tmp_path: Path) -> None:
    golden, event_type, check, change, nth = TAMPERING[name]
    lines = (GOLDEN_DIR / golden).read_bytes().splitlines()
    version = _tamper(lines, event_type, change, nth)
    path = tmp_path / golden
    path.write_bytes(b"\n".join(lines) + b"\n")
    done = run_script(path)
    assert done.returncode == 1, done.stdout
    assert re.search(rf"^FAIL\s+{check}\s", done.stdout, re.M), done.stdout
    assert f"MISMATCH {check}: v{version} {event_type}:" in done.stdout, done.stdout
    assert "NOT VERIFIED" in done.stdout


def test_a_seed_that_does_not_match_its_commitment_fails(tmp_path: Path) -> None:
    lines = (GOLDEN_DIR / "prosperity-3p.jsonl").read_bytes().splitlines()
    _tamper(lines, "lifecycle.SeedRevealed", lambda p: p.update(seed=p["seed"] + "x"))
    path = tmp_path / "game.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    done = run_script(path)
    assert done.returncode == 1
    assert re.search(r"^FAIL\s+commitment\s", done.stdout, re.M), done.stdout


def test_data_of_another_version_is_refused(tmp_path: Path) -> None:
    data = (ROOT / "games" / "mechanica" / "data" / "mechanica.toml").read_text(encoding="utf-8")
    edited = tmp_path / "mechanica.toml"
    edited.write_text(data + "\n# edited\n", encoding="utf-8")
    done = run_script(GOLDEN_DIR / "mechanica-2p.jsonl", "--data", str(edited))
    assert done.returncode == 1
    assert re.search(r"^FAIL\s+data\s", done.stdout, re.M), done.stdout


# ---- the script and the doc --------------------------------------------------------------------


def test_the_script_imports_only_the_standard_library() -> None:
    tree = ast.parse(SCRIPT.read_text(encoding="utf-8"))
    names = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    names |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    assert names <= set(sys.stdlib_module_names) | {"__future__"}, names - set(sys.stdlib_module_names)


def test_the_docs_test_vectors_are_the_reference_generators() -> None:
    text = DOC.read_text(encoding="utf-8")
    seed = "0f" * 32
    key = hashlib.sha256(f"{seed}:5".encode()).digest()
    assert seed_commitment(seed) in text and key.hex() in text
    for i in (0, 1):
        assert hashlib.sha256(key + i.to_bytes(8, "big")).hexdigest() in text
    rng = Rng.for_version(seed, 5)
    assert ", ".join(str(rng.die()) for _ in range(10)) in text
    assert str(Rng.for_version(seed, 5).shuffled(list(range(10)))) in text
    rng = Rng.for_version(seed, 5)
    assert ", ".join(str(rng.below(3_000_000_000)) for _ in range(8)) in text


def test_the_docs_initial_orders_are_current() -> None:
    """Regenerate with `python -m games.fairnessdoc` after editing a game's data."""
    text = DOC.read_text(encoding="utf-8")
    assert fairnessdoc.apply(text) == text

"""docs/bots.md is what a bot author works from (issue 17, "Docs that a bot author can trust"):
every key name it writes is the one the services use, its shard function (Python and JavaScript)
agrees with the referee's, every status value of the contracts is listed, and every key of each
game's view is described in that game's paragraph."""

from __future__ import annotations

import json
import random
import re
import shutil
import subprocess
import typing
from pathlib import Path
from typing import Any

import jsonschema
import msgspec
import pytest

from contracts.outcome import OutcomeStatus
from contracts.protocol import HOSTED, REFUSED, HostReply, HostStatus
from contracts.schema import documents
from games import match as m
from games.catalog import GAMES
from games.offline import new_game
from services.eventstore.keys import Keys, shard_of

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "bots.md").read_text()
KEYS = Keys("ds")
TITLES = {"sentient": "Sentient", "prosperity": "Prosperity", "mechanica": "Mechanica", "artifacts": "Artifacts, Inc."}


def code_spans(text: str) -> set[str]:
    return set(re.findall(r"`([^`\n]+)`", text))


def test_every_example_key_is_the_services_own() -> None:
    spans = code_spans(DOC)
    assert shard_of("g1", 64) == 37
    for key in (
        KEYS.intake(shard_of("g1", 64)),
        KEYS.seat("g1", 1),
        KEYS.public("g1"),
        KEYS.dead_letter,
        f"{KEYS.prefix}:bots:lobby",
    ):
        assert key in spans, f"docs/bots.md does not write {key!r} as code"
    # The patterns: literal braces where the services put hash tags, none around the seat.
    for pattern in ("ds:cmd:{<shard>}", "ds:game:{<game_id>}:seat:<seat>", "ds:game:{<game_id>}:public"):
        assert pattern in spans, pattern
    assert KEYS.seat("g1", 1) == "ds:game:{g1}:seat:1" and KEYS.intake(37) == "ds:cmd:{37}"
    # The example reply streams are valid ones, of the client they name.
    for stream, client in (("ds:reply:alice:g1-1-7f3a", "alice"), ("ds:reply:alice:g1-1", "alice")):
        assert stream in DOC and KEYS.reply_client(stream) == client
    assert "ds:reply:gw:host-g1-1" in DOC and KEYS.reply_client("ds:reply:gw:host-g1-1") == "gw"


def js_block() -> str:
    block = DOC.split("```js\n", 1)[1].split("```", 1)[0]
    assert "function shard(" in block
    return block


@pytest.mark.skipif(shutil.which("node") is None, reason="`node` is not installed (Debian package `nodejs`)")
def test_the_javascript_shard_function_agrees_with_the_referee() -> None:
    rng = random.Random(17)
    ids = ["g1", "g42", "a", "Z9", "партия-1", "ゲーム", *(f"g-{rng.getrandbits(64):x}" for _ in range(200))]
    script = js_block() + (
        "\nconst ids = JSON.parse(process.argv[1]);\n"
        "console.log(JSON.stringify(ids.map((g) => [shard(g), shard(g, 8)])));\n"
    )

    node = shutil.which("node")
    assert node is not None
    out = subprocess.run([node, "-e", script, json.dumps(ids)], capture_output=True, text=True, timeout=60, check=True)
    assert json.loads(out.stdout) == [[shard_of(g, 64), shard_of(g, 8)] for g in ids]


def test_the_python_shard_function_agrees_with_the_referee() -> None:
    block = DOC.split("```python\n", 1)[1].split("```", 1)[0]
    scope: dict[str, Any] = {}
    exec(block, scope)
    for game_id in ("g1", "g42", "партия-1", "x" * 100):
        assert scope["shard"](game_id) == shard_of(game_id, 64)
        assert scope["shard"](game_id, 8) == shard_of(game_id, 8)


def section(title: str) -> str:
    return DOC.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]


def test_every_status_value_is_listed_and_the_schema_has_the_enums() -> None:
    statuses = code_spans(section("Status values"))
    for value in (*typing.get_args(OutcomeStatus), *typing.get_args(HostStatus), m.OPEN, m.RUNNING, m.OVER):
        assert value in statuses, value
    docs = documents()
    reply = docs["protocol/reply.json"]["$defs"]["CommandOutcome"]["properties"]["status"]
    assert reply == {"enum": ["accepted", "rejected"]}
    host = docs["protocol/host-reply.json"]["$defs"]["HostReply"]["properties"]["status"]
    assert host == {"enum": ["hosted", "refused"]}


# Dicts keyed by data (deck letters, symbols, tracks, artifact kinds, squares) rather than by names.
DATA_KEYED = {
    "market",
    "deck_sizes",
    "counts_left",
    "decade_counts_left",
    "market_level_2",
    "forks",
    "artifacts",
    "research",
}


def view_keys(value: Any, out: set[str], depth: int = 0) -> None:
    if depth > 6:
        return
    if isinstance(value, dict):
        for key, inner in value.items():
            out.add(key)
            if key not in DATA_KEYED:
                view_keys(inner, out, depth + 1)
    elif isinstance(value, list):
        for inner in value:
            view_keys(inner, out, depth + 1)


def played_view_keys(title: str, players: int) -> set[str]:
    """Every key of every view of one random game, from each seat and a spectator."""
    rules = GAMES[title]
    game = new_game(rules, players, f"bot-docs-{title}")
    rng = random.Random(title)
    keys: set[str] = set()
    for _ in range(5000):
        for seat in (None, *range(players)):
            view_keys(msgspec.to_builtins(game.view(seat)), keys)
        if game.is_terminal():
            return keys
        seat = game.to_act()[0]
        game.apply(rng.choice(game.legal_actions(seat)), seat)
    raise AssertionError(f"{title} did not end")


@pytest.mark.parametrize("title", sorted(TITLES))
def test_every_key_of_each_games_view_is_described(title: str) -> None:
    views = section("The views (per game)")
    paragraph = views.split(f"**{TITLES[title]}**", 1)[1].split("\n\n", 1)[0]
    common = views.split("**Sentient**", 1)[0]  # the keys every view has
    written = set(re.findall(r"[a-z_][a-z0-9_]*", paragraph + common))
    missing = sorted(played_view_keys(title, 2) - written)
    assert not missing, f"docs/bots.md does not describe {title}'s view keys {missing}"


def test_host_replies_validate_against_their_schema() -> None:
    schema = documents()["protocol/host-reply.json"]
    for reply in (
        HostReply(game_id="g1", seat=1, status=HOSTED),
        HostReply(game_id="g1", seat=1, status=REFUSED, reason="seat 1 is taken", rule="GAME-SEAT-TAKEN"),
    ):
        jsonschema.validate(msgspec.to_builtins(reply), schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"game_id": "g1", "seat": 1, "status": "maybe"}, schema)

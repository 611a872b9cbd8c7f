"""The published JSON Schema describes the real messages, and the committed copy is current.

Every game is played to the end through the in-memory referee; every message that crosses a
boundary (command envelopes and payloads sent, private and public event envelopes and payloads,
bus notices, replies, export lines with the command outcomes, seat messages and their legal
actions) is validated with `jsonschema` against the documents `dicestream schema` writes.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import msgspec
import pytest

from contracts import codec
from contracts import lifecycle as lc
from contracts.registry import command_types, event_types, type_name
from contracts.schema import documents, render
from dicestream.runtime import SERVICES
from games import match as m
from games.bots import RandomBot
from games.catalog import GAMES, GREEDY, SPECS
from services import archive
from services import history as h
from services.eventstore.keys import Keys
from services.eventstore.memory_store import MemoryEventStore
from services.referee.engine import Referee
from services.referee.sink import MemorySink
from services.turns.app import turn_requests
from tests.platform.helpers import entry, envelope

ROOT = Path(__file__).resolve().parents[2]
KEYS = Keys("schema")
INTAKE = KEYS.intake(0)
REPLIES = KEYS.reply("schema", "r")
SECRET = b"schema-secret"

# Registered types no played game can produce, each with the reason. Keep it short.
NEVER_PLAYED: dict[str, str] = {}


@dataclass(frozen=True)
class Scenario:
    game_type: str
    players: int
    seed: str
    force_at: int | None = None  # the turn at which the timer's ForceDefault plays for the waited seat
    resign_at: int | None = None  # the turn at which the last seat resigns


# Per game: a plain greedy-vs-random game, and one with a timeout (ForceDefault) and a Resign.
SCENARIOS: dict[str, list[Scenario]] = {
    game: [
        Scenario(game, players, f"schema-{game}-1"),
        Scenario(game, players, f"schema-{game}-2", force_at=3, resign_at=12),
    ]
    for game, players in ((name, spec.golden_players) for name, spec in SPECS.items())
}


@cache
def validator(name: str) -> jsonschema.Draft202012Validator:
    schema = documents()[name]
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


@dataclass
class Checked:
    count: int = 0
    kinds: dict[str, int] = field(default_factory=dict)
    commands: set[str] = field(default_factory=set)
    events: set[str] = field(default_factory=set)
    errors: list[str] = field(default_factory=list)

    def check(self, kind: str, schema: str, doc: Any) -> bool:
        error = jsonschema.exceptions.best_match(validator(schema).iter_errors(doc))
        if error is not None:
            path = "/".join(map(str, error.absolute_path))
            self.errors.append(f"{kind} against {schema} at /{path}: {error.message}\n  {json.dumps(doc)[:300]}")
            return False
        self.count += 1
        self.kinds[kind] = self.kinds.get(kind, 0) + 1
        return True

    def command(self, kind: str, doc: dict[str, Any]) -> None:
        """A command envelope: the envelope, then its payload against its type's schema."""
        if self.check(kind, "envelope/command.json", doc) and self.check(
            f"{kind} payload", f"commands/{doc['type']}.json", doc["payload"]
        ):
            self.commands.add(doc["type"])

    def event(self, kind: str, doc: dict[str, Any], schema: str = "envelope/event.json") -> None:
        if self.check(kind, schema, doc) and self.check(
            f"{kind} payload", f"events/{doc['type']}.json", doc["payload"]
        ):
            self.events.add(doc["type"])


async def play(s: Scenario, out: Checked) -> None:
    store = MemoryEventStore()
    sink = MemorySink()
    ref = Referee(store, lambda: sink, KEYS, shards=1, secret=SECRET, new_seed=lambda: s.seed)
    gid = s.seed

    async def send(payload: msgspec.Struct, stream: str = INTAKE, **kw: Any) -> None:
        data = codec.encode(envelope(gid, payload, reply_to=REPLIES, **kw))
        out.command("command", json.loads(data))
        await ref.handle(stream, [entry(data)])

    def reply() -> dict[str, Any]:
        doc: dict[str, Any] = json.loads(sink.streams[REPLIES][-1]["data"])
        return doc

    def seat_messages(agg: m.Match) -> None:
        for _, message in turn_requests(agg, 1_700_000_000_000):
            doc = json.loads(codec.encode(message))
            out.check("seat message", "protocol/seat-message.json", doc)
            if doc["type"] == "turn":
                # The same message against its game's typed TurnRequest: the view and every
                # legal action typed (views/<game>.json, a union of the game's commands).
                out.check("typed turn request", f"protocol/turn-request.{s.game_type}.json", doc)
                out.check("view", f"views/{s.game_type}.json", doc["view"])
            for action in doc.get("legal_actions", []):
                out.check("legal action", f"commands/{action['type']}.json", action["payload"])

    await send(lc.CreateGame(game_type=s.game_type, num_players=s.players, move_timeout_s=30.0))
    tokens = []
    for seat in range(s.players):
        await send(lc.JoinSeat(seat=seat, name=f"p{seat}", kind="bot"))
        token = reply()["token"]
        assert token is not None, reply()
        tokens.append(token)
    await send(lc.StartGame(), seat=0, token=tokens[0])
    bots = [GREEDY[s.game_type](), *(RandomBot(seat) for seat in range(1, s.players))]
    pick = random.Random(s.seed)
    rules = GAMES[s.game_type]
    agg = ref.cache[gid]
    # Refusals: a wrong token, a ForceDefault without the admin token, a stale expected version.
    waiting = m.to_act(agg)[0]
    await send(rules.legal_actions(agg.game, waiting)[0], seat=waiting, token="forged")
    await send(lc.ForceDefault(seat=waiting, at_version=agg.version), seat=waiting, token=tokens[waiting])
    await send(
        rules.legal_actions(agg.game, waiting)[0], seat=waiting, token=tokens[waiting], expected_version=agg.version - 1
    )
    assert [json.loads(f["data"])["outcome"]["status"] for f in sink.streams[REPLIES][-3:]] == ["rejected"] * 3
    forced = resigned = False
    for turn in range(5000):
        live = ref.cache.get(gid)
        if live is None or live.status != m.RUNNING:
            break  # a finished game leaves the referee's cache
        agg = live
        seat_messages(agg)
        seat = m.to_act(agg)[0]
        if turn == s.force_at:
            await send(lc.ForceDefault(seat=seat, at_version=agg.version), stream=KEYS.timer(0))
            assert reply()["outcome"]["status"] == "accepted", reply()
            forced = True
            continue
        if turn == s.resign_at:
            last = s.players - 1
            await send(lc.Resign(), seat=last, token=tokens[last], expected_version=agg.version)
            assert reply()["outcome"]["status"] == "accepted", reply()
            resigned = True
            continue
        legal = rules.legal_actions(agg.game, seat)
        # Mostly the bots' choice; a command type not sent yet whenever one is legal, so that rare
        # commands (and the events only they cause) are sent too.
        fresh = [a for a in legal if type_name(a) not in out.commands]
        if fresh:
            choice = fresh[0]
        elif pick.random() < 0.9:
            choice = bots[seat].choose(rules.view(agg.game, seat), legal, seat)
        else:
            choice = pick.choice(legal)
        await send(choice, seat=seat, token=tokens[seat], expected_version=agg.version)
        assert reply()["outcome"]["status"] == "accepted", reply()
    else:
        raise AssertionError(f"{gid} did not end")
    assert agg.status == m.OVER, f"{gid} did not end"
    assert forced == (s.force_at is not None) and resigned == (s.resign_at is not None)
    seat_messages(agg)  # GameOver
    # Stream entries are stored events; what a reader makes of them is a whole envelope.
    for version, data in enumerate(store.logs[gid], 1):
        out.event("private event", json.loads(data), "envelope/stored-event.json")
        out.event("private event, read", json.loads(codec.encode(codec.decode_event(data, gid, version))))
    for entry_id, data in store.public[gid]:
        out.event("public event", json.loads(data), "envelope/stored-event.json")
        whole = codec.decode_event(data, gid, codec.entry_version(entry_id))
        out.event("public event, read", json.loads(codec.encode(whole)))
    for fields in sink.streams[KEYS.bus(0)]:
        out.check("bus notice", "protocol/bus-notice.json", json.loads(fields["data"]))
    for fields in sink.streams[REPLIES]:
        out.check("reply", "protocol/reply.json", json.loads(fields["data"]))
    hist = await h.load(store, gid)
    for line in h.export_lines(hist):
        doc = json.loads(line)
        if doc["type"] != "event":  # the events were checked above, as the private log
            out.check(f"export {doc['type']}", "export/line.json", doc)
    agg = h.fold(hist)
    if agg.status == m.OVER:
        _, marker = archive.marker_for(hist, agg, archive.ArchiveFolder("a").name_for(gid), "0" * 64, 1_700_000_000_000)
        out.event("archive marker", json.loads(codec.encode(marker)))


_results: dict[str, Checked] = {}


async def validated(game: str) -> Checked:
    if game not in _results:
        out = Checked()
        for scenario in SCENARIOS[game]:
            await play(scenario, out)
        _results[game] = out
    return _results[game]


def test_the_committed_schema_is_what_the_code_generates() -> None:
    for name, doc in documents().items():
        path = ROOT / "schema" / name
        assert path.exists(), f"schema/{name} missing: run `dicestream schema`"
        assert path.read_bytes() == render(doc), f"schema/{name} is stale: run `dicestream schema`"
    assert SERVICES  # the CLI that writes them imports cleanly


@pytest.mark.parametrize("game", sorted(SCENARIOS))
async def test_every_message_of_real_games_validates(game: str) -> None:
    out = await validated(game)
    assert not out.errors, f"{len(out.errors)} {game} messages fail their schema:\n" + "\n".join(out.errors[:10])
    expected = {
        "command",
        "command payload",
        "private event",
        "private event payload",
        "public event",
        "public event payload",
        "bus notice",
        "reply",
        "export header",
        "export outcome",
        "seat message",
        "typed turn request",
        "view",
        "legal action",
    }
    assert expected <= set(out.kinds), expected - set(out.kinds)
    assert {"lifecycle.Resign", "lifecycle.ForceDefault"} <= out.commands
    assert {"lifecycle.PlayerResigned", "lifecycle.DefaultActionForced", "lifecycle.CommandRejected"} <= out.events
    # Each game alone validates every lifecycle type and every type of its own contract module.
    own = {name for name in [*command_types(), *event_types()] if name.startswith((f"{game}.", "lifecycle."))}
    assert any(name.startswith(f"{game}.") for name in own), f"no {game} types registered"
    assert sorted(own - out.commands - out.events - set(NEVER_PLAYED)) == []


async def test_every_registered_type_is_validated_or_allow_listed() -> None:
    commands: set[str] = set()
    events: set[str] = set()
    for game in SCENARIOS:
        out = await validated(game)
        commands |= out.commands
        events |= out.events
    assert not set(NEVER_PLAYED) & (commands | events), "allow-listed but validated: drop it from NEVER_PLAYED"
    assert sorted(set(command_types()) - commands - set(NEVER_PLAYED)) == []
    assert sorted(set(event_types()) - events - set(NEVER_PLAYED)) == []
    assert set(NEVER_PLAYED) <= set(command_types()) | set(event_types())

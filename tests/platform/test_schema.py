"""The published JSON Schema describes the real messages, and the committed copy is current."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema

from contracts import codec
from contracts import lifecycle as lc
from contracts.schema import documents, render
from contracts.sentient import Pass
from dicestream.runtime import SERVICES
from services.eventstore.memory_store import MemoryEventStore
from services.referee.sink import MemorySink
from services.turns.app import turn_requests
from tests.platform.helpers import envelope
from tests.platform.test_engine import KEYS, REPLIES, Referee, _recorder, seated_game, send

ROOT = Path(__file__).resolve().parents[2]


def validator(name: str) -> jsonschema.Draft202012Validator:
    schema = documents()[name]
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def test_the_committed_schema_is_what_the_code_generates() -> None:
    for name, doc in documents().items():
        path = ROOT / "schema" / name
        assert path.exists(), f"schema/{name} missing: run `dicestream schema`"
        assert path.read_bytes() == render(doc), f"schema/{name} is stale: run `dicestream schema`"
    assert SERVICES  # the CLI that writes them imports cleanly


async def test_every_message_of_a_real_game_validates() -> None:
    ref = Referee(MemoryEventStore(), _recorder(), KEYS, shards=1, secret=b"s")
    tokens = await seated_game(ref, 2)
    await send(ref, "g", lc.StartGame(), seat=0, token=tokens[0])
    agg = ref.cache["g"]
    await send(ref, "g", Pass(), seat=1 - agg.rules.to_act(agg.game)[0], token="wrong")  # a rejection too
    store = ref.store
    assert isinstance(store, MemoryEventStore)
    seen: set[str] = set()
    event_env = validator("envelope/event.json")
    for data in [*store.logs["g"], *store.public["g"]]:
        doc: dict[str, Any] = json.loads(data)
        event_env.validate(doc)
        validator(f"events/{doc['type']}.json").validate(doc["payload"])
        seen.add(doc["type"])
    assert {"lifecycle.GameCreated", "lifecycle.CommandRejected", "sentient.DeckShuffled"} <= seen
    sink = ref.new_sink()
    assert isinstance(sink, MemorySink)
    for fields in sink.streams[REPLIES]:
        validator("protocol/reply.json").validate(json.loads(fields["data"]))
    for _, message in turn_requests(agg, 0):
        doc = json.loads(codec.encode(message))
        validator("protocol/seat-message.json").validate(doc)
        for action in doc["legal_actions"]:
            validator(f"commands/{action['type']}.json").validate(action["payload"])
    command_env = validator("envelope/command.json")
    for payload in (lc.CreateGame(game_type="sentient", num_players=3), Pass()):
        command_env.validate(json.loads(codec.encode(envelope("g", payload, seat=0, token="t"))))

"""What an operator greps for: every line about a command names its game, command, version and
correlation id; FastStream's own lines come out as JSON like the rest."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
import structlog
from structlog.types import EventDict

from contracts import lifecycle as lc
from contracts.sentient import Pass
from services import logs
from services.eventstore.keys import Keys
from services.eventstore.memory_store import MemoryEventStore
from services.referee import engine
from services.referee.engine import Referee
from services.referee.sink import MemorySink
from tests.platform.helpers import entry, envelope

KEYS = Keys("t")
INTAKE = KEYS.intake(0)
TRACED = {"game_id", "command_id", "version", "correlation_id"}


@pytest.fixture
def lines(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    seen: list[dict[str, Any]] = []

    def keep(_logger: object, level: str, event: EventDict) -> EventDict:
        seen.append({**event, "level": level})
        raise structlog.DropEvent

    monkeypatch.setattr(
        engine,
        "log",
        structlog.wrap_logger(
            None, processors=[keep], wrapper_class=structlog.make_filtering_bound_logger(logging.DEBUG)
        ),
    )
    return seen


async def test_accepted_rejected_and_dead_lettered_commands_are_traceable(lines: list[dict[str, Any]]) -> None:
    sink = MemorySink()
    ref = Referee(MemoryEventStore(), lambda: sink, KEYS, shards=1, secret=b"s")
    create = envelope("g", lc.CreateGame(game_type="sentient", num_players=2), correlation_id="trace-1")
    refused = envelope("g", Pass(), seat=0, token="wrong")
    bad_reply = envelope("g", lc.StartGame(), reply_to="elsewhere")
    await ref.handle(INTAKE, [entry(create), entry(refused), entry(bad_reply)])
    by_event = {line["event"]: line for line in lines}
    accepted, rejected, dead = by_event["accepted"], by_event["rejected"], by_event["dead_letter"]
    assert accepted.keys() >= TRACED and accepted["level"] == "debug"
    assert (accepted["command_id"], accepted["correlation_id"], accepted["version"]) == (
        create.command_id,
        "trace-1",
        1,
    )
    assert rejected.keys() >= TRACED and rejected["rule"] == "GAME-AUTH"
    # Without a correlation id of its own, a command is its own correlation.
    assert rejected["correlation_id"] == refused.command_id
    assert {"game_id", "command_id", "correlation_id"} <= dead.keys() and dead["command_id"] == bad_reply.command_id


def test_faststream_lines_are_json_with_level_and_logger() -> None:
    logs.configure("info", "json")
    record = logging.LogRecord("dicestream.faststream", logging.WARNING, __file__, 1, "group %s lost", ("x",), None)
    line = json.loads(logs.faststream_logger().handlers[0].format(record))
    assert (line["event"], line["level"], line["logger"]) == ("group x lost", "warning", "dicestream.faststream")
    logs.configure("warning", "console")

"""Audit records are stored outcomes (contracts.outcome.StoredOutcome): the outcome less its game
id and its members at their defaults, read back whole; records written before still read."""

from __future__ import annotations

from pathlib import Path

import msgspec

from contracts import codec
from contracts import lifecycle as lc
from contracts.export import ExportLine, OutcomeLine
from contracts.outcome import CommandOutcome, Reply, decode_outcome, stored_outcome
from services.eventstore.keys import Keys
from services.eventstore.memory_store import MemoryEventStore
from services.referee.engine import Referee
from services.referee.sink import MemorySink
from tests.platform.helpers import entry, envelope

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
KEYS = Keys("t")
REPLIES = KEYS.reply("tests", "r")


def golden_outcomes() -> list[CommandOutcome]:
    out = []
    for path in sorted(GOLDEN.glob("*.jsonl")):
        for line in path.read_bytes().splitlines():
            decoded = msgspec.json.decode(line, type=ExportLine)
            if isinstance(decoded, OutcomeLine):
                out.append(decoded.outcome)
    return out


def test_every_golden_outcome_reads_back_whole_from_a_smaller_record() -> None:
    outcomes = golden_outcomes()
    assert {o.status for o in outcomes} == {"accepted", "rejected"}
    for o in outcomes:
        record = stored_outcome(o)
        assert decode_outcome(record, o.game_id) == o
        members = msgspec.json.decode(record, type=dict[str, msgspec.Raw])
        assert "game_id" not in members
        assert [k for k, v in members.items() if bytes(v) in (b"null", b"false") and k != "payload"] == []
    whole = sum(len(codec.encode(o)) for o in outcomes)
    assert sum(len(stored_outcome(o)) for o in outcomes) < 0.8 * whole


def test_a_record_written_before_reads_as_it_was_whatever_stream_it_is_read_from() -> None:
    for o in golden_outcomes()[:20]:
        assert decode_outcome(codec.encode(o), "another-game") == o


async def test_a_duplicate_whose_first_outcome_was_recorded_whole_gets_that_outcome() -> None:
    """Given a command whose outcome was recorded before audit records were stored outcomes,
    when it is delivered again, then its reply is that first outcome, whole."""
    store = MemoryEventStore()
    sink = MemorySink()
    ref = Referee(store, lambda: sink, KEYS, shards=1, secret=b"s")
    create = envelope("g", lc.CreateGame(game_type="sentient", num_players=2), reply_to=REPLIES)
    await ref.handle("t:cmd:{0}", [entry(create)])
    first = msgspec.json.decode(sink.streams[REPLIES][-1]["data"], type=Reply).outcome
    # As a record of the previous format: the whole outcome, under its command id and in the audit.
    store.outcomes["g"][create.command_id] = codec.encode(first)
    store.audits["g"] = [codec.encode(first)]
    await ref.handle("t:cmd:{0}", [entry(create)])
    again = msgspec.json.decode(sink.streams[REPLIES][-1]["data"], type=Reply).outcome
    assert again == first and again.game_id == "g" and len(sink.streams[REPLIES]) == 2

"""`dicestream status` and `dicestream dead ...` against real services on a real Redis (standalone
and cluster): what an operator sees, and what a script can check."""

from __future__ import annotations

import json
import signal
import time
import uuid
from pathlib import Path
from typing import Any

import msgspec
import pytest
from redis.typing import EncodableT, FieldT

from contracts import codec
from contracts import lifecycle as lc
from contracts.outcome import Reply
from dicestream.errors import Code
from dicestream.ops import ROLES
from dicestream.runtime import SERVICES
from services.eventstore.keys import Keys, shard_of
from services.redis_conn import detect_cluster
from tests.conftest import sync_client
from tests.platform.cli_helpers import cli_env, fails, json_of, ok, run, service, wait_for
from tests.platform.helpers import entries_of, envelope


@pytest.fixture
def env(redis_url: str, prefix: str, tmp_path: Path) -> dict[str, str]:
    return cli_env(redis_url, prefix, tmp_path)


def status(env: dict[str, str], *args: str) -> tuple[int, dict[str, Any]]:
    done = run(env, "status", "--json", *args)
    assert done.returncode in (0, 1) and "Traceback" not in done.stderr, done.stderr
    return done.returncode, json.loads(done.stdout)


def test_the_roles_status_shows_are_the_services_that_take_leases() -> None:
    assert set(ROLES) <= set(SERVICES)


def test_status_of_running_services_shows_every_shard_owned(env: dict[str, str], redis_url: str, prefix: str) -> None:
    # Nothing running: nothing is expected to own anything, unless required.
    code, doc = status(env)
    assert code == 0 and doc["ok"] and not any(r["running"] for r in doc["roles"].values())
    code, doc = status(env, "--require", "referee")
    assert code == 1 and doc["problems"] == ["referee: not running (no live member in its lease table)"]
    _, line = fails(env, Code.USAGE, "status", "--require", "umpire")
    assert "umpire" in line

    with service(env):
        code, doc = status(env, "--require", "all")
        assert code == 0 and doc["ok"] and doc["problems"] == [], doc["problems"]
        assert doc["prefix"] == prefix and doc["shard_count"] == 4
        for role in ROLES:
            r = doc["roles"][role]
            assert r["running"] and r["unowned"] == [] and r["owned"] == 4 and r["lapsed"] == []
            [member] = r["members"]
            assert member["leases"] == 4 and 0 < member["expires_in_ms"] <= 10_000
            assert {s["owners"][role] for s in doc["shards"]} == {member["holder"]}
        assert [s["shard"] for s in doc["shards"]] == [0, 1, 2, 3]
        for s in doc["shards"]:
            intake = s["streams"]["intake"]
            assert intake["key"] == f"{prefix}:cmd:{{{s['shard']}}}"
            assert intake["groups"]["referee"]["pending"] == 0
            assert set(s["streams"]["bus"]["groups"]) == {"projector", "turns"}
        assert doc["dead_letters"] == 0
        redis = doc["redis"]
        if detect_cluster(redis_url):
            assert redis["mode"] == "cluster"
            masters = [n for n in redis["nodes"] if n["role"] == "master"]
            replicas = [n for n in redis["nodes"] if n["role"] == "replica"]
            assert len(masters) == 3 and len(replicas) == 3
            assert sum(b - a + 1 for n in masters for a, b in n["slots"]) == 16384
            assert {r["master"] for r in replicas} == {m["id"] for m in masters}
            assert all(n["reachable"] and n["version"] for n in redis["nodes"])
        else:
            assert redis["mode"] == "standalone" and len(redis["nodes"]) == 1 and redis["nodes"][0]["reachable"]

        # A game played moves the groups along; the table says the same as the document.
        ok(env, "new", "sentient", "--game-id", "looked-at")
        shard = shard_of("looked-at", 4)

        def caught_up() -> dict[str, Any] | None:
            _, doc = status(env)
            streams = doc["shards"][shard]["streams"]
            intake, bus = streams["intake"], streams["bus"]
            done = intake["length"] >= 1 and intake["groups"]["referee"] == {
                "lag": 0,
                "pending": 0,
                "last_delivered_id": intake["last_id"],
            }
            done = done and bus["length"] >= 1 and bus["groups"]["projector"]["lag"] == 0
            return doc if done and bus["groups"]["projector"]["pending"] == 0 else None

        wait_for(caught_up, "the groups to catch up")
        table = ok(env, "status")
        assert "OK: every shard of every running role has an owner" in table
        assert "R1" in table and "NONE" not in table


def test_status_exits_1_while_a_running_role_leaves_shards_unowned(env: dict[str, str]) -> None:
    # A referee run with 2 shards where the installation has 4: shards 2 and 3 have no owner.
    with service({**env, "DICESTREAM_SHARDS": "2"}, "serve", "referee"):
        done = run(env, "status")
        assert done.returncode == 1, done.stdout + done.stderr
        assert "NONE" in done.stdout and "referee: 2 of 4 shards have no owner: 2-3" in done.stdout
        code, doc = status(env)
        assert code == 1 and not doc["ok"]
        assert doc["roles"]["referee"]["unowned"] == [2, 3]
        assert [s["owners"]["referee"] is None for s in doc["shards"]] == [False, False, True, True]
        assert doc["problems"] == ["referee: 2 of 4 shards have no owner: 2-3"]
        # Roles not running are not a failure, unless required.
        assert not doc["roles"]["projector"]["running"]
        code, doc = status(env, "--require", "projector")
        assert len(doc["problems"]) == 2


def test_status_follows_a_takeover_after_a_referee_is_killed(env: dict[str, str]) -> None:
    fast = {**env, "DICESTREAM_LEASE_TTL_MS": "2000"}
    with (
        service({**fast, "DICESTREAM_CONSUMER": "ref-a"}, "serve", "referee") as a,
        service({**fast, "DICESTREAM_CONSUMER": "ref-b"}, "serve", "referee"),
    ):

        def shared() -> dict[str, Any] | None:
            code, doc = status(env)
            members = doc["roles"]["referee"]["members"]
            return doc if code == 0 and [m["leases"] for m in members] == [2, 2] else None

        wait_for(shared, "two referees sharing the shards")
        a.send_signal(signal.SIGKILL)
        a.wait(5)
        killed = time.monotonic()
        # When the last `status` that did not yet see the takeover read Redis (about when it
        # returned: a CLI run spends its time importing, not reading): the takeover came after.
        missed = [killed]

        def taken_over() -> dict[str, Any] | None:
            code, doc = status(env)
            members = doc["roles"]["referee"]["members"]
            if code == 0 and len(members) == 1 and members[0]["leases"] == 4:
                return doc
            missed.append(time.monotonic())
            return None

        doc = wait_for(taken_over, "ref-b to take ref-a's shards", timeout_s=15, every_s=0.1)
        # Within the lease TTL and a tick or two. Only a poll that still saw no takeover past that
        # proves it late: each poll is a CLI process, slower than the takeover on a loaded machine.
        assert missed[-1] - killed < 2.0 + 2.5
        assert doc["roles"]["referee"]["members"][0]["holder"].startswith("ref-b#")


# ---- dead letters -----------------------------------------------------------------------------------


def xadd(url: str, stream: str, fields: dict[FieldT, EncodableT]) -> str:
    client = sync_client(url)
    try:
        entry_id = client.xadd(stream, fields)
        assert isinstance(entry_id, bytes)
        return entry_id.decode()
    finally:
        client.close()


def dead_list(env: dict[str, str]) -> dict[str, Any]:
    result: dict[str, Any] = json_of(env, "dead", "list", "--json")
    return result


def dead_total(env: dict[str, str], n: int) -> dict[str, Any] | None:
    listed = dead_list(env)
    return listed if listed["total"] == n else None


def test_dead_letters_from_a_real_referee_listed_shown_retried_and_purged(
    env: dict[str, str], redis_url: str, prefix: str
) -> None:
    keys = Keys(prefix)
    # Redelivered fast and dead-lettered after one failed delivery.
    # No trimming: the test reads the retried intake entry back after the referee judged (and
    # acknowledged) it, and retention may trim an acknowledged entry at any tick.
    fast = {
        **env,
        "DICESTREAM_RECLAIM_IDLE_MS": "100",
        "DICESTREAM_MAX_DELIVERIES": "1",
        "DICESTREAM_TRIM_EVERY_MS": "0",
    }
    game = "doomed"
    shard = shard_of(game, 4)
    reply_to = keys.reply("ops", uuid.uuid4().hex)
    create = envelope(game, lc.CreateGame(game_type="sentient", num_players=2), reply_to=reply_to)
    with service(fast, "serve", "referee"):
        # An entry is named by its stream and id: entries added to two streams in the same
        # millisecond share an id.
        garbage = (keys.intake(1), xadd(redis_url, keys.intake(1), {"data": b"\xff\xfe not json"}))
        oversized = (keys.intake(2), xadd(redis_url, keys.intake(2), {"data": b"x" * 70_000}))
        blanked = (
            keys.intake(0),
            xadd(
                redis_url,
                keys.intake(0),
                {
                    "data": b'{"type":"lifecycle.StartGame","game_id":"bad{id}","command_id":"c","token":"'
                    + b"a" * 64
                    + b'"}'
                },
            ),
        )
        # A command for a game whose log cannot be read fails every delivery: dead-lettered once
        # it has been delivered too often.
        xadd(redis_url, keys.log(game), {"data": b"not an event"})
        too_often = (keys.intake(shard), xadd(redis_url, keys.intake(shard), {"data": codec.encode(create)}))

        listed = wait_for(lambda: dead_total(env, 4), "four dead letters")
        by_entry = {(d["stream"], d["entry_id"]): d for d in listed["dead_letters"]}
        assert set(by_entry) == {garbage, oversized, blanked, too_often}
        assert [d["id"] for d in listed["dead_letters"]] == sorted(
            (d["id"] for d in listed["dead_letters"]), reverse=True
        )
        assert by_entry[garbage]["reason"].startswith("malformed envelope") and by_entry[garbage]["retryable"]
        assert by_entry[garbage]["stream"] == keys.intake(1)
        assert "at most 65536" in by_entry[oversized]["reason"] and not by_entry[oversized]["retryable"]
        assert "bounded copy" in by_entry[oversized]["why_not"]
        assert not by_entry[blanked]["retryable"] and "token was blanked" in by_entry[blanked]["why_not"]
        assert by_entry[too_often]["reason"] == "failed 1 deliveries" and by_entry[too_often]["retryable"]
        assert by_entry[too_often]["stream"] == keys.intake(shard)
        assert json_of(env, "dead", "list", "--limit", "1", "--json")["shown"] == 1

        shown = json_of(env, "dead", "show", by_entry[oversized]["id"], "--json")
        [copy] = shown["copy"]
        assert copy["name"] == "data" and copy["size"] == 1024 and shown["bytes"] == 70_004
        shown = json_of(env, "dead", "show", by_entry[garbage]["id"], "--json")
        assert shown["copy"][0]["base64"] is not None  # not UTF-8: the bytes as they are
        shown = json_of(env, "dead", "show", by_entry[blanked]["id"], "--json")
        assert "<redacted>" in shown["copy"][0]["text"] and "a" * 64 not in shown["copy"][0]["text"]
        text = ok(env, "dead", "show", by_entry[too_often]["id"])
        assert "failed 1 deliveries" in text and "retry: yes" in text
        _, line = fails(env, Code.NOT_FOUND, "dead", "show", "1-0")
        assert f"no dead letter 1-0 in {prefix}:dead" in line
        _, line = fails(env, Code.USAGE, "dead", "show", "yesterday")
        assert "not a stream entry id" in line

        # What cannot be the original is not put back, and the line says why.
        _, line = fails(env, Code.REFUSED, "dead", "retry", by_entry[oversized]["id"])
        assert "bounded copy" in line and "70004-byte entry" in line
        _, line = fails(env, Code.NOT_FOUND, "dead", "retry", "1-0")
        _, line = fails(env, Code.USAGE, "dead", "retry")
        _, line = fails(env, Code.USAGE, "dead", "retry", "--all", by_entry[garbage]["id"])

        # The game's log is repaired: the retried command is judged, on its own shard's stream.
        client = sync_client(redis_url)
        try:
            client.delete(keys.log(game))
            retried = json_of(env, "dead", "retry", by_entry[too_often]["id"], "--json")
            [done] = retried["retried"]
            assert done["stream"] == keys.intake(shard) and retried["refused"] == [] and retried["not_found"] == []

            def answered() -> Reply | None:
                got = entries_of(client.xrange(reply_to))
                return msgspec.json.decode(got[-1][1][b"data"], type=Reply) if got else None

            reply = wait_for(answered, "the retried command's outcome", timeout_s=20)
            assert (reply.outcome.status, reply.outcome.command_id) == ("accepted", create.command_id)
            assert client.xlen(keys.log(game)) == 1
            assert client.xrange(keys.intake(shard), done["new_entry_id"], done["new_entry_id"])
        finally:
            client.close()
        assert by_entry[too_often]["id"] not in {d["id"] for d in dead_list(env)["dead_letters"]}

        # --all retries what can be retried (the garbage, dead-lettered again) and names the rest.
        every = run(env, "dead", "retry", "--all", "--json")
        assert every.returncode == Code.REFUSED and len(every.stderr.splitlines()) == 2  # a line per refusal
        result = json.loads(every.stdout)
        assert [r["id"] for r in result["retried"]] == [by_entry[garbage]["id"]]
        assert {r["id"] for r in result["refused"]} == {by_entry[oversized]["id"], by_entry[blanked]["id"]}
        again = wait_for(lambda: dead_total(env, 3), "the garbage dead-lettered again")
        newest = again["dead_letters"][0]
        assert newest["stream"] == keys.intake(1) and newest["reason"].startswith("malformed envelope")

        purged = json_of(env, "dead", "purge", by_entry[oversized]["id"], "--json")
        assert purged == {"purged": 1, "ids": [by_entry[oversized]["id"]], "not_found": []}
        _, line = fails(env, Code.NOT_FOUND, "dead", "purge", by_entry[oversized]["id"])
        _, line = fails(env, Code.USAGE, "dead", "purge", "--all")
        assert "--yes" in line
        assert dead_list(env)["total"] == 2
        assert status(env)[1]["dead_letters"] == 2
        out = ok(env, "dead", "purge", "--all", "--yes")
        assert "purged 2 dead letters" in out
        assert dead_list(env) == {"total": 0, "shown": 0, "dead_letters": []}
        assert "no dead letters" in ok(env, "dead", "list")


def test_the_documented_json_shapes_are_the_real_ones() -> None:
    from dicestream import ops

    doc = (Path(__file__).resolve().parents[2] / "docs" / "cli.md").read_text()
    blocks = [json.loads(b.split("```", 1)[0]) for b in doc.split("```json\n")[1:]]
    status_doc, letter = blocks
    assert list(status_doc) == list(ops.Status.__struct_fields__)
    assert list(status_doc["redis"]) == list(ops.RedisStatus.__struct_fields__)
    assert list(status_doc["redis"]["nodes"][0]) == list(ops.Node.__struct_fields__)
    assert list(status_doc["roles"]) == list(ROLES)
    assert list(status_doc["roles"]["referee"]) == list(ops.RoleStatus.__struct_fields__)
    assert list(status_doc["roles"]["referee"]["members"][0]) == list(ops.Member.__struct_fields__)
    shard = status_doc["shards"][0]
    assert list(shard) == list(ops.ShardStatus.__struct_fields__)
    assert list(shard["streams"]) == [name for name, _, _ in ops.STREAMS]
    assert list(shard["streams"]["intake"]) == list(ops.StreamInfo.__struct_fields__)
    assert list(shard["streams"]["intake"]["groups"]["referee"]) == list(ops.GroupInfo.__struct_fields__)
    assert list(letter) == list(ops.DeadLetter.__struct_fields__)
    assert list(letter["copy"][0]) == list(ops.FieldCopy.__struct_fields__)

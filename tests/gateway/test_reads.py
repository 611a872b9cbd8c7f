"""What anyone may read through the gateway: public state at any version, the event list, the
game list, audits with the rule text, exports; the OpenAPI document; problem details."""

from __future__ import annotations

import asyncio
from typing import Any

import msgspec
import pytest

from contracts import codec
from contracts.envelope import EventEnvelope
from games import match as m
from services import history
from services.eventstore.keys import Keys, shard_of
from services.eventstore.redis_store import RedisEventStore
from services.gateway import openapi
from services.gateway.folding import fold_into
from services.gateway.http_games import event_item
from services.readmodel import public_state
from tests.gateway.conftest import Stack
from tests.gateway.helpers import Api, Seat, gather, play

pytestmark = pytest.mark.redis


async def finished_game(api: Api, title: str = "sentient") -> tuple[str, list[Seat]]:
    game_id = await api.create(title, 2)
    seats = [await api.join(game_id, s, f"p{s}") for s in range(2)]
    playing = [
        asyncio.ensure_future(play(api, seat, title, "random", over_ws=False, seed=s)) for s, seat in enumerate(seats)
    ]
    await asyncio.sleep(0.2)
    await api.start(seats[0])
    await gather(*playing)
    return game_id, seats


def canonical(doc: Any) -> Any:
    return msgspec.json.decode(msgspec.json.encode(doc))


async def test_public_state_events_audit_and_export(stack: Stack) -> None:
    api = stack.api()
    store = RedisEventStore(stack.run.client(), Keys(stack.settings.prefix))
    try:
        game_id, seats = await finished_game(api)
        log = await store.read(game_id)
        last = len(log)
        # Any version, folded from the log and shown as view(state, None); the latest too.
        for version in (1, 3, last // 2, last):
            r = await api.request("GET", f"/v1/games/{game_id}", params={"version": version})
            assert r.status_code == 200, r.text
            expected = public_state(fold_into(m.Match(game_id=game_id), log, upto=version))
            assert r.json() == canonical(expected)
        latest = await api.request("GET", f"/v1/games/{game_id}", params={"min_version": last})
        assert latest.json() == canonical(public_state(fold_into(m.Match(game_id=game_id), log)))
        r = await api.request("GET", f"/v1/games/{game_id}", params={"version": last + 1})
        assert r.status_code == 404 and r.json()["type"].endswith("no-such-version")

        # The event list, paged by cursor, is the public stream.
        public = [codec.decode_event(d, game_id, codec.entry_version(i)) for i, d in await store.read_public(game_id)]
        got: list[dict[str, Any]] = []
        after = None
        while True:
            params: dict[str, Any] = {"limit": 7, **({"after": after} if after else {})}
            page = (await api.request("GET", f"/v1/games/{game_id}/events", params=params)).json()
            got += [item["event"] for item in page["events"]]
            if not page["events"]:
                break
            after = page["next"]
        assert got == [canonical(msgspec.json.decode(codec.encode(e))) for e in public]
        from_ten = (await api.request("GET", f"/v1/games/{game_id}/events", params={"from_version": 10})).json()
        assert from_ten["events"][0]["event"]["version"] == 10

        # A command refused after the end is audited with its rule and the rule's text.
        refused = await api.command(seats[0], {"type": "sentient.Pass"})
        assert refused.status_code == 409 and refused.json()["rule"] == "GAME-NOT-RUNNING"
        command_id = refused.json()["command_id"]
        audit = (await api.request("GET", f"/v1/games/{game_id}/audit", params={"command_id": command_id})).json()
        assert audit["verdict"]["status"] == "rejected" and audit["verdict"]["rule"] == "GAME-NOT-RUNNING"
        assert audit["rule"] == {
            "id": "GAME-NOT-RUNNING",
            "text": m.LIFECYCLE_RULES["GAME-NOT-RUNNING"],
            "doc": "docs/rules/lifecycle.md",
        }
        hist = await history.load(store, game_id)
        wrote_ten = history.audit(hist, history.find_outcome(hist, version=10))
        by_version = (await api.request("GET", f"/v1/games/{game_id}/audit", params={"version": 10})).json()
        assert by_version["events"] == canonical(wrote_ten.events) and by_version["rule"] is None
        assert by_version["state_before"] == canonical(wrote_ten.state_before)
        for params, status in (({}, 400), ({"command_id": "nope"}, 404), ({"version": 1, "command_id": "x"}, 400)):
            assert (await api.request("GET", f"/v1/games/{game_id}/audit", params=params)).status_code == status

        # The export is the file `dicestream export` writes: it replays and verifies offline.
        r = await api.request("GET", f"/v1/games/{game_id}/export")
        assert r.status_code == 200 and game_id in r.headers["content-disposition"]
        _, exported = history.parse_export(r.content.splitlines())
        verdict = history.verify(exported)
        assert verdict.ok and verdict.seed_verified
        assert r.content == b"\n".join(history.export_lines(hist)) + b"\n"
    finally:
        await store.close()
        await api.close()


async def test_the_game_list_filters_sorts_and_pages(stack: Stack) -> None:
    api = stack.api()
    try:
        made = []
        for title in ("sentient", "prosperity", "mechanica", "artifacts", "sentient"):
            made.append(await api.create(title, 2))
            await asyncio.sleep(0.005)  # distinct creation times
        for _ in range(100):  # the projector catches up
            listed = (await api.request("GET", "/v1/games", params={"limit": 200})).json()
            if {g["game_id"] for g in listed["games"]} >= set(made):
                break
            await asyncio.sleep(0.05)
        games = listed["games"]
        assert [g["game_id"] for g in games][:5] == made[::-1], "newest first"
        assert all(g["status"] == "open" and g["created_at_ms"] > 0 for g in games)
        sentient = (await api.request("GET", "/v1/games", params={"title": "sentient"})).json()
        assert [g["game_id"] for g in sentient["games"]] == [made[4], made[0]] and sentient["total"] == 2
        assert (await api.request("GET", "/v1/games", params={"status": "over"})).json()["games"] == []
        seen: list[str] = []
        cursor = None
        while True:
            params: dict[str, Any] = {"limit": 2, **({"cursor": cursor} if cursor else {})}
            page = (await api.request("GET", "/v1/games", params=params)).json()
            seen += [g["game_id"] for g in page["games"]]
            cursor = page["next"]
            if cursor is None:
                break
        assert seen == [g["game_id"] for g in games]
        for params in ({"limit": 0}, {"limit": "x"}, {"cursor": "junk"}):
            r = await api.request("GET", "/v1/games", params=params)
            assert r.status_code == 400 and r.headers["content-type"].startswith("application/problem+json"), r.text
    finally:
        await api.close()


async def test_problem_details_for_bad_requests(stack: Stack) -> None:
    api = stack.api()
    try:
        game_id = await api.create("sentient", 2)
        seat = await api.join(game_id, 0, "alice")
        path = f"/v1/games/{game_id}/seats/0/commands"
        for body, status, slug, at in (
            (b"{not json", 400, "malformed-json", None),
            (b'{"type": "chess.Move", "payload": {}}', 422, "unknown-command-type", None),
            (
                b'{"type": "lifecycle.ForceDefault", "payload": {"seat": 0, "at_version": 1}}',
                422,
                "unknown-command-type",
                None,
            ),
            (
                b'{"type": "sentient.Acquire", "payload": {"factory_slot": 1, "network_slot": 1, "assistant": 1}}',
                422,
                "invalid-body",
                "$.payload",
            ),
            (
                b'{"type": "sentient.Acquire", "payload": {"factory_slot": "1", "network_slot": 1}}',
                422,
                "invalid-body",
                "$.payload.factory_slot",
            ),
            (b'{"type": "sentient.Pass", "reply_to": "ds:reply:x"}', 422, "invalid-body", None),
            (b'{"type": "sentient.Pass", "expected_version": -1}', 422, "invalid-body", "$.expected_version"),
            (b'{"type": "sentient.Pass", "command_id": "{x}"}', 422, "invalid-body", "$.command_id"),
        ):
            r = await api.request("POST", path, content=body, headers=api.bearer(seat.token))
            assert r.status_code == status, (body, r.text)
            problem = r.json()
            assert r.headers["content-type"].startswith("application/problem+json")
            assert problem["type"] == f"urn:dicestream:problem:{slug}" and problem["status"] == status
            assert problem["title"] and problem["instance"] == path
            if at:
                assert problem["errors"][0]["at"] == at, problem
        r = await api.command(seat, {"type": "sentient.Pass"})
        assert r.status_code == 409 and r.json()["rule"] == "GAME-NOT-RUNNING"
        assert r.json()["text"] == m.LIFECYCLE_RULES["GAME-NOT-RUNNING"]
        for method, url, status in (
            ("GET", "/v1/games/nope", 404),
            ("GET", "/v1/nothing-here", 404),
            ("DELETE", "/v1/games", 405),
            ("GET", f"/v1/games/{game_id}", 200),
            ("GET", f"/v1/games/{game_id}?version=abc", 400),
        ):
            r = await api.request(method, url)
            assert r.status_code == status, (url, r.text)
            if status >= 400:
                assert r.headers["content-type"].startswith("application/problem+json"), url
        r = await api.request("POST", f"/v1/games/{game_id}/seats/1/join", json={"name": "x" * 65})
        assert r.status_code == 422
        r = await api.request("POST", "/v1/games", json={"game_type": "chess", "num_players": 2}, headers=api.key())
        assert r.status_code == 422 and r.json()["type"].endswith("unknown-game-type")
        r = await api.request("POST", "/v1/games", json={"game_type": "sentient", "num_players": 9}, headers=api.key())
        assert r.status_code == 422
        r = await api.request("POST", "/v1/games", json={"game_type": "sentient", "num_players": 5}, headers=api.key())
        assert r.status_code == 422 and r.json()["rule"] == "GAME-PLAYERS"
        r = await api.request(
            "POST", "/v1/games", json={"game_type": "sentient", "num_players": 2, "game_id": game_id}, headers=api.key()
        )
        assert r.status_code == 409 and r.json()["rule"] == "GAME-EXISTS"
    finally:
        await api.close()


async def test_the_openapi_document(stack: Stack) -> None:
    api = stack.api()
    try:
        doc = (await api.request("GET", "/openapi.json")).json()
        assert doc["openapi"].startswith("3.1")
        seat = "/v1/games/{game_id}/seats/{seat}"
        for path, method in (
            ("/v1/games", "post"),
            ("/v1/games", "get"),
            ("/v1/games/{game_id}", "get"),
            ("/v1/games/{game_id}/events", "get"),
            ("/v1/games/{game_id}/audit", "get"),
            ("/v1/games/{game_id}/export", "get"),
            (f"{seat}/join", "post"),
            (seat, "get"),
            (f"{seat}/commands", "post"),
            (f"{seat}/bot", "post"),
        ):
            assert method in doc["paths"][path], (path, method)
        body = doc["paths"][f"{seat}/commands"]["post"]["requestBody"]["content"]["application/json"]["schema"]
        union = doc["components"]["schemas"][body["$ref"].rsplit("/", 1)[-1]]
        assert union["discriminator"]["propertyName"] == "type"
        assert "sentient.Acquire" in union["discriminator"]["mapping"]
        acquire = doc["components"]["schemas"]["SentientAcquire"]
        assert acquire["additionalProperties"] is False and "factory_slot" in acquire["required"]
        assert doc["paths"][f"{seat}/commands"]["post"]["security"] == [{"seatToken": []}]
        assert "409" in doc["paths"][f"{seat}/commands"]["post"]["responses"]
        assert set(doc["x-websockets"]) == {"/v1/games/{game_id}/events/ws", f"{seat}/ws"}
        assert {"TurnRequest", "GameOver", "ProblemDetail", "CommandMessage"} <= set(doc["components"]["schemas"])
        # A game's view is documented as the union of the games' typed views, not as any object.
        schemas = doc["components"]["schemas"]
        for name in ("PublicState", "SeatView", "VersionedState"):
            view, null = schemas[name]["properties"]["view"]["anyOf"]
            assert null == {"type": "null"} and view["discriminator"]["propertyName"] == "game", name
            assert set(view["discriminator"]["mapping"]) == {"artifacts", "mechanica", "prosperity", "sentient"}
        # A turn request always carries one (the WebSocket's `turn` messages are TurnRequests).
        turn_view = schemas["TurnRequest"]["properties"]["view"]
        assert turn_view["discriminator"]["propertyName"] == "game" and {"type": "null"} not in turn_view["anyOf"]
        assert set(turn_view["discriminator"]["mapping"]) == {"artifacts", "mechanica", "prosperity", "sentient"}
        assert "market_level_2" in schemas["ArtifactsView"]["properties"]
        action = schemas["FaceView"]["properties"]["actions"]["items"]["$ref"].rsplit("/", 1)[-1]
        assert {"die", "effect", "amount"} <= set(schemas[action]["properties"])
    finally:
        await api.close()


async def test_a_timeout_names_the_command_and_a_retry_gets_its_one_outcome(settings: Any, redis_url: str) -> None:
    """No referee: the gateway answers 504 with the command id; once a referee runs, the same
    request (same command id, same body) is judged once and answered, joins with the same token."""
    from services.gateway.settings import GatewaySettings
    from services.referee.app import RefereeService
    from tests.gateway.conftest import start_stack

    quick = GatewaySettings(port=0, rate_limit="", client_rate_limit="", command_timeout_s=0.5)
    async with start_stack(settings, redis_url, quick, names=("projector",)) as stack:
        api = stack.api()
        create = {"game_type": "sentient", "num_players": 2}
        r = await api.request("POST", "/v1/games", json=create, headers=api.key())
        assert r.status_code == 504 and r.json()["type"] == "urn:dicestream:problem:timeout", r.text
        retry = {**create, "game_id": r.json()["game_id"], "command_id": r.json()["command_id"]}
        referee = RefereeService(settings, redis_url)
        await referee.start()
        try:
            first = await api.request("POST", "/v1/games", json=retry, headers=api.key())
            again = await api.request("POST", "/v1/games", json=retry, headers=api.key())
            assert first.status_code == again.status_code == 201, (first.text, again.text)
            assert first.json() == again.json() and first.json()["version"] == 1
            join = {"name": "alice", "command_id": "join-1"}
            path = f"/v1/games/{retry['game_id']}/seats/0/join"
            one = await api.request("POST", path, json=join)
            two = await api.request("POST", path, json=join)
            assert one.status_code == two.status_code == 201
            assert one.json()["token"] == two.json()["token"]
            other = await api.request("POST", path, json={"name": "mallory", "command_id": "join-1"})
            assert other.status_code == 409 and "token" not in other.json()
            store = RedisEventStore(stack.run.client(), Keys(settings.prefix))
            assert len(await store.read(retry["game_id"])) == 2  # created once, joined once
            await store.close()
        finally:
            await referee.stop()
            await api.close()


async def test_the_projector_writes_when_a_game_was_created_and_who_sits_where(stack: Stack) -> None:
    """The lobby's summaries: `created_at_ms` (GameCreated's recording time) and each seat's kind
    are in the read model the projector writes, and the game list shows them."""
    api = stack.api()
    client = stack.run.client()
    store = RedisEventStore(client, Keys(stack.settings.prefix))
    try:
        game_id = await api.create("sentient", 2)
        await api.join(game_id, 0, "ann", kind="human")
        await api.join(game_id, 1, "bob", kind="bot")
        created = codec.decode_event((await store.read(game_id))[0][1], game_id, 1).recorded_at_ms
        assert created > 0
        rm = stack.run.projector.projector.rm
        shard = shard_of(game_id, stack.settings.shards)
        for _ in range(200):
            raw = await client.hget(rm.games(shard), game_id)
            model = msgspec.json.decode(raw) if raw else {}
            if model.get("kinds") == ["human", "bot"]:
                break
            await asyncio.sleep(0.02)
        assert model["kinds"] == ["human", "bot"] and model["created_at_ms"] == created
        listed = (await api.request("GET", "/v1/games", params={"title": "sentient"})).json()["games"]
        (game,) = [g for g in listed if g["game_id"] == game_id]
        assert game["kinds"] == ["human", "bot"] and game["created_at_ms"] == created
        assert game["players"] == ["ann", "bob"]
    finally:
        await store.close()
        await api.close()


def test_the_openapi_patch_refuses_two_schemas_under_one_name() -> None:
    doc = {"components": {"schemas": {"SentientView": {"type": "string"}}}, "paths": {}}
    with pytest.raises(ValueError, match="SentientView"):
        openapi.patch(doc)


def test_a_public_entry_is_served_as_the_whole_envelope_and_an_unknown_shape_as_it_is() -> None:
    env = EventEnvelope(
        type="lifecycle.GameStarted",
        game_id="g7",
        version=3,
        event_id="g7:3",
        command_id="c1",
        correlation_id="c1",
        causation_id="c1",
        recorded_at_ms=5,
        payload=msgspec.Raw(b'{"order":[1,0]}'),
    )
    item = event_item("g7", "3-0", codec.encode_stored(env))
    assert item.cursor == "3-0" and item.event == msgspec.json.decode(codec.encode(env))
    # A member a newer writer added still reaches the client.
    newer = event_item("g7", "4-1", b'{"type":"x.New","schema_version":9,"command_id":"c2","extra":[1]}').event
    assert newer["extra"] == [1] and newer["version"] == 4 and newer["event_id"] == "g7:4"
    assert newer["schema_version"] == 9 and newer["correlation_id"] == newer["causation_id"] == "c2"

"""Hypothesis throws bodies at every endpoint that takes one (random JSON shapes, wrong types,
unknown fields, deep nesting, huge strings, bytes that are not UTF-8), odd paths and queries, and
WebSocket messages: the gateway never answers 5xx and keeps serving."""

from __future__ import annotations

import asyncio
import json
from typing import Any
from urllib.parse import quote

import httpx
import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contracts.registry import command_types
from tests.gateway.conftest import Stack

pytestmark = pytest.mark.redis
EXAMPLES = settings(
    max_examples=120, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True, database=None
)
COMMAND_TYPES = sorted(command_types())
FIELDS = sorted(
    {f.name for cls in command_types().values() for f in msgspec.structs.fields(cls)}
    | {
        "game_type",
        "num_players",
        "move_timeout_s",
        "game_id",
        "command_id",
        "name",
        "kind",
        "seed",
        "payload",
        "expected_version",
        "correlation_id",
        "type",
        "token",
        "reply_to",
        "seat",
    }
)

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.integers(min_value=-3, max_value=12),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=40),
    st.sampled_from(["sentient", "prosperity", "mechanica", "artifacts", "random", "greedy", "human", "bot"]),
    st.sampled_from(COMMAND_TYPES),
    st.text(min_size=1000, max_size=5000),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=5),
        st.dictionaries(st.one_of(st.sampled_from(FIELDS), st.text(max_size=10)), inner, max_size=6),
    ),
    max_leaves=25,
)
near_valid = st.fixed_dictionaries(
    {"type": st.one_of(st.sampled_from(COMMAND_TYPES), st.text(max_size=20))},
    optional={
        "payload": st.dictionaries(st.sampled_from(FIELDS), values, max_size=5),
        "expected_version": st.one_of(st.integers(min_value=-5, max_value=400), values),
        "command_id": st.one_of(st.text(max_size=120), st.uuids().map(str)),
        "game_type": st.sampled_from(["sentient", "prosperity", "mechanica", "artifacts", "chess"]),
        "num_players": st.integers(min_value=-1, max_value=9),
        "name": st.text(max_size=80),
        "kind": st.sampled_from(["human", "bot", "random", "greedy", "?"]),
        "extra": values,
    },
)


def encoded(doc: Any) -> bytes:
    return json.dumps(doc, allow_nan=True).encode()


bodies = st.one_of(
    near_valid.map(encoded),
    values.map(encoded),
    st.binary(max_size=300),
    st.integers(min_value=1, max_value=30000).map(lambda n: b"[" * n + b"]" * n),
    st.integers(min_value=1, max_value=30000).map(lambda n: b'{"a":' * n + b"1" + b"}" * n),
    st.integers(min_value=60000, max_value=70000).map(lambda n: b'{"name": "' + b"x" * n + b'"}'),
    st.binary(min_size=1, max_size=40).map(lambda b: b'{"name": "' + b + b'", "type": "sentient.Pass"}'),
)
segments = st.one_of(st.text(max_size=20), st.sampled_from(["..", "%00", "{x}", "a" * 150, "-1", "99999999999999999"]))


@pytest.fixture
async def running_game(stack: Stack) -> tuple[Stack, str, str]:
    api = stack.api()
    game_id = await api.create("sentient", 2)
    seat = await api.join(game_id, 0, "fuzz")
    await api.join(game_id, 1, "other")
    await api.start(seat)
    await api.close()
    return stack, game_id, seat.token


async def test_bodies_paths_and_queries_never_get_a_5xx(running_game: tuple[Stack, str, str]) -> None:
    stack, game_id, token = running_game
    seen: dict[int, int] = {}

    def run() -> None:
        with httpx.Client(base_url=stack.url, timeout=30) as http:

            def check(r: httpx.Response) -> None:
                seen[r.status_code] = seen.get(r.status_code, 0) + 1
                assert r.status_code < 500, (r.request.method, r.request.url, r.text[:300])
                if r.status_code >= 400:
                    assert r.headers["content-type"].startswith("application/problem+json"), r.text[:200]
                    json.loads(r.text)

            @EXAMPLES
            @given(body=bodies, which=st.sampled_from(["create", "join", "command", "bot"]), seat=st.integers(-1, 3))
            def post(body: bytes, which: str, seat: int) -> None:
                path, headers = {
                    "create": ("/v1/games", {"X-API-Key": stack.key}),
                    "join": (f"/v1/games/{game_id}/seats/{seat}/join", {}),
                    "command": (f"/v1/games/{game_id}/seats/{seat}/commands", {"Authorization": f"Bearer {token}"}),
                    "bot": (f"/v1/games/{game_id}/seats/{seat}/bot", {"X-API-Key": stack.key}),
                }[which]
                check(http.post(path, content=body, headers={"content-type": "application/json", **headers}))

            @EXAMPLES
            @given(
                segment=segments,
                tail=st.sampled_from(["", "/events", "/audit", "/export", "/seats/0", "/events/sse?after=x"]),
                query=st.dictionaries(
                    st.sampled_from(
                        [
                            "version",
                            "min_version",
                            "after",
                            "from_version",
                            "limit",
                            "command_id",
                            "cursor",
                            "title",
                            "status",
                        ]
                    ),
                    st.one_of(st.text(max_size=30), st.integers(-(2**70), 2**70).map(str)),
                    max_size=3,
                ),
            )
            def get(segment: str, tail: str, query: dict[str, str]) -> None:
                if tail.startswith("/events/sse"):
                    tail = "/events"  # a live stream would not end
                path = f"/v1/games/{quote(segment, safe='%')}{tail}"  # '%00' and the like stay as sent
                check(http.get(path, params=query, headers={"Authorization": "Bearer x"}))
                check(http.get("/v1/games", params=query))

            post()
            get()

    await asyncio.to_thread(run)
    assert seen.get(200, 0) + seen.get(201, 0) + seen.get(202, 0) > 0, seen  # some were valid
    assert seen.get(413, 0) and seen.get(422, 0) and seen.get(400, 0), seen
    async with httpx.AsyncClient(base_url=stack.url) as http:
        assert (await http.get("/readyz")).status_code == 200


async def test_websocket_messages_never_crash_a_socket(running_game: tuple[Stack, str, str]) -> None:
    stack, game_id, token = running_game
    from websockets.sync.client import connect

    def run() -> None:
        url = "ws" + stack.url.removeprefix("http") + f"/v1/games/{game_id}/seats/0/ws"
        with connect(url, additional_headers={"Authorization": f"Bearer {token}"}, max_size=2**22) as ws:

            @EXAMPLES
            @given(
                message=st.one_of(
                    values.map(json.dumps),
                    st.binary(max_size=200),
                    near_valid.map(lambda c: json.dumps({"type": "command", "ref": "f", "command": c})),
                    st.builds(lambda c: json.dumps({"type": "command", "command": c, "junk": 1}), values),
                )
            )
            def send(message: str | bytes) -> None:
                ws.send(message)

            send()
            ws.send(json.dumps({"type": "command", "ref": "last", "command": {"type": "sentient.Pass"}}))
            while True:  # every message answered, in any order; the last one too
                answer = json.loads(ws.recv(timeout=20))
                if answer["type"] == "problem":
                    assert answer["problem"]["status"] < 500, answer
                if answer.get("ref") == "last":
                    break

    await asyncio.to_thread(run)
    async with httpx.AsyncClient(base_url=stack.url) as http:
        assert (await http.get("/readyz")).status_code == 200

"""WebSockets: a game's public events from any point, live; a seat's turn requests (after its
token is checked), over which the seat may also send its commands.

Server messages are JSON objects with a `type`: `event` (with `cursor` and `event`), `live` (the
backlog is sent; `cursor`), `turn` / `over` (a seat's TurnRequest / GameOver fields plus
`cursor`), `outcome` (an accepted command's CommandResult), `problem` (problem details, then for
a fatal one the socket closes with code 4000 + its HTTP status: 4401, 4403, 4404, 4408 too slow,
4429, 4503 busy). Reconnect with `after` = the last `cursor` you got to miss nothing and get
nothing twice."""

from __future__ import annotations

import asyncio
import contextlib
import functools
from typing import Annotated, Any

import msgspec
import redis.exceptions
import structlog
from litestar import WebSocket, websocket
from litestar.exceptions import WebSocketDisconnect
from litestar.params import FromPath, FromQuery, QueryParameter

from services.gateway.auth import bearer, game_id_or_404, not_live, seat_game
from services.gateway.deps import Deps
from services.gateway.http_games import cursor_of, event_item
from services.gateway.http_seats import SEAT, send_command
from services.gateway.problems import Problem, ProblemDetail
from services.gateway.ratelimit import address_of, credential_id
from services.gateway.streams import LIVE, Busy, Entry, TooSlow

log = structlog.get_logger("gateway")
AUTH_TIMEOUT_S = 10.0
IN_FLIGHT = 8  # commands one seat socket may have waiting for their outcome


class AuthMessage(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True, tag="auth"):
    """First message on a seat socket when the token could not be sent as a header (browsers)."""

    token: Annotated[str, msgspec.Meta(max_length=200)]


class CommandMessage(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True, tag="command"):
    """A seat's command over its socket: `command` is a CommandBody; `ref` is echoed back."""

    command: msgspec.Raw
    ref: Annotated[str, msgspec.Meta(max_length=64)] | None = None


ClientMessage = AuthMessage | CommandMessage
_client = msgspec.json.Decoder(ClientMessage)
_seat_message = msgspec.json.Decoder(dict[str, Any])


class ProblemMessage(msgspec.Struct, frozen=True, kw_only=True, tag="problem"):
    problem: ProblemDetail
    ref: str | None = None


async def _fail(socket: WebSocket[Any, Any, Any], problem: Problem, close: bool = True) -> None:
    with contextlib.suppress(Exception):
        await socket.send_text(msgspec.json.encode(ProblemMessage(problem=problem.body(socket.url.path))).decode())
        if close:
            await socket.close(code=4000 + problem.status, reason=problem.slug)


async def _pump(socket: WebSocket[Any, Any, Any], entries: Any, render: Any, lock: asyncio.Lock) -> None:
    try:
        async for entry in entries:
            text = render(entry)
            async with lock:
                await socket.send_text(text)
    finally:
        await entries.aclose()  # unsubscribes, also when cancelled between two entries


async def _until_closed(socket: WebSocket[Any, Any, Any], pump: asyncio.Task[None]) -> None:
    """Wait for the client to leave (or the pump to end); other client messages are ignored."""
    receiving = asyncio.ensure_future(_drain(socket))
    try:
        await asyncio.wait({pump, receiving}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (pump, receiving):
            task.cancel()
        for task in (pump, receiving):
            with contextlib.suppress(BaseException):
                await task
    await _ended(socket, pump, "")


async def _ended(socket: WebSocket[Any, Any, Any], pump: asyncio.Task[None], game_id: str) -> None:
    """Tell the client why its stream ended, when it did not leave by itself."""
    exc = pump.exception() if pump.done() and not pump.cancelled() else None
    if exc is None:
        return
    if isinstance(exc, TooSlow):
        await _fail(socket, Problem(408, "too-slow", "Too slow", "reconnect with `after` = your last cursor"))
    elif not isinstance(exc, WebSocketDisconnect):
        await _fail(socket, _unexpected(exc, game_id))


def _unexpected(exc: BaseException, game_id: str) -> Problem:
    if isinstance(exc, redis.exceptions.RedisError):
        log.warning("ws_redis_unavailable", game_id=game_id, error=str(exc))
        return Problem(503, "unavailable", "The game store is not answering", "reconnect shortly")
    log.error("ws_failed", game_id=game_id, error=repr(exc), exc_info=exc)
    return Problem(500, "internal", "Internal error")


async def _drain(socket: WebSocket[Any, Any, Any]) -> None:
    while (await socket.receive())["type"] != "websocket.disconnect":
        pass


def _public(game_id: str, entry: Entry) -> str:
    if entry[0] == LIVE[0]:
        return msgspec.json.encode({"type": "live", "cursor": entry[1].decode()}).decode()
    item = event_item(game_id, *entry)
    return msgspec.json.encode({"type": "event", "cursor": item.cursor, "event": item.event}).decode()


def _seat(entry: Entry) -> str:
    if entry[0] == LIVE[0]:
        return msgspec.json.encode({"type": "live", "cursor": entry[1].decode()}).decode()
    message = _seat_message.decode(entry[1])
    message["cursor"] = entry[0]
    return msgspec.json.encode(message).decode()


def routes(deps: Deps) -> list[Any]:
    @websocket("/v1/games/{game_id:str}/events/ws")
    async def public_events(
        socket: WebSocket[Any, Any, Any],
        game_id: FromPath[str],
        after: FromQuery[str | None] = None,
        from_version: Annotated[int | None, QueryParameter(ge=1)] = None,
    ) -> None:
        await socket.accept()
        try:
            game_id_or_404(game_id)
            start = cursor_of(after, from_version)
            if not await deps.redis.exists(deps.keys.log(game_id)):
                raise await not_live(deps, game_id)
            sub = deps.hub.subscribe(deps.keys.public(game_id))
        except Problem as problem:
            await _fail(socket, problem)
            return
        except Busy as exc:
            await _fail(socket, Problem(503, "busy", "Too many subscribers", str(exc)))
            return
        except Exception as exc:
            await _fail(socket, _unexpected(exc, game_id))
            return
        pump = asyncio.ensure_future(
            _pump(socket, deps.hub.follow(sub, start), functools.partial(_public, game_id), asyncio.Lock())
        )
        await _until_closed(socket, pump)

    @websocket(f"{SEAT}/ws")
    async def seat_socket(
        socket: WebSocket[Any, Any, Any],
        game_id: FromPath[str],
        seat: FromPath[int],
        after: FromQuery[str | None] = None,
    ) -> None:
        await socket.accept()
        try:
            token = await _token(socket)
            await seat_game(deps, game_id, seat, token)
            start = cursor_of(after, None) if after is not None else None
            sub = deps.hub.subscribe(deps.keys.seat(game_id, seat))
        except Problem as problem:
            await _fail(socket, problem)
            return
        except Busy as exc:
            await _fail(socket, Problem(503, "busy", "Too many subscribers", str(exc)))
            return
        except WebSocketDisconnect:
            return
        except Exception as exc:
            await _fail(socket, _unexpected(exc, game_id))
            return
        lock = asyncio.Lock()
        pump = asyncio.ensure_future(_pump(socket, deps.hub.follow(sub, start, latest_only=True), _seat, lock))
        commands = asyncio.ensure_future(_commands(deps, socket, game_id, seat, token, lock))
        try:
            await asyncio.wait({pump, commands}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (pump, commands):
                task.cancel()
            for task in (pump, commands):
                with contextlib.suppress(BaseException):
                    await task
        await _ended(socket, pump, game_id)

    return [public_events, seat_socket]


def _frame(event: Any) -> bytes:
    """A received WebSocket message's bytes, text or binary."""
    data = event.get("bytes")
    if data:
        return bytes(data)
    return str(event.get("text") or "").encode()


async def _token(socket: WebSocket[Any, Any, Any]) -> str:
    """From `Authorization: Bearer`, else from a first `auth` message."""
    header = socket.headers.get("authorization")
    if header is not None:
        return bearer(socket.headers)
    try:
        event = await asyncio.wait_for(socket.receive(), AUTH_TIMEOUT_S)
    except TimeoutError:
        raise Problem(401, "token-required", "Seat token required", "no token in time") from None
    if event["type"] == "websocket.disconnect":
        raise WebSocketDisconnect(detail="disconnected")
    try:
        message = _client.decode(_frame(event))
    except (msgspec.DecodeError, msgspec.ValidationError):
        message = None
    if not isinstance(message, AuthMessage) or not message.token:
        raise Problem(401, "token-required", "Seat token required", 'send {"type": "auth", "token": "..."} first')
    return message.token


async def _commands(
    deps: Deps, socket: WebSocket[Any, Any, Any], game_id: str, seat: int, token: str, send_lock: asyncio.Lock
) -> None:
    """Take the seat's commands until it leaves; each is answered by `outcome` or `problem`."""
    slots = asyncio.Semaphore(IN_FLIGHT)
    running: set[asyncio.Task[None]] = set()

    address, client = address_of(socket.scope), credential_id(token.encode())

    async def answer(message: CommandMessage) -> None:
        try:
            limited = await deps.limits.refusal(address, client, deps.metrics)
            if limited is not None:
                raise limited  # each command counts, as over HTTP
            result = await send_command(deps, game_id, seat, token, bytes(message.command))
            text = msgspec.json.encode({"type": "outcome", "ref": message.ref, "result": result}).decode()
        except Problem as problem:
            body = ProblemMessage(problem=problem.body(socket.url.path), ref=message.ref)
            text = msgspec.json.encode(body).decode()
        except Exception as exc:
            log.error("ws_command_failed", game_id=game_id, seat=seat, error=repr(exc), exc_info=exc)
            internal = Problem(500, "internal", "Internal error")
            text = msgspec.json.encode(ProblemMessage(problem=internal.body(), ref=message.ref)).decode()
        finally:
            slots.release()
        async with send_lock:
            with contextlib.suppress(Exception):
                await socket.send_text(text)

    try:
        while True:
            event = await socket.receive()
            if event["type"] == "websocket.disconnect":
                return
            try:
                message = _client.decode(_frame(event))
            except (msgspec.DecodeError, msgspec.ValidationError, RecursionError) as exc:
                await _fail(socket, Problem(400, "bad-message", "Unreadable message", str(exc)[:200]), close=False)
                continue
            if not isinstance(message, CommandMessage):
                continue  # a repeated auth message: nothing to do
            await slots.acquire()
            task = asyncio.ensure_future(answer(message))
            running.add(task)
            task.add_done_callback(running.discard)
    finally:
        for task in running:
            task.cancel()

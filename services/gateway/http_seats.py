"""HTTP routes about one seat: join it (the token comes back once), see what it may see, send its
commands (the seat token as bearer), seat a reference bot in it."""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Request, post
from litestar import get as get_route
from litestar.params import FromPath

from contracts import codec
from contracts import lifecycle as lc
from contracts.protocol import Action, HostBot
from contracts.registry import type_name
from games import match as m
from services.bots import make_bot
from services.gateway import bodies
from services.gateway.auth import api_key, bearer, game_id_or_404, no_such_game, seat_game
from services.gateway.deps import Deps
from services.gateway.http_games import problems
from services.gateway.problems import Problem
from services.gateway.responses import BotQueued, CommandResult, Joined, Outcome, SeatView

SEAT = "/v1/games/{game_id:str}/seats/{seat:int}"


def seat_view(agg: m.Match, seat: int) -> SeatView:
    view = msgspec.to_builtins(agg.rules.view(agg.game, seat)) if agg.game is not None else None
    acting = m.to_act(agg)
    legal = (
        [Action(type=type_name(a), payload=msgspec.to_builtins(a)) for a in agg.rules.legal_actions(agg.game, seat)]
        if seat in acting
        else []
    )
    return SeatView(
        game_id=agg.game_id,
        seat=seat,
        version=agg.version,
        status=agg.status,
        to_act=acting,
        view=view,
        legal_actions=legal,
        data_version=agg.data_version,
    )


async def send_command(deps: Deps, game_id: str, seat: int, token: str, raw: bytes) -> CommandResult:
    """Decode, check the token, send, wait; a refusal raises its problem. Shared with the seat's
    WebSocket."""
    type_, body = bodies.decode_command(raw)
    await seat_game(deps, game_id, seat, token)
    env = deps.commands.envelope(
        game_id,
        type_,
        body.payload,
        seat=seat,
        token=token,
        expected_version=body.expected_version,
        command_id=body.command_id,
        correlation_id=body.correlation_id,
    )
    reply = await deps.commands.accepted(env)
    o = reply.outcome
    return CommandResult(game_id=game_id, command_id=o.command_id, version=o.to_version, outcome=Outcome.of(o))


def routes(deps: Deps) -> list[Any]:
    @post(
        f"{SEAT}/join",
        summary="Join a seat",
        description="Answers 201 with the seat's token, shown this once (keep it secret: it is the seat). "
        "No API key needed. Retrying with the same `command_id` and body through the same gateway "
        "returns the same token.",
        tags=["seats"],
        status_code=201,
        responses=problems(400, 404, 409, 413, 422, 429, 504),
    )
    async def join(request: Request[Any, Any, Any], game_id: FromPath[str], seat: FromPath[int]) -> Joined:
        game_id_or_404(game_id)
        body: bodies.JoinBody = bodies.decode_as(await request.body(), bodies.JoinBody)
        if not 0 <= seat < 64:
            raise Problem(404, "no-such-seat", "No such seat", f"seat {seat}", game_id=game_id)
        payload = lc.JoinSeat(seat=seat, name=body.name, kind=body.kind)
        env = deps.commands.envelope(game_id, "lifecycle.JoinSeat", payload, command_id=body.command_id)
        reply = await deps.commands.accepted(env)
        o = reply.outcome
        if reply.token is None:
            # An accepted join answered again to a message that is not the very same one.
            raise Problem(
                409,
                "token-not-returned",
                "The seat was joined by this command id already",
                "the token is only returned to the identical request",
                game_id=game_id,
                command_id=o.command_id,
            )
        return Joined(
            game_id=game_id,
            seat=seat,
            token=reply.token,
            command_id=o.command_id,
            version=o.to_version,
            outcome=Outcome.of(o),
        )

    @get_route(
        SEAT,
        summary="What a seat may see",
        description="The seat's own `view` now, `to_act`, and its `legal_actions` when it is to act "
        "(each a ready command: send its `type` and `payload`, with `expected_version` = `version`).",
        tags=["seats"],
        security=[{"seatToken": []}],
        responses=problems(401, 403, 404, 429),
    )
    async def view(request: Request[Any, Any, Any], game_id: FromPath[str], seat: FromPath[int]) -> SeatView:
        token = bearer(request.headers)
        agg = await seat_game(deps, game_id, seat, token, fresh=True)
        return seat_view(agg, seat)

    @post(
        f"{SEAT}/commands",
        summary="Send a seat's command",
        description="Body: one of CommandBody (`type` names the command, `payload` its fields; unknown "
        "fields are refused). A refusal by the referee is a problem with `rule` and `text` (409 for a "
        "move the state does not allow, 422 for a malformed one); 504 means no outcome in time: send "
        "the same body again (same `command_id`) to learn it.",
        tags=["seats"],
        security=[{"seatToken": []}],
        status_code=200,
        responses=problems(400, 401, 403, 404, 409, 413, 422, 429, 504),
    )
    async def command(request: Request[Any, Any, Any], game_id: FromPath[str], seat: FromPath[int]) -> CommandResult:
        token = bearer(request.headers)
        return await send_command(deps, game_id, seat, token, await request.body())

    @post(
        f"{SEAT}/bot",
        summary="Seat a reference bot",
        description="Needs an API key with the `bots` scope. Asks the bot runner (its lobby stream) to join "
        "the seat with a bot of `kind` and play it; answers 202 once asked.",
        tags=["seats"],
        security=[{"apiKey": []}],
        status_code=202,
        responses=problems(400, 401, 403, 404, 409, 413, 422, 429),
    )
    async def host_bot(request: Request[Any, Any, Any], game_id: FromPath[str], seat: FromPath[int]) -> BotQueued:
        await api_key(deps, request.headers, "bots")
        game_id_or_404(game_id)
        body: bodies.HostBotBody = bodies.decode_as(await request.body(), bodies.HostBotBody)
        agg = await deps.games.current(game_id)
        if agg is None:
            raise no_such_game(game_id)
        if not 0 <= seat < agg.num_players:
            raise Problem(404, "no-such-seat", "No such seat", f"{agg.num_players} seats", game_id=game_id)
        if agg.status != m.OPEN:
            raise Problem(409, "not-open", "The game is not open", f"it is {agg.status}", game_id=game_id)
        if agg.seats[seat] is not None:
            raise Problem(409, "seat-taken", "The seat is taken", f"seat {seat}", game_id=game_id)
        hosted = deps.settings.bots
        try:
            if body.kind not in hosted:
                raise ValueError(f"the bot runner hosts {', '.join(hosted)}")
            make_bot(body.kind, agg.game_type, body.seed)
        except ValueError as exc:
            raise Problem(422, "unknown-bot", "Unknown bot kind", str(exc)) from None
        name = body.name or body.kind
        req = HostBot(game_id=game_id, seat=seat, kind=body.kind, game_type=agg.game_type, name=name, seed=body.seed)
        await deps.redis.xadd(deps.lobby, {"data": codec.encode(req)}, maxlen=10000, approximate=True)
        return BotQueued(game_id=game_id, seat=seat, kind=body.kind, name=name)

    return [join, view, command, host_bot]

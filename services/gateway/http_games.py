"""HTTP routes about games as a whole: create, list, public view at any version, public events,
audit of a command, export, rule texts."""

from __future__ import annotations

import re
import uuid
from typing import Annotated, Any

import msgspec
from litestar import Request, Response, get, post
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import FromPath, FromQuery, QueryParameter
from litestar.response import ServerSentEvent, ServerSentEventMessage

from contracts import codec
from contracts import lifecycle as lc
from games.catalog import GAMES
from services import history
from services.gateway import bodies, lobby, replaying
from services.gateway.auth import api_key, game_id_or_404, no_such_game, not_live
from services.gateway.deps import Deps
from services.gateway.problems import PROBLEM_JSON, Problem, ProblemDetail
from services.gateway.responses import (
    AuditReport,
    Created,
    EventItem,
    EventPage,
    GameList,
    Outcome,
    PublicState,
    Ratings,
    RuleText,
)
from services.gateway.rules import RULES, rule
from services.gateway.streams import LIVE, Busy, TooSlow, entry_key

ENTRY_ID = re.compile(r"\d{1,20}-\d{1,20}")
_event = msgspec.json.Decoder(dict[str, Any])


def problems(*codes: int) -> dict[int, ResponseSpec]:
    return {
        code: ResponseSpec(ProblemDetail, description="Problem details (RFC 9457)", media_type=PROBLEM_JSON)
        for code in codes
    }


def cursor_of(after: str | None, from_version: int | None) -> str | None:
    """The exclusive start of a public-stream read: `after` (an entry id) or just before the
    events of `from_version`."""
    if after is not None:
        if after.isdigit():
            after = f"{after}-0"  # a bare version: after that version's event
        if not ENTRY_ID.fullmatch(after):
            raise Problem(400, "invalid-parameter", "Invalid cursor", "`after` is an event's `cursor`, e.g. 12-0")
        return after
    if from_version is not None:
        return f"{max(0, from_version - 1)}-18446744073709551615" if from_version > 1 else None
    return None


def event_item(game_id: str, entry_id: str, data: bytes) -> EventItem:
    """A public stream entry as clients get it: a whole EventEnvelope (the entry leaves out what
    its key and id say, contracts.envelope.StoredEvent)."""
    return EventItem(cursor=entry_id, event=codec.fill_in(_event.decode(data), game_id, codec.entry_version(entry_id)))


def routes(deps: Deps) -> list[Any]:
    @post(
        "/v1/games",
        summary="Create a game",
        description="Needs an API key with the `create` scope. Answers 201 with the game id.",
        tags=["games"],
        security=[{"apiKey": []}],
        responses=problems(400, 401, 403, 409, 413, 422, 429, 504),
        status_code=201,
    )
    async def create_game(request: Request[Any, Any, Any]) -> Created:
        await api_key(deps, request.headers, "create")
        body: bodies.CreateGameBody = bodies.decode_as(await request.body(), bodies.CreateGameBody)
        if body.game_type not in GAMES:
            raise Problem(422, "unknown-game-type", "Unknown game type", f"one of {', '.join(GAMES)}")
        game_id = body.game_id or uuid.uuid4().hex[:12]
        payload = lc.CreateGame(
            game_type=body.game_type, num_players=body.num_players, move_timeout_s=body.move_timeout_s
        )
        env = deps.commands.envelope(game_id, "lifecycle.CreateGame", payload, command_id=body.command_id)
        reply = await deps.commands.accepted(env)
        o = reply.outcome
        return Created(game_id=game_id, command_id=o.command_id, version=o.to_version, outcome=Outcome.of(o))

    @get(
        "/v1/games",
        summary="List games",
        description="From the read models, newest first; filter by `title` (game type) and `status` "
        "(open, running, over); page with `cursor` = the previous page's `next`.",
        tags=["games"],
        responses=problems(400, 429),
    )
    async def list_games(
        title: FromQuery[str | None] = None,
        status: FromQuery[str | None] = None,
        limit: Annotated[int, QueryParameter(ge=1, le=200)] = 50,
        cursor: FromQuery[str | None] = None,
    ) -> GameList:
        return await lobby.list_games(deps, title, status, limit, cursor)

    @get(
        "/v1/ratings",
        summary="Player ratings",
        description="OpenSkill (Plackett-Luce) ratings per title and player name over every finished "
        "game, oldest first: winners rank first, the others by score; a hosted bot's name is its kind "
        "unless it was named. Filter by `title`.",
        tags=["games"],
        responses=problems(429),
    )
    async def player_ratings(title: FromQuery[str | None] = None) -> Ratings:
        return await lobby.player_ratings(deps, title)

    @get(
        "/v1/games/{game_id:str}",
        summary="A game's public state",
        description="`summary` and `view(state, None)`: the projector's read model, or with `version` the "
        "game folded from its log at that version. `min_version`: fold from the log if the read model "
        "is older. The seed appears only once the game is over.",
        tags=["games"],
        responses=problems(400, 404, 429),
    )
    async def game(
        game_id: FromPath[str],
        version: Annotated[int | None, QueryParameter(ge=1)] = None,
        min_version: Annotated[int | None, QueryParameter(ge=0)] = None,
    ) -> PublicState:
        return await lobby.game_state(deps, game_id_or_404(game_id), version, min_version)

    @get(
        "/v1/games/{game_id:str}/events",
        summary="A game's public events",
        description="In order, at most `limit`, after the cursor `after` (exclusive; an event's `cursor`) or "
        "from `from_version` (inclusive). Refusals appear as lifecycle.CommandRejected.",
        tags=["events"],
        responses=problems(400, 404, 429),
    )
    async def events(
        game_id: FromPath[str],
        after: FromQuery[str | None] = None,
        from_version: Annotated[int | None, QueryParameter(ge=1)] = None,
        limit: Annotated[int, QueryParameter(ge=1, le=1000)] = 200,
    ) -> EventPage:
        game_id_or_404(game_id)
        start = cursor_of(after, from_version) or "0-0"
        page = await deps.hub.page(deps.keys.public(game_id), start, limit)
        if not page and (archived := await deps.store.archived(game_id)) is not None:
            # Its public stream went with it: rebuilt from the archived history.
            first = entry_key(start)
            items = [i for i in replaying.public_items(archived) if entry_key(i.cursor) > first][:limit]
            return EventPage(events=items, next=items[-1].cursor if items else after)
        if not page and start == "0-0" and not await deps.redis.exists(deps.keys.log(game_id)):
            raise no_such_game(game_id)
        items = [event_item(game_id, i, d) for i, d in page]
        return EventPage(events=items, next=items[-1].cursor if items else after)

    @get(
        "/v1/games/{game_id:str}/events/sse",
        summary="A game's public events, live (Server-Sent Events)",
        description="Each message: `id` = the cursor, `event: event`, `data` = an EventItem. Resumes after "
        "`Last-Event-ID` (sent by browsers on reconnect) or `after`, each event exactly once.",
        tags=["events"],
        responses=problems(400, 404, 410, 429, 503),
    )
    async def events_sse(
        request: Request[Any, Any, Any],
        game_id: FromPath[str],
        after: FromQuery[str | None] = None,
        from_version: Annotated[int | None, QueryParameter(ge=1)] = None,
    ) -> ServerSentEvent:
        game_id_or_404(game_id)
        start = cursor_of(request.headers.get("last-event-id") or after, from_version)
        if not await deps.redis.exists(deps.keys.log(game_id)):
            raise await not_live(deps, game_id)
        try:
            sub = deps.hub.subscribe(deps.keys.public(game_id))
        except Busy as exc:
            raise Problem(503, "busy", "Too many subscribers", str(exc), headers={"Retry-After": "5"}) from None

        async def messages() -> Any:
            try:
                async for entry in deps.hub.follow(sub, start):
                    yield _sse(game_id, entry)
            except TooSlow:
                return

        return ServerSentEvent(messages(), headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})

    @get(
        "/v1/games/{game_id:str}/audit",
        summary="Audit one command",
        description="Exactly one of `command_id` (any command, accepted or refused) or `version` (the "
        "command that wrote it): the state before, the command, the verdict, the legal actions then, "
        "the events it produced (`services.history.audit`), and the text of the rule a refusal cites.",
        tags=["games"],
        responses=problems(400, 404, 429),
    )
    async def audit(
        game_id: FromPath[str], command_id: FromQuery[str | None] = None, version: FromQuery[int | None] = None
    ) -> AuditReport:
        game_id_or_404(game_id)
        if (command_id is None) == (version is None):
            raise Problem(400, "invalid-parameter", "Give exactly one of command_id or version")
        hist = await history.load(deps.store, game_id)
        if not hist.events:
            raise no_such_game(game_id)
        return replaying.audit_report(hist, version, command_id)

    @get(
        "/v1/games/{game_id:str}/export",
        summary="Download a game (JSON Lines)",
        description="The file `dicestream export` writes: every private event and command outcome, for "
        "`dicestream replay/verify/audit FILE`. A game not over yet only with an `admin` API key (its "
        "export holds the seed and the deck order).",
        tags=["games"],
        media_type="application/x-ndjson",
        responses=problems(401, 403, 404, 429),
    )
    async def export(request: Request[Any, Any, Any], game_id: FromPath[str]) -> Response[bytes]:
        game_id_or_404(game_id)
        hist = await history.load(deps.store, game_id)
        if not hist.events:
            raise no_such_game(game_id)
        if history.fold(hist).status != "over":
            if not request.headers.get("x-api-key"):
                raise Problem(
                    403,
                    "game-not-over",
                    "The game is not over",
                    "its export would reveal its seed and deck order (an admin API key may still export it)",
                    game_id=game_id,
                )
            await api_key(deps, request.headers, "admin")
        data = b"\n".join(history.export_lines(hist)) + b"\n"
        return Response(
            data,
            media_type="application/x-ndjson",
            headers={"Content-Disposition": f'attachment; filename="{game_id}.jsonl"', "Cache-Control": "no-store"},
        )

    @get("/v1/rules", summary="Every rule id a refusal can cite", tags=["rules"])
    async def rules() -> list[RuleText]:
        return list(RULES.values())

    @get("/v1/rules/{rule_id:str}", summary="One rule's text", tags=["rules"], responses=problems(404))
    async def one_rule(rule_id: FromPath[str]) -> RuleText:
        found = rule(rule_id)
        if found is None:
            raise Problem(404, "no-such-rule", "No such rule", rule_id[:100])
        return found

    return [create_game, list_games, player_ratings, game, events, events_sse, audit, export, rules, one_rule]


def _sse(game_id: str, entry: tuple[str, bytes]) -> ServerSentEventMessage:
    if entry[0] == LIVE[0]:
        return ServerSentEventMessage(data=msgspec.json.encode({"cursor": entry[1].decode()}).decode(), event="live")
    item = event_item(game_id, *entry)
    return ServerSentEventMessage(data=msgspec.json.encode(item).decode(), id=item.cursor, event="event")

"""What the web page reads besides the games API: each game's component data (the catalog), public
states at consecutive versions (the replay), the fairness report of a finished game, game files
opened in the browser (replayed and audited with nothing in Redis), and the page itself."""

from __future__ import annotations

import asyncio
import hashlib
from pathlib import Path
from typing import Annotated, Any

import msgspec
from litestar import Request, Response, get, post
from litestar.params import FromPath, FromQuery, QueryParameter

from contracts import codec
from games.catalog import GAMES, SPECS, VARIANT_FILES
from services import history
from services.gateway import replaying
from services.gateway.auth import game_id_or_404, no_such_game
from services.gateway.deps import Deps
from services.gateway.http_games import problems
from services.gateway.problems import Problem
from services.gateway.responses import AuditReport, Catalog, CatalogEntry, Fairness, GameFile, StatePage

STATIC = Path(__file__).parent / "static"
# The page's own documents: served as they are, with a policy that lets them load nothing but
# this gateway's assets and talk to nothing but this gateway.
PAGE_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}
Limit = Annotated[int, QueryParameter(ge=1, le=replaying.MAX_STATES)]
FILE_BODY = "The JSON Lines file `dicestream export` writes (or the gateway's `/export`)."


TYPES = {
    ".html": "text/html; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".svg": "image/svg+xml",
}


def load_assets() -> dict[str, tuple[bytes, str, str]]:
    """Every file under static/, read once: path -> (bytes, media type, ETag)."""
    out = {}
    for path in sorted(STATIC.rglob("*")):
        if path.is_file() and path.suffix in TYPES:
            body = path.read_bytes()
            etag = '"' + hashlib.sha256(body).hexdigest()[:20] + '"'
            out[path.relative_to(STATIC).as_posix()] = (body, TYPES[path.suffix], etag)
    return out


def entry(title: str) -> CatalogEntry:
    rules = GAMES[title]
    return CatalogEntry(
        title=title,
        name=SPECS[title].title,
        min_players=rules.min_players,
        max_players=rules.max_players,
        rules_version=rules.rules_version,
        data_version=rules.data_version,
    )


def catalog(title: str, data_version: str | None = None) -> Catalog:
    """The title's TOML data file as JSON, every field with its default filled in (as the game's
    loader reads it): what the boards' names and values are drawn from. With the data_version of
    earlier data this build keeps (games.spec.GameSpec.earlier_data) or of a variant the environment
    names (DICESTREAM_VARIANT_DATA), that data."""
    spec = SPECS[title]
    published = spec.catalog_data
    current = entry(title)
    if published is None:
        return Catalog(**msgspec.structs.asdict(current), data={})
    if data_version is not None and (title, data_version) in VARIANT_FILES:
        file = VARIANT_FILES[(title, data_version)]
    elif data_version is not None and data_version in spec.earlier_data:
        file = spec.package_dir / spec.earlier_data[data_version]
    else:
        return Catalog(**msgspec.structs.asdict(current), data=published())
    earlier = msgspec.structs.replace(current, data_version=data_version)
    return Catalog(**msgspec.structs.asdict(earlier), data=published(file))


async def _history(deps: Deps, game_id: str, outcomes: bool = True) -> history.History:
    game_id_or_404(game_id)
    if outcomes:
        hist = await history.load(deps.store, game_id)
    else:
        events = [codec.decode_event(data, game_id, v) for v, data in await deps.store.read(game_id)]
        hist = history.History(game_id=game_id, events=events, outcomes=[])
    if not hist.events:
        raise no_such_game(game_id)
    return hist


def routes(deps: Deps) -> list[Any]:
    catalogs: dict[tuple[str, str | None], bytes] = {(t, None): msgspec.json.encode(catalog(t)) for t in GAMES}
    catalogs.update({(t, v): msgspec.json.encode(catalog(t, v)) for t in GAMES for v in SPECS[t].earlier_data})
    catalogs.update({(t, v): msgspec.json.encode(catalog(t, v)) for t, v in VARIANT_FILES})
    files = replaying.FileCache()

    async def opened(request: Request[Any, Any, Any]) -> replaying.OpenedFile:
        body = await request.body()
        if len(body) > deps.gateway.max_file_bytes:
            raise Problem(413, "body-too-large", "Request body too large", f"at most {deps.gateway.max_file_bytes}")
        # Parsing and folding a large file takes a while: off the event loop.
        return await asyncio.to_thread(files.open, body)

    @get("/v1/catalog", summary="The games and their versions", tags=["catalog"])
    async def titles() -> list[CatalogEntry]:
        return [entry(t) for t in GAMES]

    @get(
        "/v1/catalog/{title:str}",
        summary="A game's component data",
        description="Every card, tile, board and table value of the title, as its data file "
        "(`games/<title>/data/*.toml`) holds it: the page draws names and values from this. With "
        "`data_version` (a game summary's), the data that game is played with when this build keeps "
        "it; otherwise the current data (the answer's `data_version` says which).",
        tags=["catalog"],
        responses=problems(404),
    )
    async def one_catalog(title: FromPath[str], data_version: FromQuery[str | None] = None) -> Response[bytes]:
        if (title, None) not in catalogs:
            raise Problem(404, "not-found", "No such game type", title[:100])
        body = catalogs.get((title, data_version)) or catalogs[(title, None)]
        return Response(body, media_type="application/json", headers={"Cache-Control": "no-cache"})

    @get(
        "/v1/games/{game_id:str}/states",
        summary="Public states at consecutive versions",
        description="`view(state, None)` and the summary at each version from `from_version`, at most "
        "`limit` (200): what a replay draws, folded once.",
        tags=["games"],
        responses=problems(400, 404, 429),
    )
    async def states(game_id: FromPath[str], from_version: FromQuery[int] = 1, limit: Limit = 50) -> StatePage:
        return replaying.states(await _history(deps, game_id, outcomes=False), from_version, limit)

    @get(
        "/v1/games/{game_id:str}/fairness",
        summary="A finished game's fairness report",
        description="What `dicestream verify` checks: the revealed seed matches the commitment made at "
        "creation, and every command judged again from the seed yields the recorded events (every roll "
        "and shuffle) and result. Before the end: `over` false and nothing else.",
        tags=["games"],
        responses=problems(404, 429),
    )
    async def fairness(game_id: FromPath[str]) -> Fairness:
        known = deps.fairness.get(game_id)
        if known is not None:
            report: Fairness = known
            return report
        hist = await _history(deps, game_id)
        report = await asyncio.to_thread(replaying.fairness, hist)
        if report.over:  # final: never changes again
            if len(deps.fairness) >= 1000:
                deps.fairness.pop(next(iter(deps.fairness)))
            deps.fairness[game_id] = report
        return report

    @post(
        "/v1/files/open",
        summary="Open a game file",
        description=f"{FILE_BODY} Answers what the page draws: the header, the summary at its end, its "
        "public events (refusals too) and its fairness report. Nothing is stored and Redis is not read: "
        "send the file again with /v1/files/states and /v1/files/audit. At most DICESTREAM_MAX_FILE_BYTES; "
        "limited per address by DICESTREAM_FILE_RATE_LIMIT.",
        tags=["files"],
        status_code=200,
        request_max_body_size=deps.gateway.max_file_bytes,
        responses=problems(413, 422, 429),
    )
    async def open_file(request: Request[Any, Any, Any]) -> GameFile:
        found = await opened(request)
        return await asyncio.to_thread(replaying.game_file, found)

    @post(
        "/v1/files/states",
        summary="Public states of a game file",
        description=f"{FILE_BODY} As `/v1/games/{{game}}/states`.",
        tags=["files"],
        status_code=200,
        request_max_body_size=deps.gateway.max_file_bytes,
        responses=problems(404, 413, 422, 429),
    )
    async def file_states(
        request: Request[Any, Any, Any], from_version: FromQuery[int] = 1, limit: Limit = 50
    ) -> StatePage:
        found = await opened(request)
        return await asyncio.to_thread(replaying.states, found.history, from_version, limit)

    @post(
        "/v1/files/audit",
        summary="Audit a command of a game file",
        description=f"{FILE_BODY} As `/v1/games/{{game}}/audit`.",
        tags=["files"],
        status_code=200,
        request_max_body_size=deps.gateway.max_file_bytes,
        responses=problems(400, 404, 413, 422, 429),
    )
    async def file_audit(
        request: Request[Any, Any, Any], command_id: FromQuery[str | None] = None, version: FromQuery[int | None] = None
    ) -> AuditReport:
        found = await opened(request)
        return await asyncio.to_thread(replaying.audit_report, found.history, version, command_id)

    index = (STATIC / "index.html").read_bytes()

    @get(
        ["/", "/open", "/fairness", "/games/{game_id:str}", "/games/{game_id:str}/audit/{command_id:str}"],
        include_in_schema=False,
    )
    async def page() -> Response[bytes]:
        # One document; its script draws the lobby, a game, an audit, an opened file or the
        # fairness how-to from the path.
        return Response(index, media_type="text/html; charset=utf-8", headers=PAGE_HEADERS)

    @get("/favicon.ico", include_in_schema=False)
    async def favicon() -> Response[bytes]:
        return Response((STATIC / "favicon.svg").read_bytes(), media_type="image/svg+xml")

    assets = load_assets()

    @get("/static/{path:path}", include_in_schema=False)
    async def static(request: Request[Any, Any, Any], path: FromPath[str]) -> Response[bytes]:
        found = assets.get(path.lstrip("/"))
        if found is None:
            raise Problem(404, "not-found", "Not found", path[:100])
        body, media_type, etag = found
        headers = {**PAGE_HEADERS, "ETag": etag}
        if request.headers.get("if-none-match") == etag:
            return Response(b"", status_code=304, headers=headers)
        return Response(body, media_type=media_type, headers=headers)

    return [titles, one_catalog, states, fairness, open_file, file_states, file_audit, page, favicon, static]

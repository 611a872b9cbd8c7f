"""Errors as RFC 9457 problem details (`application/problem+json`), refusals with their rule."""

from __future__ import annotations

from typing import Any

import msgspec
import redis.exceptions
import structlog
from litestar import Request, Response
from litestar.exceptions import HTTPException, ValidationException

from contracts.outcome import CommandOutcome
from services.archive import ArchiveDamaged, ArchivedGame
from services.gateway.responses import Outcome

log = structlog.get_logger("gateway")
PROBLEM_JSON = "application/problem+json"
TYPE_PREFIX = "urn:dicestream:problem:"


class FieldError(msgspec.Struct, frozen=True, kw_only=True):
    message: str
    # Where in the request: a JSON path into the body (`$.payload.seat`) or a parameter's name.
    at: str | None = None


class ProblemDetail(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """RFC 9457. `type` is `urn:dicestream:problem:<slug>` (the slugs are listed in docs/http.md);
    a referee's refusal has `rule` and `text` (docs/rules) and the whole `outcome`."""

    type: str
    title: str
    status: int
    detail: str = ""
    instance: str | None = None
    rule: str | None = None
    text: str | None = None
    game_id: str | None = None
    command_id: str | None = None
    outcome: Outcome | None = None
    errors: list[FieldError] | None = None
    retry_after_s: float | None = None


class Problem(Exception):
    """Raised anywhere in a handler; answered as problem details."""

    def __init__(
        self,
        status: int,
        slug: str,
        title: str,
        detail: str = "",
        *,
        headers: dict[str, str] | None = None,
        **extra: Any,
    ) -> None:
        super().__init__(f"{status} {slug}: {detail or title}")
        self.status = status
        self.slug = slug
        self.title = title
        self.detail = detail
        self.headers = headers or {}
        self.extra = extra

    def body(self, instance: str | None = None) -> ProblemDetail:
        return ProblemDetail(
            type=TYPE_PREFIX + self.slug,
            title=self.title,
            status=self.status,
            detail=self.detail,
            instance=instance,
            **self.extra,
        )


# Refusals that are about the request, not the state of the game; the rest are 409 Conflict.
_REFUSAL_STATUS = {
    "GAME-AUTH": 403,
    "GAME-NOT-ADMIN": 403,
    "GAME-NOT-FOUND": 404,
    "GAME-MALFORMED": 422,
    "GAME-UNKNOWN-TYPE": 422,
    "GAME-UNKNOWN-GAME": 422,
    "GAME-PLAYERS": 422,
    "GAME-SEAT-RANGE": 422,
}


def refusal_status(rule: str | None) -> int:
    return _REFUSAL_STATUS.get(rule or "", 409)


def refused(o: CommandOutcome) -> Problem:
    return Problem(
        refusal_status(o.rule),
        "refused",
        f"Refused by the referee: {o.rule}",
        o.detail or "",
        rule=o.rule,
        text=o.text,
        game_id=o.game_id,
        command_id=o.command_id,
        outcome=Outcome.of(o),
    )


def response(problem: Problem, instance: str | None) -> Response[bytes]:
    return Response(
        msgspec.json.encode(problem.body(instance)),
        status_code=problem.status,
        media_type=PROBLEM_JSON,
        headers=problem.headers,
    )


_HTTP_SLUGS = {
    400: ("bad-request", "Bad request"),
    401: ("unauthorized", "Credentials required"),
    403: ("forbidden", "Forbidden"),
    404: ("not-found", "No such resource"),
    405: ("method-not-allowed", "Method not allowed"),
    413: ("body-too-large", "Request body too large"),
    429: ("rate-limited", "Too many requests"),
}


def from_http(exc: HTTPException) -> Problem:
    if isinstance(exc, ValidationException):
        errors = [
            FieldError(message=str(e.get("message", "")), at=str(e["key"]) if e.get("key") else None)
            for e in (exc.extra if isinstance(exc.extra, list) else [])
            if isinstance(e, dict)
        ]
        return Problem(400, "invalid-parameter", "A path or query parameter is invalid", errors=errors or None)
    slug, title = _HTTP_SLUGS.get(exc.status_code, ("http-error", "HTTP error"))
    headers = {k: v for k, v in (exc.headers or {}).items() if k.lower() in ("allow", "retry-after")}
    return Problem(exc.status_code, slug, title, str(exc.detail or ""), headers=headers)


def problem_handler(request: Request[Any, Any, Any], exc: Problem) -> Response[bytes]:
    return response(exc, request.url.path)


def http_handler(request: Request[Any, Any, Any], exc: HTTPException) -> Response[bytes]:
    return response(from_http(exc), request.url.path)


def redis_handler(request: Request[Any, Any, Any], exc: Exception) -> Response[bytes]:
    log.warning("redis_unavailable", path=request.url.path, error=str(exc))
    return response(
        Problem(503, "unavailable", "The game store is not answering", "try again shortly"), request.url.path
    )


def archived_handler(request: Request[Any, Any, Any], exc: ArchivedGame) -> Response[bytes]:
    # The gateway was started without the archive folder (DICESTREAM_ARCHIVE_DIR).
    problem = Problem(410, "archived", "The game is archived", str(exc), game_id=exc.game_id)
    return response(problem, request.url.path)


def damaged_handler(request: Request[Any, Any, Any], exc: ArchiveDamaged) -> Response[bytes]:
    # The operator's to mend (a file lost or changed after archiving); logged like any 500.
    log.error("archive_damaged", path=request.url.path, error=str(exc))
    problem = Problem(500, "archive-damaged", "The game's archive file is damaged", str(exc))
    return response(problem, request.url.path)


def internal_handler(request: Request[Any, Any, Any], exc: Exception) -> Response[bytes]:
    log.error("gateway_error", path=request.url.path, error=repr(exc), exc_info=exc)
    return response(Problem(500, "internal", "Internal error"), request.url.path)


EXCEPTION_HANDLERS: dict[Any, Any] = {
    Problem: problem_handler,
    HTTPException: http_handler,
    redis.exceptions.ConnectionError: redis_handler,
    redis.exceptions.TimeoutError: redis_handler,
    ArchivedGame: archived_handler,
    ArchiveDamaged: damaged_handler,
    Exception: internal_handler,
}

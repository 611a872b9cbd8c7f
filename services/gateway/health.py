"""Health, metrics and the OpenAPI document. A placeholder for the shared services/health.py:
`/livez` answers while the process runs, `/readyz` while Redis answers, `/metrics` is Prometheus."""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Request, Response, get
from prometheus_client import generate_latest

from services.gateway import openapi
from services.gateway.deps import Deps
from services.gateway.problems import Problem
from services.gateway.responses import Status


def routes(deps: Deps) -> list[Any]:
    document: list[bytes] = []

    @get("/livez", summary="Alive", tags=["health"])
    async def livez() -> Status:
        return Status(status="ok")

    @get("/readyz", summary="Ready: Redis answers", tags=["health"])
    async def readyz() -> Status:
        try:
            await deps.redis.ping()
        except Exception as exc:
            raise Problem(503, "unavailable", "Not ready", f"Redis: {exc}") from None
        return Status(status="ok")

    @get("/metrics", summary="Prometheus metrics", tags=["health"], include_in_schema=False)
    async def metrics() -> Response[bytes]:
        return Response(generate_latest(deps.metrics.registry), media_type="text/plain; version=0.0.4")

    @get("/openapi.json", summary="This API's OpenAPI document", include_in_schema=False)
    async def openapi_json(request: Request[Any, Any, Any]) -> Response[bytes]:
        if not document:
            document.append(msgspec.json.encode(openapi.patch(request.app.openapi_schema.to_schema())))
        return Response(document[0], media_type="application/json")

    return [livez, readyz, metrics, openapi_json]

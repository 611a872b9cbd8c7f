"""Health, metrics and the OpenAPI document on the gateway's own port: `/livez` while its
supervised loops run (503 while one is down), `/readyz` while Redis answers too, `/metrics`."""

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

    @get("/livez", summary="Alive: every loop runs", tags=["health"])
    async def livez() -> Status:
        if not deps.supervisor.live():
            raise Problem(503, "unavailable", "Not live", f"loops: {deps.supervisor.report()}")
        return Status(status="ok")

    @get("/readyz", summary="Ready: alive, and Redis answers", tags=["health"])
    async def readyz() -> Status:
        if not deps.supervisor.live():
            raise Problem(503, "unavailable", "Not ready", f"loops: {deps.supervisor.report()}")
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

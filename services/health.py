"""Each service's health: liveness (its loops run and made progress recently), readiness (it can do
its work: Redis answers, its groups exist, a referee holds leases) and Prometheus metrics, served
over HTTP at DICESTREAM_HEALTH_ADDR: GET /livez, /readyz (200 or 503, with a JSON report) and
/metrics (prometheus-client's text format)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol

from litestar import Litestar, MediaType, Response, get
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from services.config import parse_addr
from services.http import EmbeddedServer


class Checked(Protocol):
    name: str

    def live(self) -> tuple[bool, dict[str, Any]]: ...

    async def ready(self) -> tuple[bool, dict[str, Any]]: ...


def health_app(services: Sequence[Checked], before_metrics: Callable[[], Awaitable[None]] | None = None) -> Litestar:
    @get("/livez", sync_to_thread=False)
    def livez() -> Response[dict[str, Any]]:
        reports = {s.name: s.live() for s in services}
        ok = all(r[0] for r in reports.values())
        return Response({"live": ok, "services": {n: r[1] for n, r in reports.items()}}, status_code=200 if ok else 503)

    @get("/readyz")
    async def readyz() -> Response[dict[str, Any]]:
        reports = {s.name: await s.ready() for s in services}
        ok = all(r[0] for r in reports.values())
        return Response(
            {"ready": ok, "services": {n: r[1] for n, r in reports.items()}}, status_code=200 if ok else 503
        )

    @get("/metrics", media_type=MediaType.TEXT)
    async def scrape() -> Response[bytes]:
        if before_metrics is not None:
            await before_metrics()
        return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)

    return Litestar([livez, readyz, scrape], openapi_config=None)


async def serve_health(
    addr: str, services: Sequence[Checked], before_metrics: Callable[[], Awaitable[None]] | None = None
) -> EmbeddedServer:
    host, port = parse_addr("DICESTREAM_HEALTH_ADDR", addr)
    server = EmbeddedServer(health_app(services, before_metrics), host, port)
    await server.start()
    return server

"""The gateway: the one thing untrusted clients talk to (HTTP and WebSocket), so that no client
writes Redis. `create_app(deps)` is the ASGI app; `GatewayService` serves it with uvicorn in
this process, like the other services' start()/stop()."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import Iterator

import structlog
import uvicorn
from litestar import Litestar
from litestar.config.cors import CORSConfig
from litestar.openapi import OpenAPIConfig
from litestar.openapi.spec import Components, SecurityScheme

from services.config import Settings
from services.gateway import health, http_games, http_seats, http_web, ws
from services.gateway.deps import Deps
from services.gateway.problems import EXCEPTION_HANDLERS
from services.gateway.ratelimit import LimitsMiddleware
from services.gateway.settings import GatewaySettings, from_env
from services.service import Service, settle_gc

log = structlog.get_logger("gateway")

DESCRIPTION = """Play, watch and audit dicestream games over HTTP and WebSocket, with no Redis.
A seat's actions take its token as `Authorization: Bearer <token>` (JoinSeat returns it once);
creating games and seating bots take an API key as `X-API-Key`. Errors are RFC 9457 problem
details; a refusal by the referee carries the rule id and its text. See docs/http.md."""


def create_app(deps: Deps) -> Litestar:
    origins = list(deps.gateway.cors_origins)
    cors = (
        CORSConfig(
            allow_origins=origins,
            allow_methods=["GET", "POST", "OPTIONS"],
            allow_headers=["authorization", "content-type", "x-api-key", "last-event-id"],
            expose_headers=["retry-after", "content-disposition"],
            max_age=600,
        )
        if origins
        else None
    )
    deps.metrics.subscribers.set_function(lambda: deps.hub.subscribers)
    deps.metrics.streams.set_function(lambda: len(deps.hub.readers))
    return Litestar(
        route_handlers=[
            *http_games.routes(deps),
            *http_seats.routes(deps),
            *ws.routes(deps),
            *health.routes(deps),
            *http_web.routes(deps),
        ],
        middleware=[
            LimitsMiddleware(
                deps.limits, deps.gateway.max_body_bytes, deps.metrics, deps.local, deps.gateway.max_file_bytes
            )
        ],
        exception_handlers=EXCEPTION_HANDLERS,
        cors_config=cors,
        request_max_body_size=deps.gateway.max_body_bytes,
        openapi_config=OpenAPIConfig(
            title="dicestream gateway",
            version="1",
            description=DESCRIPTION,
            path="/schema",
            components=Components(
                security_schemes={
                    "seatToken": SecurityScheme(type="http", scheme="bearer", description="a seat's token"),
                    "apiKey": SecurityScheme(
                        type="apiKey", name="X-API-Key", security_scheme_in="header", description="a client's key"
                    ),
                }
            ),
        ),
        on_startup=[deps.start],
        on_shutdown=[deps.stop],
        logging_config=None,
        debug=False,
    )


class _Server(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        # The process's own signal handling stays in charge (dicestream up/serve stop every
        # service on SIGINT/SIGTERM); uvicorn's would replace it.
        yield


def bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise RuntimeError(f"DICESTREAM_HTTP_ADDR={host}:{port}: cannot listen there ({exc.strerror})") from None
    sock.listen(2048)
    sock.setblocking(False)
    return sock


class GatewayService(Service):
    def __init__(self, settings: Settings, url: str, gateway: GatewaySettings | None = None) -> None:
        self.gateway = gateway if gateway is not None else from_env()
        self.deps = Deps.create(settings, url, self.gateway)
        super().__init__("gateway", self.deps.redis)
        self.supervisor = self.deps.supervisor
        self.app = create_app(self.deps)
        self.server: _Server | None = None
        self._task: asyncio.Task[None] | None = None
        self._socket: socket.socket | None = None
        self.port = 0

    @property
    def url(self) -> str:
        host = self.gateway.host
        return f"http://[{host}]:{self.port}" if ":" in host else f"http://{host}:{self.port}"

    async def start(self) -> None:
        g = self.gateway
        self._socket = bind(g.host, g.port)
        self.port = self._socket.getsockname()[1]
        config = uvicorn.Config(
            self.app,
            lifespan="on",
            log_config=None,
            access_log=False,
            ws="websockets-sansio",
            ws_max_size=g.max_body_bytes,
            ws_per_message_deflate=False,
            proxy_headers=g.forwarded_allow_ips is not None,
            forwarded_allow_ips=g.forwarded_allow_ips or "",
            server_header=False,
            timeout_graceful_shutdown=3,
            timeout_keep_alive=30,
        )
        self.server = _Server(config)
        self._task = asyncio.create_task(self.server.serve(sockets=[self._socket]), name="gateway-uvicorn")
        while not self.server.started:
            if self._task.done():
                self._task.result()
                raise RuntimeError("the gateway stopped while starting (see its log)")
            await asyncio.sleep(0.01)
        # The cached games' states made full collections long enough to show in the latency's p99.
        settle_gc()
        log.info("gateway_started", url=self.url, instance=self.deps.instance)

    async def stop(self) -> None:
        if self.server is not None and self._task is not None:
            self.server.should_exit = True
            try:
                await asyncio.wait_for(asyncio.shield(self._task), 10)
            except TimeoutError:
                self._task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await self._task
        if self._socket is not None:
            self._socket.close()

"""The HTTP/WebSocket gateway untrusted clients talk to (see services/gateway/app.py, docs/http.md)."""

from services.gateway.app import GatewayService, create_app

__all__ = ["GatewayService", "create_app"]

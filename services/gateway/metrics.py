"""The gateway's Prometheus metrics, in a registry of its own (one per app: tests run several)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.requests = Counter(
            "dicestream_gateway_requests",
            "HTTP requests and WebSocket connections answered, by route and status",
            ["route", "method", "status"],
            registry=self.registry,
        )
        self.commands = Counter(
            "dicestream_gateway_commands",
            "Commands sent to the referee, by outcome (accepted, rejected, timeout)",
            ["outcome"],
            registry=self.registry,
        )
        self.command_seconds = Histogram(
            "dicestream_gateway_command_seconds",
            "From sending a command to the referee to its outcome",
            buckets=(0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10),
            registry=self.registry,
        )
        self.limited = Counter(
            "dicestream_gateway_rate_limited", "Requests refused by a rate limit", ["limit"], registry=self.registry
        )
        self.subscribers = Gauge(
            "dicestream_gateway_subscribers", "WebSocket and SSE subscribers connected", registry=self.registry
        )
        self.streams = Gauge(
            "dicestream_gateway_followed_streams",
            "Streams followed (one blocking Redis read each)",
            registry=self.registry,
        )

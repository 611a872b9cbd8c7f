"""structlog set-up shared by every service: JSON lines (or console) with bound context."""

from __future__ import annotations

import logging
import sys

import structlog


def configure(level: str = "info", fmt: str = "json") -> None:
    renderer: structlog.types.Processor = (
        structlog.processors.JSONRenderer() if fmt == "json" else structlog.dev.ConsoleRenderer()
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(logging.getLevelName(level.upper())),
        logger_factory=structlog.PrintLoggerFactory(sys.stderr),
        cache_logger_on_first_use=True,
    )
    # FastStream logs every message at INFO through stdlib logging; that costs ~13% throughput.
    logging.getLogger("faststream").setLevel(logging.WARNING)


def get(name: str) -> structlog.stdlib.BoundLogger:
    return structlog.get_logger(name)  # type: ignore[no-any-return]


def faststream_logger() -> logging.Logger:
    """The stdlib logger handed to every RedisBroker: warnings and errors only, since per-message
    and supervisor INFO lines cost throughput and drown the structured logs."""
    logger = logging.getLogger("dicestream.faststream")
    logger.setLevel(logging.WARNING)
    if not logger.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s faststream %(message)s"))
        logger.addHandler(handler)
        logger.propagate = False
    return logger

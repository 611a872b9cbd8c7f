"""structlog set-up shared by every service: JSON lines (or console) with bound context."""

from __future__ import annotations

import logging
import sys

import structlog

_format = "json"


def _renderer(fmt: str) -> structlog.types.Processor:
    return structlog.processors.JSONRenderer() if fmt == "json" else structlog.dev.ConsoleRenderer()


def configure(level: str = "info", fmt: str = "json") -> None:
    global _format
    _format = fmt
    renderer = _renderer(fmt)
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
    for handler in logging.getLogger("dicestream.faststream").handlers:
        handler.setFormatter(_stdlib_formatter())


def _stdlib_formatter() -> logging.Formatter:
    """FastStream's own (stdlib) log lines, rendered like the services' structlog lines."""
    return structlog.stdlib.ProcessorFormatter(
        processors=[
            structlog.stdlib.ProcessorFormatter.remove_processors_meta,
            structlog.processors.format_exc_info,
            _renderer(_format),
        ],
        foreign_pre_chain=[
            structlog.stdlib.add_log_level,
            structlog.stdlib.add_logger_name,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
        ],
    )


def get(name: str) -> structlog.stdlib.BoundLogger:
    return structlog.get_logger(name)  # type: ignore[no-any-return]


def faststream_logger() -> logging.Logger:
    """The stdlib logger handed to every RedisBroker: warnings and errors only, since per-message
    and supervisor INFO lines cost throughput and drown the structured logs."""
    logger = logging.getLogger("dicestream.faststream")
    logger.setLevel(logging.WARNING)
    if not logger.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(_stdlib_formatter())
        logger.addHandler(handler)
        logger.propagate = False
    return logger

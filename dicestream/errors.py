"""How a `dicestream` command ends, for scripts: an exit code, one line on stderr, JSON on stdout.

Every command exits with one of `Code`'s values (listed in `dicestream --help` and README). A
failure prints one line, `dicestream: <what failed>`, on stderr and no traceback; `--debug` (a
global option, or DICESTREAM_DEBUG=1) lets the exception through with its traceback instead.

Commands raise `CliError` (or one of its kinds) for what they refuse; `Group`, the command group
of `dicestream.cli.app`, turns any other exception into its code and line: Redis unreachable or
timing out into 3 naming the URL, a bad setting into 2 naming the variable, and so on.
"""

from __future__ import annotations

import contextlib
import os
import socket
import sys
from enum import IntEnum
from typing import Any, NoReturn
from urllib.parse import urlsplit, urlunsplit

import msgspec
import redis.exceptions
import typer
from typer.core import TyperGroup

from services.config import ConfigError


class Code(IntEnum):
    OK = 0
    REFUSED = 1  # a refused command, a failed check (verify FAIL, status with unowned shards)
    USAGE = 2  # usage or input: unknown title, bad JSON, bad game id, bad setting, bad file
    REDIS = 3  # Redis unreachable, timing out or refusing; no referee answering in time
    NOT_FOUND = 4  # no such game, dead letter or command
    INTERNAL = 70  # anything else: a bug (run again with --debug for the traceback)
    INTERRUPTED = 130  # Ctrl-C (SIGINT), as shells report it


EPILOG = "\n".join(
    [
        "Exit codes:",
        "  0  ok",
        "  1  refused or check failed: a refused command (new, send), verify FAIL, status with unowned"
        " shards, a dead letter that cannot be retried",
        "  2  usage or input error: unknown game type, bad JSON, bad game id, bad setting or file",
        "  3  Redis unreachable or timed out (the line names the URL), or no referee answered in time",
        "  4  not found: no such game, dead letter or command",
        "  70 unexpected error (a bug)",
        "  130 interrupted (Ctrl-C)",
        "A failure prints one line on stderr, `dicestream: ...`; --debug (or DICESTREAM_DEBUG=1) shows"
        " the traceback instead. --json prints results as JSON on stdout (docs/cli.md).",
    ]
)


class CliError(Exception):
    """A failure the command explains itself: its message is the line printed."""

    code = Code.INTERNAL

    def __init__(self, message: str, code: Code | None = None) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code


class Refused(CliError):
    code = Code.REFUSED


class InputError(CliError):
    code = Code.USAGE


class Unreachable(CliError):
    code = Code.REDIS


class NotFound(CliError):
    code = Code.NOT_FOUND


_UNREACHABLE = (redis.exceptions.ConnectionError, redis.exceptions.ClusterDownError, redis.exceptions.TryAgainError)
_state: dict[str, Any] = {"debug": False, "url": None}


def set_debug(on: bool) -> None:
    _state["debug"] = on


def debugging() -> bool:
    return bool(_state["debug"]) or os.environ.get("DICESTREAM_DEBUG", "").strip().lower() in ("1", "true", "yes", "on")


def using(url: str) -> None:
    """The Redis URL the command talks to, named when Redis fails."""
    _state["url"] = url


def shown_url(url: str | None = None) -> str:
    """A URL fit to print: its password (if any) replaced by ***."""
    url = url or _state["url"] or "Redis"
    parts = urlsplit(url)
    if parts.password is None:
        return url
    user = parts.username or ""
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = f"{user}:***@{host}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit(parts._replace(netloc=netloc))


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def describe(exc: BaseException) -> tuple[Code, str]:
    """The exit code and the line for an exception."""
    where = shown_url()
    if isinstance(exc, CliError):
        return exc.code, _one_line(str(exc))
    if isinstance(exc, ConfigError):
        return Code.USAGE, _one_line(f"configuration: {exc}")
    if isinstance(exc, redis.exceptions.AuthenticationError | redis.exceptions.AuthorizationError):
        return Code.REDIS, _one_line(f"Redis at {where} refused the connection: {exc}")
    if isinstance(exc, redis.exceptions.TimeoutError):
        return Code.REDIS, _one_line(f"Redis at {where} timed out: {exc or type(exc).__name__}")
    if isinstance(
        exc, redis.exceptions.ConnectionError | redis.exceptions.ClusterDownError | redis.exceptions.TryAgainError
    ):
        return Code.REDIS, _one_line(f"Redis at {where} is unreachable: {exc or type(exc).__name__}")
    if isinstance(exc, redis.exceptions.RedisClusterException):
        return Code.REDIS, _one_line(f"Redis Cluster at {where}: {exc}")
    if isinstance(exc, redis.exceptions.RedisError):
        return Code.REDIS, _one_line(f"Redis at {where} refused a command: {type(exc).__name__}: {exc}")
    if isinstance(exc, ConnectionError | TimeoutError | socket.gaierror):
        return Code.REDIS, _one_line(f"Redis at {where}: {exc or type(exc).__name__}")
    if isinstance(exc, OSError):
        what = f"{exc.strerror}: {exc.filename}" if exc.strerror and exc.filename else str(exc)
        return Code.USAGE, _one_line(what)
    return Code.INTERNAL, _one_line(
        f"unexpected error: {type(exc).__name__}: {exc} (run again with --debug for the traceback)"
    )


def fail(line: str) -> None:
    """Print one line on stderr (never wrapped, no markup)."""
    sys.stderr.write(f"dicestream: {_one_line(line)}\n")
    sys.stderr.flush()


def emit(doc: Any) -> None:
    """One JSON document on one line of stdout."""
    sys.stdout.write(msgspec.json.encode(doc).decode() + "\n")
    sys.stdout.flush()


def _stdout_gone() -> NoReturn:
    # The reader of a pipe left (`dicestream dead list --json | head -1`): not an error.
    # Point stdout at /dev/null so that the interpreter's last flush does not complain.
    _stdout_to_devnull()
    raise typer.Exit(0)


def _stdout_to_devnull() -> None:
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


class Group(TyperGroup):
    """The `dicestream` command group: every exception becomes an exit code and one line."""

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except (typer.Exit, typer.Abort, typer.TyperException):
            raise  # typer's own: usage errors (2), typer.Exit(n), Ctrl-C
        except BrokenPipeError:
            _stdout_gone()
        except KeyboardInterrupt:
            # Ctrl-C of `watch` or `tournament` is how a user stops them, not a failure to explain.
            # What is still buffered is dropped: a reader that stopped reading (a full pipe) would
            # otherwise hold the interpreter's last flush, and the process, forever.
            with contextlib.suppress(OSError, ValueError):  # a stdout with no descriptor (in-process runs)
                _stdout_to_devnull()
            raise typer.Exit(int(Code.INTERRUPTED)) from None
        except Exception as exc:
            if debugging():
                raise
            code, line = describe(exc)
            fail(line)
            raise typer.Exit(int(code)) from None

"""`dicestream gateway ...`: API keys for the HTTP gateway (the keys are stored hashed in Redis)."""

from __future__ import annotations

from typing import Annotated

import typer

from services.gateway.apikeys import DEFAULT_SCOPES, SCOPES, ApiKeys

gateway_app = typer.Typer(help="The HTTP/WebSocket gateway: API keys.", no_args_is_help=True)


def check_env() -> None:
    """Refuse to start with a bad gateway variable: one line naming it, no traceback."""
    from services.gateway.settings import from_env

    try:
        from_env()
    except ValueError as exc:
        typer.secho(f"error: {exc}", fg="red", err=True)
        raise typer.Exit(2) from None


@gateway_app.command("add-key")
def add_key(
    name: Annotated[str, typer.Argument(help="the client's name (letters, digits, _ . -)")],
    scope: Annotated[
        list[str] | None, typer.Option(help=f"repeatable: {', '.join(SCOPES)} (default {', '.join(DEFAULT_SCOPES)})")
    ] = None,
) -> None:
    """Create an API key for client NAME and print it, once (only its SHA-256 is stored)."""
    from dicestream.cli import _run, _setup
    from services.redis_conn import connect

    settings, url, _ = _setup(quiet=True)

    async def go() -> str:
        client = connect(url)
        try:
            return await ApiKeys(client, settings.prefix).add(name, tuple(scope or DEFAULT_SCOPES))
        finally:
            await client.aclose()

    try:
        key = _run(go())
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    typer.echo(key)


@gateway_app.command("revoke-key")
def revoke_key(name: Annotated[str, typer.Argument(help="the client's name")]) -> None:
    """Remove every API key of client NAME (gateways stop accepting them within 5 s)."""
    from dicestream.cli import _run, _setup
    from services.redis_conn import connect

    settings, url, _ = _setup(quiet=True)

    async def go() -> int:
        client = connect(url)
        try:
            return await ApiKeys(client, settings.prefix).revoke(name)
        finally:
            await client.aclose()

    n = _run(go())
    typer.echo(f"revoked {n} key(s) of {name}")
    if not n:
        raise typer.Exit(1)

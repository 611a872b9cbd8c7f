"""Who may do what: seat tokens (bearer) for a seat's actions and views, API keys for creating
games and seating bots. A command whose token is wrong never reaches the referee."""

from __future__ import annotations

from collections.abc import Mapping

from games import match as m
from services.eventstore.keys import valid_game_id
from services.gateway.apikeys import HEADER, ApiKey
from services.gateway.deps import Deps
from services.gateway.problems import Problem

BEARER = {"WWW-Authenticate": 'Bearer realm="dicestream seat"'}


def bearer(headers: Mapping[str, str]) -> str:
    scheme, _, token = headers.get("authorization", "").partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        raise Problem(
            401,
            "token-required",
            "Seat token required",
            "send the token JoinSeat returned as 'Authorization: Bearer <token>'",
            headers=BEARER,
        )
    return token


def game_id_or_404(game_id: str) -> str:
    if not valid_game_id(game_id):
        raise Problem(404, "no-such-game", "No such game", "not a valid game id", game_id=game_id[:100])
    return game_id


def no_such_game(game_id: str) -> Problem:
    return Problem(404, "no-such-game", "No such game", f"no game {game_id!r}", game_id=game_id)


async def not_live(deps: Deps, game_id: str) -> Problem:
    """Why a game with no log cannot be followed live: it does not exist, or it is archived (410:
    over and moved out of Redis; its events, states and audits are still read the usual way)."""
    if await deps.redis.exists(deps.keys.archived(game_id)):
        detail = f"game {game_id!r} is over and archived: read its events at /v1/games/{game_id}/events"
        return Problem(410, "archived", "The game is archived", detail, game_id=game_id)
    return no_such_game(game_id)


async def seat_game(deps: Deps, game_id: str, seat: int, token: str, fresh: bool = False) -> m.Match:
    """The game (as it is now if `fresh`), if `token` is `seat`'s; 404 for an unknown game or
    seat, 403 for a wrong token."""
    game_id_or_404(game_id)
    if not 0 <= seat < 64:
        raise Problem(404, "no-such-seat", "No such seat", f"seat {seat}", game_id=game_id)
    try:
        agg, ok = await deps.games.check_token(game_id, seat, token, fresh)
    except LookupError:
        raise no_such_game(game_id) from None
    if not 0 <= seat < agg.num_players:
        raise Problem(
            404, "no-such-seat", "No such seat", f"{agg.game_type} game of {agg.num_players}", game_id=game_id
        )
    if not ok:
        detail = "this is not that seat's token" if agg.seats[seat] else "nobody has joined that seat"
        raise Problem(403, "wrong-token", "Token refused", detail, game_id=game_id)
    return agg


async def api_key(deps: Deps, headers: Mapping[str, str], scope: str) -> ApiKey:
    key = headers.get(HEADER)
    if not key:
        raise Problem(401, "api-key-required", "API key required", "send it as 'X-API-Key: <key>'")
    found = await deps.api_keys.lookup(key)
    if found is None:
        raise Problem(403, "api-key-refused", "API key refused", "unknown or revoked key")
    if not found.allows(scope):
        raise Problem(403, "scope-missing", "API key lacks a scope", f"this needs the {scope!r} scope")
    return found

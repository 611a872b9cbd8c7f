"""Read models: the layout the projector writes and every reader (gateway, CLI) reads. A shard's
models sit under the shard's hash tag, so one MULTI updates them and the shard's bus position
together (also on Redis Cluster)."""

from __future__ import annotations

from typing import Any

import msgspec

from games import match as m
from services.eventstore.keys import Keys


class GameSummary(msgspec.Struct, frozen=True, kw_only=True):
    game_id: str
    game_type: str
    status: str
    version: int
    players: list[str | None]
    seed_commitment: str
    scores: list[int] | None = None
    winners: list[int] | None = None
    to_act: list[int] = []
    # Per seat: "human" or "bot" as the seat was joined (None: not joined yet).
    kinds: list[str | None] = []
    # When GameCreated was recorded (epoch ms); 0 in models written before this field.
    created_at_ms: int = 0
    # The component data the game is played with (its cards' names and values: GET
    # /v1/catalog/<game>?data_version=); "" in models written before this field.
    data_version: str = ""


class ReadModelKeys(msgspec.Struct, frozen=True):
    keys: Keys

    def games(self, shard: int) -> str:
        return f"{self.keys.prefix}:rm:{{{shard}}}:games"

    def game(self, shard: int, game_id: str) -> str:
        return f"{self.keys.prefix}:rm:{{{shard}}}:game:{game_id}"

    def position(self, shard: int) -> str:
        return f"{self.keys.prefix}:rm:{{{shard}}}:pos"

    def pattern(self) -> str:
        return f"{self.keys.prefix}:rm:*"


def summary(agg: m.Match) -> GameSummary:
    res = agg.result
    return GameSummary(
        game_id=agg.game_id,
        game_type=agg.game_type,
        status=agg.status,
        version=agg.version,
        players=[s.name if s else None for s in agg.seats],
        seed_commitment=agg.seed_commitment,
        scores=res.scores if res else None,
        winners=res.winners if res else None,
        to_act=m.to_act(agg),
        kinds=[s.kind if s else None for s in agg.seats],
        created_at_ms=agg.created_at_ms,
        data_version=agg.data_version,
    )


def public_state(agg: m.Match, *, plain: bool = False) -> dict[str, Any]:
    """A game's public state as any spectator may see it: built by `view(state, None)`. The view
    is the game's view struct, or with `plain` its builtins (for a caller converting the whole
    document into other types; the projector encodes it as it is)."""
    out: dict[str, Any] = {"summary": msgspec.to_builtins(summary(agg))}
    if agg.game is not None:
        view = agg.rules.view(agg.game, None)
        out["view"] = msgspec.to_builtins(view) if plain else view
    if agg.status == m.OVER:
        out["seed"] = agg.seed  # revealed by SeedRevealed once the game is over
    return out

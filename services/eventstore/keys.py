"""Redis key names. A game's keys share the hash tag `{game_id}` so they live in one Cluster slot
and one Lua script can append to all of them atomically."""

from __future__ import annotations

import functools
import re
import zlib

import msgspec

from contracts.limits import CLIENT_PATTERN, GAME_ID_PATTERN, MAX_REPLY_TO, REST_PATTERN

# Game ids become part of key names: no braces (hash tags), no glob characters, no separators
# that could make one game's keys look like another's.
GAME_ID = re.compile(GAME_ID_PATTERN.strip("^$"))


def valid_game_id(game_id: str) -> bool:
    return GAME_ID.fullmatch(game_id) is not None


@functools.cache
def _reply_stream(prefix: str) -> re.Pattern[str]:
    return re.compile(rf"{re.escape(prefix)}:reply:(?P<client>{CLIENT_PATTERN}):{REST_PATTERN}")


@functools.lru_cache(maxsize=1 << 14)
def _reply_client(prefix: str, stream: str) -> str | None:
    # A client names the same reply stream on every command: match it once.
    if len(stream) > MAX_REPLY_TO:
        return None
    found = _reply_stream(prefix).fullmatch(stream)
    return found["client"] if found else None


@functools.cache
def _client_intake(prefix: str) -> re.Pattern[str]:
    return re.compile(rf"{re.escape(prefix)}:cmd:\{{(?:0|[1-9][0-9]*)\}}:(?P<client>{CLIENT_PATTERN})")


class Keys(msgspec.Struct, frozen=True):
    prefix: str = "ds"

    def log(self, game_id: str) -> str:
        return f"{self.prefix}:game:{{{game_id}}}:log"

    def public(self, game_id: str) -> str:
        return f"{self.prefix}:game:{{{game_id}}}:public"

    def commands(self, game_id: str) -> str:
        return f"{self.prefix}:game:{{{game_id}}}:cmds"

    def audit(self, game_id: str) -> str:
        return f"{self.prefix}:game:{{{game_id}}}:audit"

    def seat(self, game_id: str, seat: int) -> str:
        return f"{self.prefix}:game:{{{game_id}}}:seat:{seat}"

    def archived(self, game_id: str) -> str:
        """Set by `dicestream archive` in place of every other key of the game (services/archive.py)."""
        return f"{self.prefix}:game:{{{game_id}}}:archived"

    def game_keys(self, game_id: str) -> list[str]:
        return [
            self.log(game_id),
            self.public(game_id),
            self.commands(game_id),
            self.audit(game_id),
            self.archived(game_id),
        ]

    def intake(self, shard: int) -> str:
        return f"{self.prefix}:cmd:{{{shard}}}"

    def client_intake(self, shard: int, client: str) -> str:
        """A registered trusted client's own intake of a shard: only that client's Redis user may
        write it, so the referee knows who sent what it reads there (and a client that picks entry
        ids or trims can only harm its own commands). Same hash tag as the shard's intake."""
        return f"{self.prefix}:cmd:{{{shard}}}:{client}"

    def intake_client(self, stream: str) -> str | None:
        """The client whose own intake `stream` is; None for any other stream."""
        found = _client_intake(self.prefix).fullmatch(stream)
        return found["client"] if found else None

    @property
    def clients(self) -> str:
        """The registered trusted clients (a set of client names, written by operators with
        `dicestream acl add-client --apply`): the referee reads their own intakes."""
        return f"{self.prefix}:clients"

    def bus(self, shard: int) -> str:
        return f"{self.prefix}:bus:{{{shard}}}"

    def timer(self, shard: int) -> str:
        """The turn service's own intake of a shard (ForceDefault on a passed deadline). Only its
        Redis user may write it, which is how the referee knows a command there is the timer's."""
        return f"{self.prefix}:timer:{{{shard}}}"

    def deadlines(self, shard: int) -> str:
        """Move deadlines of a shard's games (sorted set: game|seat|version -> epoch ms)."""
        return f"{self.prefix}:deadlines:{{{shard}}}"

    def turn_notices(self, shard: int) -> str:
        """Which seats of a shard's games were just asked to move (game, seat, version), for hosts of
        many seats such as the bot runner: one read per shard instead of one per game."""
        return f"{self.prefix}:turns:{{{shard}}}"

    def reply_prefix(self) -> str:
        """Replies go only to streams under this prefix, never to a key a client names freely."""
        return f"{self.prefix}:reply:"

    def reply(self, client: str, rest: str) -> str:
        """A reply stream, `<prefix>:reply:<client>:<rest>` (charsets in contracts/limits.py)."""
        return f"{self.prefix}:reply:{client}:{rest}"

    def reply_client(self, stream: str) -> str | None:
        """The client a reply stream of this installation belongs to; None when `stream` is not
        one (another prefix, no `<client>:<rest>`, a character outside their charsets)."""
        return _reply_client(self.prefix, stream)

    @property
    def dead_letter(self) -> str:
        return f"{self.prefix}:dead"

    def log_pattern(self) -> str:
        """SCAN pattern of every game's log: how tools enumerate games without a central index."""
        return f"{self.prefix}:game:{{*}}:log"

    @property
    def secret(self) -> str:
        return f"{self.prefix}:secret"

    def leases(self, role: str) -> list[str]:
        """A role's lease table (shard -> holder), lease expiries and live members, in one slot so
        that one script renews, expires and hands out a role's leases atomically."""
        base = f"{self.prefix}:leases:{{{role}}}"
        return [f"{base}:holders", f"{base}:until", f"{base}:members"]


def shard_of(game_id: str, shards: int) -> int:
    """Stable across processes and languages (CRC-32 of the UTF-8 id), documented in docs/bots.md."""
    return zlib.crc32(game_id.encode()) % shards

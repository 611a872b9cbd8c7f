"""The base of every command payload: strict, so that a misspelt field is refused by name.

A payload field the type does not declare is an error (`forbid_unknown_fields`: the referee refuses
the command with GAME-MALFORMED naming the field, and the JSON Schema says
`additionalProperties: false`), never silently dropped and the move played with a default.
Events stay lenient: they are read back from logs written by other versions.
"""

from __future__ import annotations

import msgspec


class Command(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    pass

"""Size limits of everything a client sends, in one place: the intake entry, the envelope and the
payload fields. The struct fields carry them as `msgspec.Meta` (so `dicestream schema` writes them
as `maxLength`, `maxItems`, `pattern`, ...), and `schema/index.json` lists the entry limits that a
JSON Schema cannot express. docs/bots.md ("Strict, bounded input") says what happens past each.
"""

from __future__ import annotations

from typing import Annotated

import msgspec

# ---- the intake entry (checked before anything is parsed) ---------------------------------------

# The `data` field: one JSON CommandEnvelope.
MAX_DATA_BYTES = 65_536
# Fields of one intake entry (a command needs one: `data`).
MAX_FIELDS = 8
# Every field name and value of the entry together: `data` plus 4 KiB for anything else.
MAX_ENTRY_BYTES = MAX_DATA_BYTES + 4_096

# ---- what the referee records of input it did not accept ----------------------------------------

# A refusal keeps the payload's SHA-256, its size and its first HEAD_BYTES bytes (PayloadDigest).
HEAD_BYTES = 256
# A dead letter keeps, per field (at most MAX_FIELDS), its first DEAD_HEAD_BYTES bytes.
DEAD_HEAD_BYTES = 1_024
# Refusal details and dead-letter reasons are cut to this many characters.
MAX_DETAIL = 300

# ---- strings and lists ----------------------------------------------------------------------

MAX_NAME = 64  # a seat's display name
MAX_ID = 100  # game, command, correlation and causation ids
MAX_TOKEN = 128  # seat tokens are 64 hex characters
MAX_TYPE = 64  # a command type name ("sentient.Acquire")
MAX_WORD = 32  # card, tile and bot ids, board sides, tracks, sizes, directions, game types
MAX_LIST = 8  # a command's lists: at most 4 cards, 7 dice or 3 rows are ever used
MAX_REPLY_TO = 256
MAX_CLIENT = 32  # the client part of a reply stream name
MAX_SEAT = 63

# Game ids become part of Redis key names: no braces (hash tags), no glob characters.
GAME_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$"
# `<client>`: a short name; `<rest>`: anything the client likes in that charset.
CLIENT_PATTERN = r"[A-Za-z0-9][A-Za-z0-9_.-]{0,31}"
REST_PATTERN = r"[A-Za-z0-9_.:-]{1,128}"
# `<prefix>:reply:<client>:<rest>`; the referee also checks that <prefix> is its own.
REPLY_TO_PATTERN = rf"^[^{{}}\s]+:reply:{CLIENT_PATTERN}:{REST_PATTERN}$"

Name = Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_NAME)]
Word = Annotated[str, msgspec.Meta(max_length=MAX_WORD)]
Id = Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_ID)]
GameId = Annotated[str, msgspec.Meta(pattern=GAME_ID_PATTERN)]
TypeName = Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_TYPE)]
Token = Annotated[str, msgspec.Meta(max_length=MAX_TOKEN)]
ReplyTo = Annotated[str, msgspec.Meta(max_length=MAX_REPLY_TO, pattern=REPLY_TO_PATTERN)]
Seat = Annotated[int, msgspec.Meta(ge=0, le=MAX_SEAT)]
Ints = Annotated[list[int], msgspec.Meta(max_length=MAX_LIST)]
Words = Annotated[list[Word], msgspec.Meta(max_length=MAX_LIST)]


def entry_limits() -> dict[str, int]:
    """The limits a JSON Schema of the envelope cannot say, for schema/index.json."""
    return {
        "max_data_bytes": MAX_DATA_BYTES,
        "max_fields": MAX_FIELDS,
        "max_entry_bytes": MAX_ENTRY_BYTES,
        "refusal_head_bytes": HEAD_BYTES,
        "dead_letter_head_bytes": DEAD_HEAD_BYTES,
        "max_detail_chars": MAX_DETAIL,
    }

"""What every game's rules share: emitting events while folding them, reading the data file, and
naming what is wrong with it. A game keeps only what is its own."""

from __future__ import annotations

import tomllib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Generic, TypeVar

import msgspec

from games.base import Rejected

S = TypeVar("S")


class Emitter(Generic[S]):
    """Events of one decision, folded into a scratch state as they are emitted so that later steps
    (refills, the end of a turn or round, the next count) see the consequences of earlier ones."""

    __slots__ = ("_fold", "events", "state")

    def __init__(self, state: S, fold: Callable[[S, msgspec.Struct], object]) -> None:
        self.state = state
        self.events: list[msgspec.Struct] = []
        self._fold = fold

    def emit(self, event: msgspec.Struct) -> None:
        self.events.append(event)
        self._fold(self.state, event)


class DataError(ValueError):
    """Bad component data; the message names the file and the offending field."""


def fail(path: Path, where: str, problem: str) -> DataError:
    return DataError(f"{path}: {where}: {problem}")


def read_toml(path: Path) -> tuple[dict[str, Any], bytes]:
    """The parsed file and its bytes (for a content hash), or a DataError naming the file."""
    try:
        raw = path.read_bytes()
        return tomllib.loads(raw.decode()), raw
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise DataError(f"{path}: cannot read component data: {exc}") from exc


def refuser(texts: Mapping[str, str]) -> Callable[[str, str], Rejected]:
    """A game's `reject(rule, detail)`: the refusal citing `rule` with its text from `texts`."""

    def reject(rule: str, detail: str) -> Rejected:
        return Rejected(rule=rule, text=texts[rule], detail=detail)

    return reject


def published(path: Path, schema: type[msgspec.Struct]) -> dict[str, Any]:
    """A data file as JSON, every field with its default filled in (as the game's loader reads it,
    through `schema`): what the web page draws names and values from (GET /v1/catalog/<game>)."""
    raw, _ = read_toml(path)
    try:
        return msgspec.to_builtins(msgspec.convert(raw, schema))  # type: ignore[no-any-return]
    except msgspec.ValidationError as exc:
        raise DataError(f"{path}: {exc}") from exc

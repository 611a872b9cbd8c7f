"""What one game declares to the platform, once, in its package's `spec.py`.

Everything that used to be listed per game in shared files derives from these declarations: the
catalog (`games.catalog`), the wire registry (`contracts.registry`), the JSON Schema (`schema/`),
the golden playthroughs and the every-game tests. docs/adding-a-game.md walks through one.
"""

from __future__ import annotations

import importlib
import inspect
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import msgspec

from contracts.limits import MAX_TYPE, MAX_WORD
from games.base import Rules
from games.bots import Bot
from games.rng import Rng

# (state, rng) -> a NEW state: the secrets of `state` re-dealt from `rng`; the input is not mutated.
Determinizer = Callable[[Any, Rng], Any]


# (rules, num_players, seed, version) -> the game as StartGame leaves it when the log is at `version`,
# on a native core (games.offline.NativeCore); None for rules it does not serve (a variant, or the
# core is not built). Offline play without a log steps it instead of the Python aggregate.
NativeCoreFactory = Callable[[Rules[Any], int, str, int], Any]

# An offline game (games.offline.OfflineGame) -> its game played to the end by the game's greedy bot
# in every seat, as (winners, forced moves: those with one legal command), or None for a position it
# does not take. The search's rollout in native code (games.mcts.MCTSBot `playout`).
Playout = Callable[[Any], tuple[list[int], int] | None]
# (rules, the greedy bot the search rolls out with) -> their playout; None for what it does not serve
# (a variant, another bot or a bot over other data, or it is not built).
PlayoutFactory = Callable[[Rules[Any], Bot], Playout | None]


def greedy_playout(rules_type: type, bot_type: type, module: str, reads: Callable[[Any], Any]) -> PlayoutFactory:
    """The PlayoutFactory of a native playout module (`module`: `Tables(data)`, which raises
    `NotNative` for data it cannot hold, and `playout(tables, reads(match))`). It serves rules of
    exactly `rules_type` holding nothing but their data, with the greedy bot `bot_type` over that
    same data; None for anything else, or where the module is not built, and then the search rolls
    out in Python. Tables are built once per rules object and data."""
    own = frozenset({"data", "data_version"})
    built: weakref.WeakKeyDictionary[Any, tuple[Any, Any]] = weakref.WeakKeyDictionary()

    def factory(rules: Rules[Any], policy: Bot) -> Playout | None:
        if type(rules) is not rules_type or not own.issuperset(vars(rules)):
            return None
        data = getattr(rules, "data", None)
        if type(policy) is not bot_type or getattr(policy, "data", None) is not data:
            return None
        try:
            native = importlib.import_module(module)
        except ImportError:
            return None
        cached = built.get(rules)
        if cached is None or cached[0] is not data:
            try:
                cached = built[rules] = (data, native.Tables(data))
            except native.NotNative:
                return None
        tables = cached[1]

        def play(game: Any) -> tuple[list[int], int] | None:
            if game.is_terminal() or getattr(rules, "data", None) is not data:
                # Over, or the rules' data replaced since: the bot still values with what it was given.
                return None
            match = game.match
            if any(seat is not None and seat.resigned for seat in match.seats):
                # The referee plays resigned seats' defaults, which the playout does not model.
                return None
            played = native.playout(tables, reads(match))
            return None if played is None else (played[0], played[1])

        return play

    return factory


def same_code(rules: Rules[Any], declared: Rules[Any]) -> bool:
    """Whether `rules` judge as `declared` do but for their data: the same class and name, and no
    method of their own (a subclass or an instance given methods may change what the state hides)."""
    if type(rules) is not type(declared) or rules.name != declared.name:
        return False
    return not any(callable(v) for v in getattr(rules, "__dict__", {}).values())


@dataclass(frozen=True)
class DataBots:
    """A game's rule-based bots and determinizer over one data: a bot and a determinizer read tile
    and card values from the data, so rules over other data need their own."""

    greedy: Callable[[], Bot]
    determinize: Determinizer | None
    bots: Mapping[str, Callable[[], Bot]] = field(default_factory=dict)


# Bot kinds every game has (random, the spec's greedy) or the platform hosts (search): a game's own
# `bots` take other names.
RESERVED_BOTS = ("random", "greedy", "ismcts")

# CreateGame's game_type and an envelope's type are bounded on the wire.
MAX_NAME = MAX_WORD


class GameSpecError(RuntimeError):
    """A game package's declaration is incomplete or contradicts itself (raised at start-up)."""


@dataclass(frozen=True)
class GameSpec:
    rules: Rules[Any]
    # The name people read (the web page, the CLI's tables): "Artifacts, Inc.".
    title: str
    # The module holding the game's wire types: `COMMANDS` and `EVENTS`, tuples of msgspec structs.
    # Their wire names are `<rules.name>.<ClassName>`.
    contracts: ModuleType
    # What a seat or spectator sees (what `rules.view` returns): a struct tagged `game` = the
    # game's name, so a TurnRequest's view decodes as the union of every game's view.
    view: type[msgspec.Struct]
    # The game's greedy reference bot (games.bots.RandomBot plays every game).
    greedy: Callable[[], Bot]
    # Required when `rules.public_event` hides anything: search bots only ever see states it made.
    determinize: Determinizer | None
    # The rules document (every rule id the game returns is explained there), relative to the
    # repository root, or to the game package for a game that lives outside this repository.
    rules_doc: str
    # The player count of its golden playthrough (tests/golden/<name>-<n>p.jsonl) and of the
    # every-game tests that play one count.
    golden_players: int
    # Every rule id a refusal of the game can cite -> its text (the game's rule_ids module).
    rule_texts: Mapping[str, str] = field(default_factory=dict)
    # The game's component data as the web page reads it (names and values of cards and tiles,
    # GET /v1/catalog/<game>): called with no argument for the current data, with the Path of an
    # earlier_data file for that one. None: the game publishes none (its page shows no board).
    catalog_data: Callable[..., dict[str, Any]] | None = None
    # Data files the rules read, relative to the package (shipped by pyproject's package-data rule).
    data_files: Sequence[str] = field(default_factory=tuple)
    # Earlier data this build still serves: data_version -> its file (relative to the package, and
    # listed in data_files too, so it ships). A game records its data_version at creation and is
    # judged, replayed and verified with that data to its end, whatever the current file says.
    # Keep a version here for as long as games created under it are kept (docs/adding-a-game.md).
    earlier_data: Mapping[str, str] = field(default_factory=dict)
    # The rules read from another data file (required with earlier_data).
    with_data: Callable[[Path], Rules[Any]] | None = None
    # Seats in order of play from the first player, read from the final state (so for a game whose
    # first player is fixed once set up; turn positions in `dicestream balance`). None: the order
    # in which seats first act alone, which is right only for a game that never waits on one seat
    # outside its turn (Prosperity's counts do, and so does the last board chosen in its
    # simultaneous set-up).
    turn_order: Callable[[Any], list[int]] | None = None
    # More rule-based bots, by kind name: hosted by the bot runner like greedy and playable in
    # `dicestream tournament` and `balance` (Mechanica's "planner").
    bots: Mapping[str, Callable[[], Bot]] = field(default_factory=dict)
    # A native core for offline play (optional, for speed only): it must reach the states the Python
    # rules reach, draw for draw, which the game's own tests check at every step.
    native: NativeCoreFactory | None = None
    # The greedy bot's rollout in native code, for the hosted search (optional, for speed only): it
    # must give the winner the Python rollout gives, from every position, which the game's own tests
    # check (Prosperity's: games/prosperity/playout.pyx; Artifacts, Inc.'s: games/artifacts/playout.pyx).
    greedy_playout: PlayoutFactory | None = None
    # The same bots over other data of the game (rules `with_data` built: an earlier_data file, or a
    # variant file `dicestream balance --data` measures). None: only `rules` has bots and search.
    bots_on: Callable[[Rules[Any]], DataBots] | None = None
    # What a seat took into play, read off one event of its log: (seat, what) for a purchase, an
    # upgrade, a card acquired; None for any other event. `dicestream openings` reads it to say
    # what each turn position took first and how often a buyer won. None: the game declares none.
    acquisition: Callable[[msgspec.Struct], tuple[int, str] | None] | None = None

    @property
    def name(self) -> str:
        return self.rules.name

    @property
    def package_dir(self) -> Path:
        """Where the game's package lives (its data files are relative to it)."""
        return Path(inspect.getfile(type(self.rules))).parent

    def bots_for(self, rules: Rules[Any]) -> DataBots | None:
        """The bots and determinizer over `rules`: the declared ones for `rules` itself, `bots_on`'s
        for the same rules class over other data; None for anything else (a subclass, or an
        instance given its own methods, may change what the state hides)."""
        if rules is self.rules:
            return DataBots(self.greedy, self.determinize, self.bots)
        if self.bots_on is None or not same_code(rules, self.rules):
            return None
        return self.bots_on(rules)

    def wire_types(self) -> tuple[tuple[type[msgspec.Struct], ...], tuple[type[msgspec.Struct], ...]]:
        return tuple(self.contracts.COMMANDS), tuple(self.contracts.EVENTS)

    def check(self) -> None:
        """Refuse a declaration the platform could not serve, naming what is wrong."""
        name = self.rules.name
        if not name.isidentifier() or not name.islower() or len(name) > MAX_NAME or name == "lifecycle":
            raise GameSpecError(
                f"game name {name!r} must be a lower-case identifier of at most {MAX_NAME} characters, "
                "not 'lifecycle' (it prefixes wire names)"
            )
        if not (isinstance(self.view, type) and issubclass(self.view, msgspec.Struct)):
            raise GameSpecError(f"{name}: view must be a msgspec.Struct type, not {self.view!r}")
        commands, events = self.wire_types()
        for label, declared, ruled in (
            ("command", commands, self.rules.command_types),
            ("event", events, self.rules.event_types),
        ):
            missing = [t.__name__ for t in ruled if t not in declared]
            if missing:
                raise GameSpecError(
                    f"{name}: {label} types {missing} are used by the rules but not listed in "
                    f"{self.contracts.__name__}.{label.upper()}S, so they have no wire name"
                )
            names = [t.__name__ for t in declared]
            too_long = [n for n in names if len(f"{name}.{n}") > MAX_TYPE]
            if too_long:
                raise GameSpecError(f"{name}: wire names of {too_long} exceed {MAX_TYPE} characters")
            if len(set(names)) != len(names):
                raise GameSpecError(f"{name}: two {label} types share a class name in {self.contracts.__name__}")
        config = self.view.__struct_config__
        if config.tag_field != "game" or config.tag != name:
            raise GameSpecError(f"{name}: its view struct {self.view.__name__} must be tagged game={name!r}")
        if not self.rules.min_players <= self.golden_players <= self.rules.max_players:
            raise GameSpecError(f"{name}: golden_players {self.golden_players} is outside the game's player range")
        if self.earlier_data and self.with_data is None:
            raise GameSpecError(f"{name}: earlier_data needs with_data, the rules read from another data file")
        misnamed = [f for v, f in self.earlier_data.items() if Path(f).name != f"{v.split('+', 1)[0]}.toml"]
        if misnamed:
            # examples/check_fairness.py (stdlib only, no catalog) finds an old game's data by name.
            raise GameSpecError(f"{name}: earlier data files {misnamed} must be named <data_version>.toml (no '+hash')")
        unshipped = [f for f in self.earlier_data.values() if f not in self.data_files]
        if unshipped:
            raise GameSpecError(f"{name}: earlier data files {unshipped} must be listed in data_files too")
        if self.earlier_data and self.catalog_data is not None and not reads_data_files(self.catalog_data):
            raise GameSpecError(f"{name}: with earlier_data, catalog_data must take a data file's Path")
        taken = [k for k in self.bots if k in RESERVED_BOTS or not k.isidentifier() or not k.islower()]
        if taken:
            raise GameSpecError(
                f"{name}: bot kinds {taken} must be lower-case identifiers other than {', '.join(RESERVED_BOTS)}"
            )
        if self.rules.data_version in self.earlier_data:
            raise GameSpecError(f"{name}: {self.rules.data_version!r} is the current data, not an earlier one")
        if self.bots_on is not None and set(self.bots_on(self.rules).bots) != set(self.bots):
            raise GameSpecError(f"{name}: bots_on must offer the bot kinds bots declares ({', '.join(self.bots)})")


def reads_data_files(catalog_data: Callable[..., Any]) -> bool:
    """Whether a spec's catalog_data takes a data file's Path (the page draws games on earlier or
    variant data from that file), not only the current data."""
    try:
        inspect.signature(catalog_data).bind(Path())
    except TypeError:
        return False
    return True

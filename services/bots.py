"""Reference bots behind the wire protocol: a seat's `TurnRequest` in, a command payload out."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

from contracts import codec
from contracts.protocol import Action, GameOver
from contracts.registry import command_type, type_name, view_types
from games import match as m
from games.base import Rules
from games.catalog import RULE_BOTS, bot_makers, rules_for, spec_for
from games.mcts import searcher
from games.offline import OfflineGame, determinizer_for


class RawAction(msgspec.Struct, frozen=True, kw_only=True):
    """A legal action read with its payload left as the JSON bytes it came as."""

    type: str
    payload: msgspec.Raw


class RawTurnRequest(msgspec.Struct, frozen=True, kw_only=True, tag="turn"):
    """A `TurnRequest` as the bot runner reads it: each legal action's payload decodes straight
    into its command struct (no dict per action), and the one chosen is sent as it came."""

    game_id: str
    seat: int
    version: int
    # Decoded by the bot into its game's view struct, never into dicts.
    view: msgspec.Raw
    legal_actions: list[RawAction]
    deadline_ms: int | None = None
    data_version: str = ""


RawSeatMessage = RawTurnRequest | GameOver
_decoders: dict[str, msgspec.json.Decoder[Any]] = {}


def _command(name: str) -> type[msgspec.Struct]:
    cls = command_type(name)
    if cls is None:
        raise ValueError(f"unknown command type {name!r} in a turn request")
    return cls


def _decoder(name: str) -> msgspec.json.Decoder[Any]:
    dec = _decoders.get(name)
    if dec is None:
        dec = _decoders[name] = msgspec.json.Decoder(_command(name))
    return dec


class WireBot:
    """Adapts a rules-level bot (`choose(view, legal_commands, seat)`, the view being its game's
    view struct) to the wire. Built with `rebind` (`make_bot` does), it answers a request for a game
    created under earlier data with the same kind of bot over that data."""

    def __init__(
        self,
        bot: Any,
        view_type: type[msgspec.Struct],
        rebind: Callable[[str], Any | None] | None = None,
        data_version: str = "",
    ) -> None:
        self.bot = bot
        self.view_type = view_type
        self._view = msgspec.json.Decoder(view_type)
        # A bot that thinks for milliseconds (Mechanica's planner) says so: the runner answers it
        # in a worker thread, off the loop that renews its leases.
        self.slow: bool = getattr(bot, "slow", False) is True
        # data_version -> the bot over that data, or None to keep this one (see _over).
        self._rebind = rebind
        # The data the last request named (at first: the data `bot` was built over). Asked once
        # per change, so a version the build lacks is not looked up on every request.
        self._asked = data_version

    def _over(self, data_version: str) -> None:
        """Read the data a request's game was created under. A bot reads tile and card values
        from its data: the current file's values in a game of an earlier file would value
        purchases wrongly and could pick a move the game's own values make the worst."""
        if self._rebind is None or not data_version or data_version == self._asked:
            return
        self._asked = data_version
        bot = self._rebind(data_version)
        if bot is not None:
            self.bot = bot
            self.slow = getattr(bot, "slow", False) is True

    def choose_action(
        self, view: dict[str, Any] | msgspec.Struct, legal: list[Action], seat: int, data_version: str = ""
    ) -> Action:
        """The same choice from decoded protocol `Action`s (a client holding dicts)."""
        self._over(data_version)
        typed = view if isinstance(view, msgspec.Struct) else msgspec.convert(view, self.view_type)
        commands = [msgspec.convert(a.payload, _command(a.type)) for a in legal]
        choice = self.bot.choose(typed, commands, seat)
        return Action(type=type_name(choice), payload=msgspec.to_builtins(choice))

    def choose(self, req: RawTurnRequest) -> tuple[str, bytes]:
        """The chosen command's type and encoded payload."""
        self._over(req.data_version)
        commands = [_decoder(a.type).decode(a.payload) for a in req.legal_actions]
        choice = self.bot.choose(self._view.decode(req.view), commands, req.seat)
        for action, command in zip(req.legal_actions, commands, strict=True):
            if command is choice:
                return action.type, bytes(action.payload)
        return type_name(choice), codec.encode(choice)


SEARCH_KINDS = ("ismcts",)


def kinds_for(game_type: str) -> list[str]:
    """Every bot kind the runner can host in a `game_type` game."""
    return [*bot_makers(game_type), *SEARCH_KINDS]


def make_bot(kind: str, game_type: str, seed: int = 0, budget: SearchBudget | None = None) -> Any:
    """A wire bot: `choose(RawTurnRequest) -> (type, payload bytes)`; a search bot (`needs_public`)
    also wants the game's public stream through `follow` first."""
    views = view_types()
    if game_type not in views:
        raise ValueError(f"no game {game_type!r}; known: {', '.join(views)}")
    if kind in SEARCH_KINDS:
        return SearchWireBot(game_type, seed, budget or SearchBudget())
    kinds = bot_makers(game_type)
    if kind not in kinds:
        raise ValueError(f"no bot {kind!r} for {game_type}; known: {', '.join(kinds_for(game_type))}")
    current = rules_for(game_type)
    # Only the game's rule-based bots read its data: a random bot is never rebuilt (a new one would
    # start its draws again).
    reads_data = kind in RULE_BOTS.get(game_type, {})
    return WireBot(
        kinds[kind](seed),
        views[game_type],
        rebind=(lambda data: _bot_over(kind, game_type, seed, data)) if reads_data else None,
        data_version="" if current is None else current.data_version,
    )


def _bot_over(kind: str, game_type: str, seed: int, data_version: str) -> Any | None:
    """A `kind` bot over the data `data_version` names (the current data, or an earlier file the
    build keeps); None when the build has no such data or the game no such bot over it: the bot
    keeps what it had (a game the build cannot judge is refused by the referee anyway)."""
    rules = rules_for(game_type, data_version)
    if rules is None or rules.data_version != data_version:
        return None
    maker = bot_makers(game_type, rules).get(kind)
    return None if maker is None else maker(seed)


class SearchBudget(msgspec.Struct, frozen=True, kw_only=True):
    """What one ISMCTS move may spend: whichever runs out first."""

    iterations: int = 1000
    seconds: float = 1.0


class SearchWireBot:
    """ISMCTS (games.mcts) behind the wire. A turn request holds a view, not a game, and search
    needs a game to determinize: this bot folds the game's PUBLIC stream (what any audience may
    read) into its own copy of the referee's aggregate, and searches determinizations of that copy,
    so it knows exactly what a human at the table knows. The bot runner feeds it the stream's new
    entries up to each request's version (`follow`) before asking it to choose."""

    needs_public = True

    def __init__(self, game_type: str, seed: int, budget: SearchBudget) -> None:
        spec = spec_for(game_type)
        if spec is None:
            raise ValueError(f"no game {game_type!r}")
        self.spec = spec
        self.seed = seed
        self.match = m.Match(game_id="public")  # the public stream folded: never the seed or a secret
        self.budget = budget
        self._bind(spec.rules)

    def _bind(self, rules: Rules[Any]) -> None:
        """Search `rules`' games: the game's own, or those of an earlier data file a game was
        created under, whose prior, rollouts and determinizer read that data."""
        kit = self.spec.bots_for(rules)
        assert kit is not None, "bound only to rules the game has bots over"
        self.rules = rules
        # The measured configuration: greedy prior and greedy rollouts (games/mcts.py).
        self.search = searcher(
            self.spec, seed=self.seed, iterations=self.budget.iterations, seconds=self.budget.seconds, rules=rules
        )
        self._fallback = WireBot(kit.greedy(), view_types()[self.spec.name])

    @property
    def version(self) -> int:
        """The version of the last public event folded (the entry id's first part)."""
        return self.match.version

    def follow(self, entries: list[tuple[bytes, dict[bytes, bytes]]], upto: int | None = None) -> None:
        """Fold public stream entries (id, fields) newer than `version`, in order: every entry up
        to version `upto` when given (a withheld event leaves a gap in the ids; the version still
        becomes the referee's). Refusals (ids `v-N`, N > 0) move nothing."""
        try:
            self._fold(entries)
        except Exception:
            # Half a fold is no game to search: start again from the stream's first entry next time.
            self.match = m.Match(game_id="public")
            raise
        if upto is not None and upto > self.match.version:
            self.match.version = upto
        ruled = self.match.rules_impl
        if ruled is not None and ruled is not self.rules and self.spec.bots_for(ruled) is not None:
            # A game created under earlier data (games.spec.GameSpec.earlier_data) is searched, and
            # answered when a search fails, over that data.
            self._bind(ruled)

    def _fold(self, entries: list[tuple[bytes, dict[bytes, bytes]]]) -> None:
        for entry_id, fields in entries:
            raw_version, _, seq = entry_id.partition(b"-")
            version = int(raw_version)
            if seq != b"0" or version <= self.match.version:
                continue
            m.evolve(self.match, codec.decode_event_payload(fields[b"data"]))
            self.match.version = version

    def fallback(self, req: RawTurnRequest) -> tuple[str, bytes]:
        """The prior's choice from the request alone, for when a search fails."""
        return self._fallback.choose(req)

    def choose(self, req: RawTurnRequest) -> tuple[str, bytes]:
        if self.match.version != req.version:
            raise ValueError(f"public stream folded to v{self.match.version}, request at v{req.version}")
        if self.match.rules is not self.rules:
            # Earlier data the game declares no bots over (GameSpec.bots_on): the search, its prior
            # and the determinizer read the current data, so the prior answers alone.
            return self.fallback(req)
        match = m.clone(self.match)
        for i, info in enumerate(match.seats):
            # The public copy of a join has no token hash; a search clone's moves need one per seat.
            if info is not None:
                info.token_hash = f"public:{i}"
        game = OfflineGame(match, events=None, determinize=determinizer_for(self.rules))
        choice = self.search.choose_from(game, req.seat)
        for action in req.legal_actions:
            if action.type == type_name(choice) and _decoder(action.type).decode(action.payload) == choice:
                return action.type, bytes(action.payload)
        raise ValueError(f"the search chose {type_name(choice)}, which the request does not list")

"""An OpenSpiel-like offline API over any `Rules`: step a game in memory, clone it, search it.

One game loop: an `OfflineGame` steps the referee's own aggregate (`games.match`), lifecycle
included (CreateGame, a JoinSeat per seat, StartGame), with the referee's RNG numbering (the
command judged at version v draws from `Rng.for_version(seed, v)`, docs/fairness.md). So an offline
game built from a referee's seed, given the seats its joins recorded and fed its commands,
writes the referee's log event for event, byte for byte once encoded (tests/games/
test_one_loop.py): default actions for resigned seats, the end of the game and the revealed seed
included.

Hidden information and search. Two things a real player does not know:

* future chance outcomes (draws, rolls, reshuffles), which come from the secret seed; and
* secrets already sitting in the state (e.g. Sentient's deck order, fixed at set-up).

`clone(resample=True, rng_seed=...)` removes both from a copy: it replaces the seed used for
FUTURE randomness (so later rolls are a sample, not the truth) and runs the game's `determinize`
hook (declared in its spec), which re-deals the unseen parts of the state consistently with what
is public. A search bot that only ever looks at resampled clones therefore never reads the true
future (a "determinization").
"""

from __future__ import annotations

import contextlib
import operator
from collections.abc import Sequence
from typing import Any, Protocol, cast

import msgspec

from contracts import lifecycle as lc
from games import match as m
from games.base import Rejected, Result, Rules
from games.bots import Bot
from games.catalog import spec_for
from games.rng import Rng
from games.spec import Determinizer

Command = msgspec.Struct


def determinizer_for(rules: Rules[Any]) -> Determinizer | None:
    """The game's hook, or None when the game keeps no secrets in its state. A rules object no
    spec declares (a variant of a game) may carry its own `determinize(state, rng)` method."""
    method = getattr(rules, "determinize", None)
    if callable(method):
        return cast(Determinizer, method)
    # The rules a spec declares, or the same class over other data (GameSpec.bots_for): a variant
    # of another kind (a wrapper, a subclass) may hide otherwise.
    spec = spec_for(rules.name)
    kit = spec.bots_for(rules) if spec is not None else None
    return kit.determinize if kit is not None else None


class Seat(msgspec.Struct, frozen=True, kw_only=True):
    """Who sits at a seat, as its JoinSeat records it. Offline the token hash only has to be
    unique; to reproduce a referee's log, give the hashes and reply clients its log holds."""

    name: str
    kind: str = "bot"
    token_hash: str | None = None
    reply_client: str | None = None


class IllegalAction(ValueError):
    """`apply` was refused by the rules; `rejected` carries the rule id, its text and the detail."""

    def __init__(self, seat: int, action: Command, rejected: Rejected) -> None:
        super().__init__(f"seat {seat} played {action!r}: {rejected.rule} {rejected.detail}".rstrip())
        self.seat = seat
        self.action = action
        self.rejected = rejected


class NativeCore(Protocol):
    """A game's native core (its spec's `native`): the game past set-up, with the lifecycle that
    offline play needs (resigned seats, the end), stepped without events. It must reach the very
    states the Python rules reach, draw for draw (the game's tests compare them at every step)."""

    @property
    def version(self) -> int: ...
    @property
    def ended(self) -> bool: ...

    seed: str

    def play(self, seat: int, action: Command) -> bool:
        """Apply `action` as the referee would: False, unchanged, when it leaves it to the Python
        rules (any refusal, whose reason they give, or an input it does not model)."""
        ...

    def to_act(self) -> list[int]: ...
    def current_player(self) -> int | None: ...
    def legal(self, seat: int) -> list[Command]: ...
    def winners(self) -> list[int]: ...
    def scores(self) -> list[int]: ...
    def resigned_seats(self) -> list[bool]: ...
    def copy(self) -> NativeCore: ...
    def redeal(self, source: str) -> None: ...
    def state(self) -> Any: ...


_WIRE = msgspec.json.Encoder()


def _malformed(action: object) -> Rejected | None:
    """What the referee's decoding would say of `action` as its payload (GAME-MALFORMED), or None.
    A command built in Python is not checked against its types: Acquire(block_left=-3) would give
    assistants back, and a float or NaN would enter the state. Sent over the wire, it is encoded
    and decoded like this. (A native core takes exact types only, so only what it declines comes
    here.)"""
    if not isinstance(action, msgspec.Struct):
        return None  # not a command at all: the rules name it (GAME-UNKNOWN-TYPE)
    try:
        msgspec.json.decode(_WIRE.encode(action), type=type(action))
    except (msgspec.ValidationError, msgspec.EncodeError, msgspec.DecodeError, TypeError, ValueError) as exc:
        return m.rejected("GAME-MALFORMED", f"{type(action).__name__}: {exc}")
    return None


class OfflineGame:
    """One game in memory. Build it with `new_game`; `state` is the TRUE state (secrets included).

    A game that keeps no log may run on its title's native core (`new_game(native=...)`). It
    behaves as the Python aggregate would, and becomes it (for good) when asked for what the core
    does not hold: `match`, `state`, or an input only the Python rules model. `native` says which.
    """

    __slots__ = ("_core", "_determinize", "_match", "events", "history")

    def __init__(
        self,
        match: m.Match,
        *,
        history: list[tuple[int, Command]] | None = None,
        events: list[msgspec.Struct] | None = None,
        determinize: Determinizer | None = None,
        core: NativeCore | None = None,
    ) -> None:
        # The referee's aggregate: lifecycle (seats, status, seed, version) around the game's state.
        # With a core, only its lifecycle part is kept up to date here (see `match`).
        self._match = match
        self._core = core
        self.history: list[tuple[int, Command]] = history if history is not None else []
        # Every event folded, lifecycle and secrets included (what the referee's log holds); None:
        # not recorded, which search clones use because they never read it and copying it costs.
        self.events = events
        self._determinize = determinize

    @property
    def native(self) -> bool:
        """Does this game step on its native core (rather than on the Python aggregate)?"""
        return self._core is not None

    @property
    def match(self) -> m.Match:
        """The referee's aggregate. On a native game, asking for it hands the game over to it."""
        if self._core is not None:
            self._sync(self._core)
            self._core = None
        return self._match

    @match.setter
    def match(self, match: m.Match) -> None:
        self._match, self._core = match, None

    def _sync(self, core: NativeCore) -> m.Match:
        """Bring `_match` level with `core`: the Python aggregate in the same position."""
        match = self._match
        match.game = core.state()
        match.version = core.version
        match.seed = core.seed
        for info, resigned in zip(match.seats, core.resigned_seats(), strict=True):
            if info is not None:
                info.resigned = resigned
        if core.ended:
            res = match.rules.result(match.game)
            match.status = m.OVER
            match.result = Result(scores=res.scores, winners=res.winners, breakdown=res.breakdown)
        return match

    @property
    def rules(self) -> Rules[Any]:
        return self._match.rules

    @property
    def state(self) -> Any:
        """The game's own state (the rules' `S`)."""
        return self.match.game

    @property
    def seed(self) -> str:
        if self._core is not None:
            return self._core.seed
        assert self._match.seed is not None
        return self._match.seed

    @property
    def version(self) -> int:
        """Events folded so far, lifecycle included: the version the referee's log would be at."""
        return self._core.version if self._core is not None else self._match.version

    @property
    def num_players(self) -> int:
        return self._match.num_players

    # ---- queries ------------------------------------------------------------------------

    def current_player(self) -> int | None:
        """The first seat the game waits for (None once terminal)."""
        if self._core is not None:
            return self._core.current_player()
        waiting = m.to_act(self._match)
        return waiting[0] if waiting else None

    def to_act(self) -> list[int]:
        return self._core.to_act() if self._core is not None else m.to_act(self._match)

    def legal_actions(self, seat: int | None = None) -> list[Command]:
        """Commands `seat` (default: the current player) may send now; [] when it is not waited on."""
        if seat is None:
            seat = self.current_player()
            if seat is None:
                return []
        core = self._core
        if core is not None:
            if type(seat) is int and 0 <= seat < self._match.num_players:
                return core.legal(seat)
            # What the rules make of another seat value, on the same position.
            return self.rules.legal_actions(core.state(), seat)
        return self.rules.legal_actions(self._match.game, seat)

    def is_terminal(self) -> bool:
        if self._core is not None:
            return self._core.ended
        return self._match.status != m.RUNNING

    def scores(self) -> list[int]:
        """Raw per-seat scores from `rules.result` (before the end: whatever the game reports then)."""
        if self._core is not None:
            return self._core.scores()
        return list(self.rules.result(self._match.game).scores)

    def returns(self) -> list[float]:
        """Per seat, a win share: 1.0 for a sole winner, 1/k to each of k tied winners, 0.0 otherwise.

        They sum to 1 at the end (the tournament's convention, `games.play.tournament`). Before the
        end every seat gets 0.0, as in OpenSpiel: nothing has been won yet.
        """
        out = [0.0] * self.num_players
        if self._core is not None:
            winners = self._core.winners() if self._core.ended else []
        else:
            result = self._match.result
            winners = result.winners if result is not None else []
        for seat in winners:
            out[seat] = 1.0 / len(winners)
        return out

    def view(self, seat: int | None) -> msgspec.Struct:
        game = self._core.state() if self._core is not None else self._match.game
        return self.rules.view(game, seat)

    # ---- stepping -----------------------------------------------------------------------

    def apply(self, action: Command, seat: int | None = None) -> None:
        """Decide `action` for `seat` (default: the current player) and fold its events, as the
        referee would: then the default actions of resigned seats, and the end of the game.
        `action` may also be `lifecycle.Resign()`.

        Raises `IllegalAction` (with the `Rejected`) if refused; the game is unchanged then.
        """
        if seat is None:
            seat = self.current_player()
            if seat is None:
                over = Rejected(rule="OFFLINE-OVER", text="The game is over.", detail="no seat to act")
                raise IllegalAction(-1, action, over)
        if type(seat) is not int:
            # A NumPy integer (an RL agent's) is the seat it numbers.
            with contextlib.suppress(TypeError):
                seat = operator.index(seat)
        core = self._core
        if core is not None and type(seat) is int and 0 <= seat < self._match.num_players and core.play(seat, action):
            self.history.append((seat, action))
            return
        malformed = _malformed(action)
        if malformed is not None:
            raise IllegalAction(seat, action, malformed)
        if core is not None:
            # Refused, or not modelled by the core: the Python rules judge it on the same position.
            # A refusal leaves both as they were; an accepted move hands the game over for good.
            snapshot = m.clone(self._sync(core), keep_game=False)
            out = m.decide(snapshot, self._request(snapshot, action, seat))
            if isinstance(out, Rejected):
                raise IllegalAction(seat, action, out)
            self._core = None
        self.submit(self._request(self._match, action, seat), seat)
        self.history.append((seat, action))

    @staticmethod
    def _request(match: m.Match, action: Command, seat: int) -> m.Request:
        joined = match.seats[seat] if 0 <= seat < len(match.seats) else None
        token_hash = joined.token_hash if joined is not None else None
        return m.Request(payload=action, seat=seat, token_hash=token_hash)

    def submit(self, request: m.Request, seat: int = -1) -> list[msgspec.Struct]:
        """Judge one request as the referee does (`games.match.decide`) and fold what it writes."""
        out = m.decide(self.match, request, apply=True, in_place=True)
        if isinstance(out, Rejected):
            raise IllegalAction(seat, request.payload, out)
        if self.events is not None:
            self.events.extend(out)
        return out

    # ---- copies -------------------------------------------------------------------------

    def clone(self, *, resample: bool = False, rng_seed: str | None = None, keep_events: bool = True) -> OfflineGame:
        """An independent copy (`rules.clone` of the state; history and, unless resampled, events copied).

        resample=True makes the copy a determinization: future randomness is drawn from `rng_seed`
        (required) instead of the game's seed, and the game's determinize hook re-deals the secrets
        already in the state (e.g. the deck order) from that seed too. Without a hook only the
        future is resampled, which is exact for games that keep no secrets in their state.
        """
        if resample and rng_seed is None:
            raise ValueError("resample=True needs an rng_seed for the sampled future")
        if not resample and rng_seed is not None:
            raise ValueError("rng_seed is only used with resample=True; see with_seed")
        # Versioned like the referee's streams, under a prefix no decide stream uses.
        redeal = f"determinize:{rng_seed}"
        if self._core is not None and (not resample or type(rng_seed) is str):
            core = self._core.copy()
            if resample:
                assert rng_seed is not None
                if self._determinize is not None:
                    core.redeal(f"{redeal}:{core.version}")
                core.seed = rng_seed
            return OfflineGame(
                m.clone(self._match, keep_game=False),
                history=list(self.history),
                determinize=self._determinize,
                core=core,
            )
        # A native game's copy with a seed the core does not take (not a str) is a Python one.
        source = self._match if self._core is None else self._sync(self._core)
        if resample:
            match = m.clone(source, keep_game=self._determinize is None)
            if self._determinize is not None:
                match.game = self._determinize(source.game, Rng.for_version(redeal, self.version))
            match.seed = rng_seed
        else:
            match = m.clone(source)
        # A determinization keeps no log: the log holds the true seed and every secret dealt.
        kept = keep_events and not resample and self.events is not None
        return OfflineGame(
            match,
            history=list(self.history),
            events=list(self.events) if kept and self.events is not None else None,
            determinize=self._determinize,
        )

    def with_seed(self, seed: str) -> OfflineGame:
        """A copy whose future randomness comes from `seed`; the state (secrets included) is kept."""
        copy = self.clone()
        if copy._core is not None and type(seed) is str:
            copy._core.seed = seed
        else:
            copy.match.seed = seed  # on the Python aggregate: it asserts a seed at the next draw
        return copy

    @property
    def has_determinizer(self) -> bool:
        return self._determinize is not None


def new_game(
    rules: Rules[Any],
    num_players: int,
    seed: str,
    *,
    seats: Sequence[Seat] | None = None,
    game_id: str = "offline",
    move_timeout_s: float | None = None,
    record_events: bool = True,
    native: bool | None = None,
) -> OfflineGame:
    """A game after set-up, exactly as the referee sets it up from `seed`: created, every seat
    joined (`seats`, default "seat-0", ...), started by seat 0.

    `native`: step the game on its title's native core (a spec's `native`, e.g. Sentient's), which
    writes no log. None (the default): when there is one for `rules` and no events are recorded.
    True: it must be (ValueError otherwise). False: the Python aggregate, always.
    """
    if seats is not None and len(seats) != num_players:
        raise ValueError(f"{len(seats)} seats for {num_players} players")
    if native and record_events:
        raise ValueError("a native core writes no log: ask for record_events=False")
    game = OfflineGame(
        m.Match(game_id=game_id, rules_impl=rules),
        events=[] if record_events else None,
        determinize=determinizer_for(rules),
    )
    create = lc.CreateGame(game_type=rules.name, num_players=num_players, move_timeout_s=move_timeout_s)
    game.submit(m.Request(payload=create, new_seed=seed))
    for i in range(num_players):
        sitter = seats[i] if seats is not None else Seat(name=f"seat-{i}")
        join = lc.JoinSeat(seat=i, name=sitter.name, kind=sitter.kind)
        token_hash = sitter.token_hash if sitter.token_hash is not None else f"offline:{i}"
        game.submit(m.Request(payload=join, seat=i, new_token_hash=token_hash, reply_client=sitter.reply_client), i)
    first = game.match.seats[0]
    assert first is not None
    core = None
    if not record_events and native is not False and type(seed) is str:
        core = native_core(rules, num_players, seed, game.version)
    if core is not None:
        game._core = core
        game._match.status = m.RUNNING
        return game
    if native:
        raise ValueError(f"no native core for these {rules.name} rules (not built, a variant, or a seed not a str)")
    game.submit(m.Request(payload=lc.StartGame(), seat=0, token_hash=first.token_hash), 0)
    return game


def native_core(rules: Rules[Any], num_players: int, seed: str, version: int) -> NativeCore | None:
    """The game as StartGame leaves it at `version`, on its native core; None without one."""
    spec = spec_for(rules.name)
    if spec is None or spec.native is None:
        return None
    return cast(NativeCore | None, spec.native(rules, num_players, seed, version))


class SearchBot(Protocol):
    """A bot that searches from the live game; it must only look at resampled clones of it."""

    def choose_from(self, game: OfflineGame, seat: int) -> Command: ...


def choice(player: Bot | SearchBot, game: OfflineGame, seat: int) -> Command:
    """`player`'s move at `seat`: a search bot gets the game (`choose_from`), a plain bot (view,
    legal, seat) as from the referee."""
    if hasattr(player, "choose_from"):
        return cast(SearchBot, player).choose_from(game, seat)
    return player.choose(game.view(seat), game.legal_actions(seat), seat)


def play(game: OfflineGame, players: Sequence[Bot | SearchBot]) -> OfflineGame:
    """Play `game` to the end; players[i] sits at seat i (moves by `choice`). Raises IllegalAction
    on a refused move."""
    while not game.is_terminal():
        seat = game.current_player()
        if seat is None:
            raise RuntimeError("game not over but nobody to act")
        game.apply(choice(players[seat], game, seat), seat)
    return game

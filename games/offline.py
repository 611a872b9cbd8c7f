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

from collections.abc import Sequence
from typing import Any, Protocol, cast

import msgspec

from contracts import lifecycle as lc
from games import match as m
from games.base import Rejected, Rules
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
    # Only the very rules a spec declares: a variant (other data, a wrapper) may hide otherwise.
    spec = spec_for(rules.name)
    return spec.determinize if spec is not None and spec.rules is rules else None


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


class OfflineGame:
    """One game in memory. Build it with `new_game`; `state` is the TRUE state (secrets included)."""

    __slots__ = ("_determinize", "events", "history", "match")

    def __init__(
        self,
        match: m.Match,
        *,
        history: list[tuple[int, Command]] | None = None,
        events: list[msgspec.Struct] | None = None,
        determinize: Determinizer | None = None,
    ) -> None:
        # The referee's aggregate: lifecycle (seats, status, seed, version) around the game's state.
        self.match = match
        self.history: list[tuple[int, Command]] = history if history is not None else []
        # Every event folded, lifecycle and secrets included (what the referee's log holds); None:
        # not recorded, which search clones use because they never read it and copying it costs.
        self.events = events
        self._determinize = determinize

    @property
    def rules(self) -> Rules[Any]:
        return self.match.rules

    @property
    def state(self) -> Any:
        """The game's own state (the rules' `S`)."""
        return self.match.game

    @property
    def seed(self) -> str:
        assert self.match.seed is not None
        return self.match.seed

    @property
    def version(self) -> int:
        """Events folded so far, lifecycle included: the version the referee's log would be at."""
        return self.match.version

    @property
    def num_players(self) -> int:
        return self.match.num_players

    # ---- queries ------------------------------------------------------------------------

    def current_player(self) -> int | None:
        """The first seat the game waits for (None once terminal)."""
        waiting = m.to_act(self.match)
        return waiting[0] if waiting else None

    def to_act(self) -> list[int]:
        return m.to_act(self.match)

    def legal_actions(self, seat: int | None = None) -> list[Command]:
        """Commands `seat` (default: the current player) may send now; [] when it is not waited on."""
        if seat is None:
            seat = self.current_player()
            if seat is None:
                return []
        return self.rules.legal_actions(self.state, seat)

    def is_terminal(self) -> bool:
        return self.match.status != m.RUNNING

    def scores(self) -> list[int]:
        """Raw per-seat scores from `rules.result` (before the end: whatever the game reports then)."""
        return list(self.rules.result(self.state).scores)

    def returns(self) -> list[float]:
        """Per seat, a win share: 1.0 for a sole winner, 1/k to each of k tied winners, 0.0 otherwise.

        They sum to 1 at the end (the tournament's convention, `games.play.tournament`). Before the
        end every seat gets 0.0, as in OpenSpiel: nothing has been won yet.
        """
        out = [0.0] * self.num_players
        result = self.match.result
        if result is None:
            return out
        for seat in result.winners:
            out[seat] = 1.0 / len(result.winners)
        return out

    def view(self, seat: int | None) -> msgspec.Struct:
        return self.rules.view(self.state, seat)

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
        joined = self.match.seats[seat] if 0 <= seat < len(self.match.seats) else None
        token_hash = joined.token_hash if joined is not None else None
        self.submit(m.Request(payload=action, seat=seat, token_hash=token_hash), seat)
        self.history.append((seat, action))

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
        if resample:
            if rng_seed is None:
                raise ValueError("resample=True needs an rng_seed for the sampled future")
            match = m.clone(self.match, keep_game=self._determinize is None)
            if self._determinize is not None:
                # Versioned like the referee's streams, under a prefix no decide stream uses.
                match.game = self._determinize(self.state, Rng.for_version(f"determinize:{rng_seed}", self.version))
            match.seed = rng_seed
        else:
            if rng_seed is not None:
                raise ValueError("rng_seed is only used with resample=True; see with_seed")
            match = m.clone(self.match)
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
        copy.match.seed = seed
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
) -> OfflineGame:
    """A game after set-up, exactly as the referee sets it up from `seed`: created, every seat
    joined (`seats`, default "seat-0", ...), started by seat 0."""
    if seats is not None and len(seats) != num_players:
        raise ValueError(f"{len(seats)} seats for {num_players} players")
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
    game.submit(m.Request(payload=lc.StartGame(), seat=0, token_hash=first.token_hash), 0)
    return game


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

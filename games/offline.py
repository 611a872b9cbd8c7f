"""An OpenSpiel-like offline API over any `Rules`: step a game in memory, clone it, search it.

The loop is like the referee's (see `games.play.play_game`) but not the same: it has no lifecycle
events, so its set-up is decided with `Rng.for_version(seed, 0)` and the command that writes
events after its own version `v` with `Rng.for_version(seed, v)`, where the referee numbers
versions with the lifecycle events counted (docs/fairness.md, "Which version"). An `OfflineGame`
built from a referee's seed therefore does NOT reproduce the referee's set-up or rolls; making both
step one lifecycle aggregate is open work (the game-kit issue).

Hidden information and search. Two things a real player does not know:

* future chance outcomes (draws, rolls, reshuffles), which come from the secret seed; and
* secrets already sitting in the state (e.g. Sentient's deck order, fixed at set-up).

`clone(resample=True, rng_seed=...)` removes both from a copy: it replaces the seed used for
FUTURE randomness (so later rolls are a sample, not the truth) and runs the game's `determinize`
hook, which re-deals the unseen parts of the state consistently with what is public. A search bot
that only ever looks at resampled clones therefore never reads the true future (a "determinization").
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from typing import Any, Protocol, cast

import msgspec

from games.base import Rejected, Rules
from games.bots import Bot
from games.rng import Rng

Command = msgspec.Struct
# (state, rng) -> a NEW state: the secrets of `state` re-dealt from `rng`; the input is not mutated.
Determinizer = Callable[[Any, Rng], Any]

# rules.name -> "module:function" of that game's determinize hook. Resolved lazily so this module
# stays game-agnostic (importing it does not import any game). A rules object may instead carry a
# `determinize(state, rng)` method, which wins over this table.
DETERMINIZERS: dict[str, str] = {
    "sentient": "games.sentient.determinize:determinize",
}

_resolved: dict[str, Determinizer] = {}


def register_determinizer(game_name: str, target: str | Determinizer) -> None:
    """Register a hook for a game: a callable, or a "module:function" path imported on first use."""
    if callable(target):
        _resolved[game_name] = target
    else:
        DETERMINIZERS[game_name] = target
        _resolved.pop(game_name, None)


def determinizer_for(rules: Rules[Any]) -> Determinizer | None:
    """The game's hook, or None when the game keeps no secrets in its state."""
    method = getattr(rules, "determinize", None)
    if callable(method):
        return cast(Determinizer, method)
    hook = _resolved.get(rules.name)
    if hook is not None:
        return hook
    target = DETERMINIZERS.get(rules.name)
    if target is None:
        return None
    module_name, _, attr = target.partition(":")
    hook = cast(Determinizer, getattr(importlib.import_module(module_name), attr))
    _resolved[rules.name] = hook
    return hook


class IllegalAction(ValueError):
    """`apply` was refused by the rules; `rejected` carries the rule id, its text and the detail."""

    def __init__(self, seat: int, action: Command, rejected: Rejected) -> None:
        super().__init__(f"seat {seat} played {action!r}: {rejected.rule} {rejected.detail}".rstrip())
        self.seat = seat
        self.action = action
        self.rejected = rejected


class OfflineGame:
    """One game in memory. Build it with `new_game`; `state` is the TRUE state (secrets included)."""

    __slots__ = ("_determinize", "events", "history", "num_players", "rules", "seed", "state", "version")

    def __init__(
        self,
        rules: Rules[Any],
        state: Any,
        *,
        seed: str,
        version: int,
        num_players: int,
        history: list[tuple[int, Command]] | None = None,
        events: list[msgspec.Struct] | None = None,
        determinize: Determinizer | None = None,
    ) -> None:
        self.rules = rules
        self.state = state
        self.seed = seed
        # Number of events folded so far: the log version the referee would be at.
        self.version = version
        self.num_players = num_players
        self.history: list[tuple[int, Command]] = history if history is not None else []
        # Every event folded, secrets included (what the referee's log holds); None: not recorded,
        # which search clones use because they never read it and copying it costs.
        self.events = events
        self._determinize = determinize

    # ---- queries ------------------------------------------------------------------------

    def current_player(self) -> int | None:
        """The first seat the game waits for (None once terminal)."""
        waiting = self.rules.to_act(self.state)
        return waiting[0] if waiting else None

    def to_act(self) -> list[int]:
        return self.rules.to_act(self.state)

    def legal_actions(self, seat: int | None = None) -> list[Command]:
        """Commands `seat` (default: the current player) may send now; [] when it is not waited on."""
        if seat is None:
            seat = self.current_player()
            if seat is None:
                return []
        return self.rules.legal_actions(self.state, seat)

    def is_terminal(self) -> bool:
        return self.rules.is_over(self.state)

    def scores(self) -> list[int]:
        """Raw per-seat scores from `rules.result` (before the end: whatever the game reports then)."""
        return list(self.rules.result(self.state).scores)

    def returns(self) -> list[float]:
        """Per seat, a win share: 1.0 for a sole winner, 1/k to each of k tied winners, 0.0 otherwise.

        They sum to 1 at the end (the tournament's convention, `games.play.tournament`). Before the
        end every seat gets 0.0, as in OpenSpiel: nothing has been won yet.
        """
        out = [0.0] * self.num_players
        if not self.is_terminal():
            return out
        winners = self.rules.result(self.state).winners
        for seat in winners:
            out[seat] = 1.0 / len(winners)
        return out

    def view(self, seat: int | None) -> dict[str, Any]:
        return self.rules.view(self.state, seat)

    # ---- stepping -----------------------------------------------------------------------

    def apply(self, action: Command, seat: int | None = None) -> None:
        """Decide `action` for `seat` (default: the current player) and fold its events.

        Raises `IllegalAction` (with the `Rejected`) if the rules refuse it; the game is unchanged then.
        """
        if seat is None:
            seat = self.current_player()
            if seat is None:
                over = Rejected(rule="OFFLINE-OVER", text="The game is over.", detail="no seat to act")
                raise IllegalAction(-1, action, over)
        out = self.rules.decide(self.state, seat, action, Rng.for_version(self.seed, self.version))
        if isinstance(out, Rejected):
            raise IllegalAction(seat, action, out)
        self.history.append((seat, action))
        state = self.state
        for ev in out:
            state = self.rules.evolve(state, ev)
        self.state = state
        self.version += len(out)
        if self.events is not None:
            self.events.extend(out)

    # ---- copies -------------------------------------------------------------------------

    def clone(self, *, resample: bool = False, rng_seed: str | None = None, keep_events: bool = True) -> OfflineGame:
        """An independent copy (`rules.clone` of the state; history and events copied).

        resample=True makes the copy a determinization: future randomness is drawn from `rng_seed`
        (required) instead of the game's seed, and the game's determinize hook re-deals the secrets
        already in the state (e.g. the deck order) from that seed too. Without a hook only the
        future is resampled, which is exact for games that keep no secrets in their state.
        """
        if resample:
            if rng_seed is None:
                raise ValueError("resample=True needs an rng_seed for the sampled future")
            if self._determinize is not None:
                # Versioned like the referee's streams, under a prefix no decide stream uses.
                state = self._determinize(self.state, Rng.for_version(f"determinize:{rng_seed}", self.version))
            else:
                state = self.rules.clone(self.state)
            seed = rng_seed
        else:
            if rng_seed is not None:
                raise ValueError("rng_seed is only used with resample=True; see with_seed")
            state = self.rules.clone(self.state)
            seed = self.seed
        return OfflineGame(
            self.rules,
            state,
            seed=seed,
            version=self.version,
            num_players=self.num_players,
            history=list(self.history),
            events=list(self.events) if keep_events and self.events is not None else None,
            determinize=self._determinize,
        )

    def with_seed(self, seed: str) -> OfflineGame:
        """A copy whose future randomness comes from `seed`; the state (secrets included) is kept."""
        copy = self.clone()
        copy.seed = seed
        return copy

    @property
    def has_determinizer(self) -> bool:
        return self._determinize is not None


def new_game(rules: Rules[Any], num_players: int, seed: str, *, record_events: bool = True) -> OfflineGame:
    """A game after set-up, exactly as the referee sets it up from `seed`."""
    state = rules.initial_state(num_players)
    setup = rules.setup(num_players, Rng.for_version(seed, 0))
    for ev in setup:
        state = rules.evolve(state, ev)
    return OfflineGame(
        rules,
        state,
        seed=seed,
        version=len(setup),
        num_players=num_players,
        events=list(setup) if record_events else None,
        determinize=determinizer_for(rules),
    )


class SearchBot(Protocol):
    """A bot that searches from the live game; it must only look at resampled clones of it."""

    def choose_from(self, game: OfflineGame, seat: int) -> Command: ...


def play(game: OfflineGame, players: Sequence[Bot | SearchBot]) -> OfflineGame:
    """Play `game` to the end; players[i] sits at seat i. Search bots get the game (`choose_from`),
    plain bots get (view, legal, seat) as from the referee. Raises IllegalAction on a refused move."""
    while not game.is_terminal():
        seat = game.current_player()
        if seat is None:
            raise RuntimeError("game not over but nobody to act")
        player = players[seat]
        if hasattr(player, "choose_from"):
            cmd = cast(SearchBot, player).choose_from(game, seat)
        else:
            cmd = player.choose(game.view(seat), game.legal_actions(seat), seat)
        game.apply(cmd, seat)
    return game

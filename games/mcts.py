"""A game-agnostic Monte Carlo tree search bot for games with hidden information and chance.

Algorithm: single-observer information-set MCTS (SO-ISMCTS, Cowling, Powley & Whitehouse 2012).
Every iteration searches one determinization: a clone of the live game with its secrets re-dealt
and its future randomness reseeded (`OfflineGame.clone(resample=True)`), so the bot never reads the
true deck order or the true future rolls. One tree, keyed by action, is shared by all
determinizations; an action legal in some determinizations only is judged by UCB with
"availability" counts (how often it could have been chosen) instead of the parent's visits.
Opponents' nodes maximise the opponent's own return, so the tree plays every seat sensibly.

Branching. Sentient's Acquire has up to ~320 variants (slot x network slot x blocks x assistants),
far more than a few hundred iterations can try once each. Rather than pruning variants by a
game-specific rule (e.g. "no more than 2 assistants", which would forbid good investor fights),
a node may only hold `ceil(widen_k * visits ** widen_alpha)` children (progressive widening), and
the next child to add is the one a prior policy picks among the untried legal actions. With the
game's greedy bot as prior, the first child is the greedy move, the second the greedy move
among the rest, and so on: the search spends its budget on a handful of plausible moves and asks
whether look-ahead prefers one to the greedy choice. Without a prior the next child is random.

Rollouts. The default policy plays to the end of the game: with a rollout policy bot, at each step
it samples `rollout_sample` legal actions and lets the bot pick among them ("greedy-lite": much
cheaper than the full greedy evaluation, and the sampling keeps the rollouts diverse); with none,
uniformly at random. The value backed up is `OfflineGame.returns()[seat]` (win shares), so the
search maximises the chance to win, not the score.

What the platform plays (`searcher`: the hosted `ismcts` bot, `python -m bench.search`): the
game's greedy bot as prior AND as rollout policy over every legal action, so a rollout asks "what
if both sides played greedy from here", a policy-improvement step over greedy, and progressive
widening with alpha 0.3. Random rollouts to the end of a long game say almost nothing: with them,
2 players against greedy at 0.3 s a move, Mechanica won 4 and Artifacts, Inc. 5 of 12 hosted
games; cut-off rollouts scored by the running scores were no better (Mechanica 0.3-0.4 of 10:
money spent on a factory reads as a loss), nor was backing up a blend of win and score share
(Artifacts 0.6 of 10 against 0.7). Widening: alpha 0.5 gave Artifacts 0.475 of 20, 0.3 gave 0.65:
with ~120 rollouts a move, five root candidates are judged better than eleven. Against greedy, 2
players, 1 s a move, 20 seeded games each (2026-12-02): Sentient 0.90, Prosperity 1.00, Mechanica
0.85, Artifacts, Inc. 0.65, and 0.80 at 2 s a move (bench/README.md). Artifacts' greedy bot, the
dearest rollout policy, was then made cheaper without changing a choice (2026-12-03,
games/artifacts/bots.py: 1.8-1.9x the decisions a CPU second, 1.25-1.29x the search's
iterations); on a machine shared with other runs (57 and 65 iterations a move at 1 s, against 122
idle before) the same command gave 0.85 and 0.75 (intervals 0.64-0.95, 0.53-0.89): time-bounded,
so not repeatable, and not yet measured on an idle machine.

Native playouts. A game may declare its greedy bot's rollout in native code (`GameSpec.greedy_playout`:
Prosperity's games/prosperity/playout.pyx, Artifacts, Inc.'s games/artifacts/playout.pyx); `searcher`
passes it as `playout`, and an iteration then rolls out in C wherever the playout takes the
position (it declines set-up, a hidden deck and resigned seats, which roll out in Python). It gives
the winner the Python rollout gives and draws from the bot's generator for each forced move as
`_rollout` does, so the search is the same move for move (tests/games/prosperity/test_playout.py,
tests/games/artifacts/test_playout.py), only cheaper: a 3-player Prosperity search game at 50
iterations a move takes 18.6 s rolling out in Python and 0.98 s with the playout on an idle machine
(`python -m bench.playout`, bench/README.md).

The constructor's defaults are game-agnostic (no prior, random rollouts). The earlier hosted
configuration, measured on Sentient, 2 players, against `games.sentient.bots.GreedyBot`: 200
iterations, greedy prior, random rollouts, c = 0.7: win share 0.76 over 80 seeded games, about
0.15 s per move on one core. Greedy-lite rollouts were weaker per second (0.725 vs 0.85 on the same
20 games at twice the time per move); without the prior, random widening won 0.10; c = 0.4/0.5/1.0
and widen_alpha = 0.4/0.6 were no better. Those figures predate offline games taking the referee's
version numbering (the same seeds now give other games); on the 20 seeds of
tests/games/sentient/test_mcts.py, which pins the figure, the share is now 0.675 (2026-12-01).
"""

from __future__ import annotations

import math
import random
import time
from typing import Any

import msgspec

from games.base import Rules
from games.bots import Bot
from games.offline import Command, OfflineGame
from games.spec import GameSpec, Playout


class NotBound(RuntimeError):
    """`MCTSBot.choose` was called without a game to search: use `choose_from` or `bind` first."""


class _Node:
    __slots__ = ("action", "availability", "children", "value", "visits")

    def __init__(self, action: Command | None) -> None:
        self.action = action
        # Keyed by the action (or its encoding, for a game whose commands are not hashable).
        self.children: dict[object, _Node] = {}
        self.visits = 0
        self.value = 0.0  # sum of the returns of the seat that chose `action`
        self.availability = 0


def _key(action: Command) -> object:
    """Frozen msgspec Structs hash by value, which is the cheap path; others by their encoding."""
    try:
        hash(action)
    except TypeError:
        return (type(action), msgspec.msgpack.encode(action))
    return action


class MCTSBot:
    """Information-set MCTS. Use `choose_from(game, seat)`, or `bind(game)` then the Bot `choose`.

    rules: the game (checked against the games it is given).
    iterations: determinizations searched per move (the budget when time_limit is None).
    time_limit: seconds per move; with both set, whichever runs out first stops the search.
    exploration: the UCB constant c in mean + c * sqrt(ln(availability) / visits); returns are in [0, 1].
    seed: the bot's own randomness (determinizations, tie-breaks, random rollouts).
    prior: a Bot whose choices order progressive widening (None: random order).
    rollout_policy: a Bot for rollouts, given `rollout_sample` sampled legal actions, or all of them
        when rollout_sample is None (no rollout_policy: random).
    widen_k, widen_alpha: a node visited n times may hold ceil(widen_k * (n + 1) ** widen_alpha) children.
    playout: the rollout in native code (games.spec.Playout), used wherever it takes the position: it
        must play what `rollout_policy` over every legal action plays (rollout_sample None), winner
        for winner, so the search is the same with or without it, only faster.

    Games whose state holds secrets declare a determinize hook in their spec (games.spec.GameSpec,
    checked for every game by tests/games/test_every_game.py); without one a resampled clone only
    reseeds the future, and the bot would search the true state.
    """

    def __init__(
        self,
        rules: Rules[Any],
        *,
        iterations: int = 300,
        time_limit: float | None = None,
        exploration: float = 0.7,
        seed: int | str = 0,
        prior: Bot | None = None,
        rollout_policy: Bot | None = None,
        rollout_sample: int | None = 6,
        widen_k: float = 1.0,
        widen_alpha: float = 0.5,
        playout: Playout | None = None,
    ) -> None:
        if iterations < 1:
            raise ValueError("iterations must be at least 1")
        if playout is not None and (rollout_policy is None or rollout_sample is not None):
            raise ValueError(
                "a playout plays its rollout policy over every legal action: give the rollout_policy "
                "and rollout_sample=None"
            )
        self.rules = rules
        self.iterations = iterations
        self.time_limit = time_limit
        self.exploration = exploration
        self.prior = prior
        self.rollout_policy = rollout_policy
        self.rollout_sample = rollout_sample
        self.widen_k = widen_k
        self.widen_alpha = widen_alpha
        self.playout = playout
        self._seed = str(seed)
        self._rng = random.Random(self._seed)
        self._bound: OfflineGame | None = None
        # Figures of the last search, for reports and tests.
        self.last_iterations = 0
        self.last_seconds = 0.0

    # ---- the Bot protocol ---------------------------------------------------------------

    def bind(self, game: OfflineGame) -> None:
        """Search from `game` on later `choose` calls; the caller keeps it in step with the real game."""
        if game.rules is not self.rules:
            raise ValueError(f"bound to a {_named(game.rules)} game but built for {_named(self.rules)}")
        self._bound = game

    def choose(self, view: Any, legal: list[Command], seat: int) -> Command:
        # A view alone is not enough to search: the bot needs a game to clone and determinize.
        if self._bound is None:
            raise NotBound("MCTSBot needs a game to search: call choose_from(game, seat) or bind(game) first")
        return self.choose_from(self._bound, seat)

    # ---- search -------------------------------------------------------------------------

    def choose_from(self, game: OfflineGame, seat: int) -> Command:
        """The most visited root action after searching determinizations of `game` for `seat`.

        Only `game.legal_actions(seat)` (public) and resampled clones are read: never the true state.
        """
        if game.rules is not self.rules:
            raise ValueError(f"given a {_named(game.rules)} game but built for {_named(self.rules)}")
        if seat not in game.to_act():
            raise ValueError(f"seat {seat} is not to act (waiting for {game.to_act()})")
        legal = game.legal_actions(seat)
        if not legal:
            raise ValueError(f"seat {seat} has no legal action")
        if len(legal) == 1:
            return legal[0]
        root = _Node(None)
        start = time.perf_counter()
        deadline = None if self.time_limit is None else start + self.time_limit
        done = 0
        while done < self.iterations:
            rng_seed = f"mcts:{self._seed}:{self._rng.getrandbits(64):016x}"
            # Search clones drop the event log: nothing reads it and copying it would cost.
            sample = game.clone(resample=True, rng_seed=rng_seed, keep_events=False)
            self._iterate(root, sample, seat)
            done += 1
            if deadline is not None and time.perf_counter() >= deadline:
                break
        self.last_iterations = done
        self.last_seconds = time.perf_counter() - start
        legal_keys = {_key(a) for a in legal}
        best = max(
            (child for k, child in root.children.items() if k in legal_keys),
            key=lambda ch: (ch.visits, ch.value / ch.visits if ch.visits else 0.0),
            default=None,
        )
        return best.action if best is not None and best.action is not None else legal[0]

    def _iterate(self, root: _Node, game: OfflineGame, first: int) -> None:
        """One SO-ISMCTS iteration on one determinization: select/expand, roll out, back up.
        `first` moves at the root: where several seats act at once (Prosperity's simultaneous
        choices) the searching seat need not be the first one waited for."""
        node = root
        path: list[tuple[_Node, int]] = []  # (child entered, seat that chose it)
        while not game.is_terminal():
            seat = first if node is root else game.current_player()
            assert seat is not None
            legal = game.legal_actions(seat)
            by_key = {_key(a): a for a in legal}
            available = [ch for k, ch in node.children.items() if k in by_key]
            for ch in available:
                ch.availability += 1
            allowed = math.ceil(self.widen_k * (node.visits + 1) ** self.widen_alpha)
            if len(available) < allowed and len(available) < len(by_key):
                untried = [a for k, a in by_key.items() if k not in node.children]
                action = self._expand_choice(game, seat, untried)
                child = _Node(action)
                child.availability = 1
                node.children[_key(action)] = child
                game.apply(action, seat)
                path.append((child, seat))
                break
            child = self._select(available)
            assert child.action is not None
            game.apply(child.action, seat)
            path.append((child, seat))
            node = child
        returns = self._playout(game) if self.playout is not None else None
        if returns is None:
            self._rollout(game)
            returns = game.returns()
        root.visits += 1
        for child, seat in path:
            child.visits += 1
            child.value += returns[seat]

    def _select(self, children: list[_Node]) -> _Node:
        c = self.exploration
        best: _Node | None = None
        best_score = -math.inf
        for ch in children:
            if ch.visits == 0:
                return ch
            score = ch.value / ch.visits + c * math.sqrt(math.log(ch.availability) / ch.visits)
            if score > best_score:
                best, best_score = ch, score
        assert best is not None
        return best

    def _expand_choice(self, game: OfflineGame, seat: int, untried: list[Command]) -> Command:
        if self.prior is None or len(untried) == 1:
            return untried[self._rng.randrange(len(untried))]
        return self.prior.choose(game.view(seat), untried, seat)

    def _playout(self, game: OfflineGame) -> list[float] | None:
        """The native playout's returns, or None where it does not take the position."""
        assert self.playout is not None
        played = self.playout(game)
        if played is None:
            return None
        winners, forced = played
        for _ in range(forced):
            # The Python rollout draws for every forced move (`_rollout`): so does this, to stay in step.
            self._rng.randrange(1)
        out = [0.0] * game.num_players
        for seat in winners:
            out[seat] = 1.0 / len(winners)
        return out

    def _rollout(self, game: OfflineGame) -> None:
        policy, k, rng = self.rollout_policy, self.rollout_sample, self._rng
        while not game.is_terminal():
            seat = game.current_player()
            assert seat is not None
            legal = game.legal_actions(seat)
            if policy is None or len(legal) == 1:
                action = legal[rng.randrange(len(legal))]
            else:
                options = legal if k is None or len(legal) <= k else rng.sample(legal, k)
                action = policy.choose(game.view(seat), options, seat)
            game.apply(action, seat)


def _named(rules: Rules[Any]) -> str:
    # Rules of one game over two data files share the name: the data version tells them apart.
    return f"{rules.name} ({rules.data_version})"


# Fewer children per visit than the constructor's 0.5: with ~100-300 greedy rollouts a move, a
# root of ~5 candidates gets estimates precise enough to overrule the prior (module docstring).
SEARCH_WIDEN_ALPHA = 0.3


def searcher(
    spec: GameSpec,
    *,
    seed: int | str = 0,
    iterations: int = 1000,
    seconds: float | None = 1.0,
    rules: Rules[Any] | None = None,
) -> MCTSBot:
    """The search bot the platform hosts for `spec`'s game: greedy prior, greedy rollouts over every
    legal action (the module docstring says why), bounded by whichever of the budgets runs out first.
    `rules`: the game over other data (GameSpec.bots_for), for games created under an earlier data
    file or a variant being measured; default `spec.rules`."""
    rules = spec.rules if rules is None else rules
    kit = spec.bots_for(rules)
    if kit is None:
        raise ValueError(f"{spec.name} has no bots over these rules ({rules.data_version!r}): GameSpec.bots_on")
    # The greedy rollout in native code where the game has one for these rules and this bot (the same
    # moves).
    policy = kit.greedy()
    playout = spec.greedy_playout(rules, policy) if spec.greedy_playout is not None else None
    return MCTSBot(
        rules,
        iterations=iterations,
        time_limit=seconds,
        seed=seed,
        prior=kit.greedy(),
        rollout_policy=policy,
        rollout_sample=None,
        widen_alpha=SEARCH_WIDEN_ALPHA,
        playout=playout,
    )

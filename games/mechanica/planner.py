"""A Mechanica bot that plans its buys by running its own factory forward.

Greedy scores a buy with a rule of thumb per kind, which never sees why a truck or a fork pays:
a bigger truck only earns once a lane carries more bots than its truck holds, and a fork only
by sending bots to a dock with room. This bot asks the rules instead. It rebuilds the table from
the view (the view shows every factory, and no buy depends on a hidden card), applies each
legal buy with the real `decide` and `evolve`, and runs the seat's factory alone through the
workdays left (each run, its improvements, selling every truck, making bots: the rules' own
functions), keeping the buy that leaves the most money, vault and end values. Blueprints and
selling are greedy's.
"""

from __future__ import annotations

import msgspec

from contracts import mechanica as c
from contracts.views.mechanica import MechanicaView
from games.base import Rejected
from games.mechanica import factory as fx
from games.mechanica import fold
from games.mechanica.bots import GreedyBot
from games.mechanica.components import FORK_DIRECTIONS, MechanicaData
from games.mechanica.rules import MechanicaRules
from games.mechanica.scoring import improvements_value
from games.mechanica.state import EMPTY, HIDDEN, MechanicaState, PlayerState, clone
from games.rng import Rng

# What a buy must add to the forecast to be worth making (it spends money the forecast does not
# value: a better buy may come up later).
MIN_GAIN = 1
# Buys never draw: decide gets an RNG only because its signature takes one.
_NO_DRAWS = Rng(b"planner")
_PLANNED = (c.Install, c.Recycle, c.BuyTruck, c.UpgradeTruck, c.BuyFork, c.SetFork)


def runs_left(view: MechanicaView) -> int:
    """Factory runs still to come (one at the start of each later workday) if nobody buys another
    improvement, which can only bring the end nearer: the shop's rotations and draws of the rules'
    `_end_turn` and the end test of `_end_workday`, played forward on the public counts."""
    if view.over or not view.to_act:
        return 0
    n = len(view.players)
    stack, extras = view.stack_size, view.extras_size
    shop = [bool(s.improvement) for s in view.shop]
    seat, runs = view.to_act[0], 0
    while True:
        shop = [False, *shop[:-1]]  # the turn ends: one notch, the last space into the Recycler
        if stack:
            stack, shop[0] = stack - 1, True
        elif n == 4 and extras:
            extras, shop[0] = extras - 1, True
        if 2 <= n <= 3 and extras and shop[0] and not any(shop[1:]):
            shop = [True, *shop[:-1]]  # the double rotation draws from the Extras
            extras -= 1
        seat = (seat + 1) % n
        if seat == view.first_player:
            if not stack and (n < 4 or not extras) and not any(shop):
                return runs
            runs += 1


def table(view: MechanicaView, seat: int) -> MechanicaState:
    """The game as `view` shows it, with `seat` to act (none once it is over): the hidden stack,
    Extras and piles below their face-up cards are HIDDEN, which no buy reads."""
    cols = view.board.cols
    players = []
    for pl in view.players:
        f = pl.factory
        forks = [EMPTY] * len(f.pieces)
        for fork in f.forks:
            forks[(fork.row - 1) * cols + fork.col - 1] = FORK_DIRECTIONS[fork.direction]
        players.append(
            PlayerState(
                wallet=pl.wallet,
                vault=pl.vault,
                tiles=list(f.pieces),
                holes=[list(h) for h in f.holes],
                forks=forks,
                forks_turned=[(sq.row - 1) * cols + sq.col - 1 for sq in f.forks_turned],
                blueprints_done=list(pl.blueprints_done),
            )
        )
    return MechanicaState(
        num_players=len(players),
        players=players,
        stack=[HIDDEN] * view.stack_size,
        extras=[HIDDEN] * view.extras_size,
        shop=[s.improvement for s in view.shop],
        piles=[[b.face_up or HIDDEN] + [HIDDEN] * max(0, b.size - 1) if b.size else [] for b in view.blueprints],
        sideways=view.sideways,
        discard=list(view.discard),
        workday=view.workday,
        first_player=view.first_player,
        current=None if view.over else seat,
        bought=view.bought_this_turn,
        over=view.over,
        final_scores=list(view.final_scores),
        winners=list(view.winners),
    )


class PlannerBot(GreedyBot):
    # It runs the rules forward for every buy (~12 ms a decision, up to ~130 ms): the bot runner
    # answers it off its event loop (services/botrunner/app.py).
    slow = True

    def __init__(self, rules: MechanicaRules) -> None:
        super().__init__(rules.data)
        self.rules = rules

    def _best_buy(self, view: MechanicaView, legal: list[msgspec.Struct], seat: int) -> msgspec.Struct | None:
        buys = [a for a in legal if isinstance(a, _PLANNED)]
        if not buys:
            return None
        state = table(view, seat)
        runs = runs_left(view)
        best: msgspec.Struct | None = None
        best_worth = self.worth(state.players[seat], runs) + MIN_GAIN - 1  # worths are whole money
        for a in buys:
            events = self.rules.decide(state, seat, a, _NO_DRAWS)
            if isinstance(events, Rejected):
                continue
            trial = clone(state)
            for event in events:
                fold.evolve(self.data, trial, event)
            worth = self.worth(trial.players[seat], runs)
            if worth > best_worth:
                best, best_worth = a, worth
        return best

    def worth(self, p: PlayerState, runs: int) -> int:
        """Money, vault and end values at the end if the factory stays as it is: this turn's bots
        are made, then each run moves and works them and every truck is sold at the next turn."""
        d = self.data
        sim = MechanicaState(num_players=1, players=[_copy(p)])
        q = sim.players[0]
        _make(d, sim)
        for _ in range(runs):
            for sq, h, tsq, th, model in fx.run_moves(d, q):
                q.holes[sq][h] = EMPTY
                q.holes[tsq][th] = model
            for event in fx.activations(d, 0, q):
                fold.evolve(d, sim, event)
            for sq in d.geometry.dock_squares:
                tile = q.tiles[sq]
                bonus = d.tiles[tile].money if tile in d.tiles else 0
                for h, model in enumerate(q.holes[sq]):
                    if model:
                        q.wallet += d.value[model] + bonus
                        q.holes[sq][h] = EMPTY
            _make(d, sim)
        return q.wallet + q.vault + improvements_value(d, q)


def _copy(p: PlayerState) -> PlayerState:
    return PlayerState(
        wallet=p.wallet, vault=p.vault, tiles=p.tiles[:], holes=[h[:] for h in p.holes], forks=p.forks[:]
    )


def _make(d: MechanicaData, sim: MechanicaState) -> None:
    """The seat's fabricators make their bots (a one-seat table: no gifts are given or received)."""
    made = fx.bots_made(d, 0, sim.players)
    if made:
        fold.evolve(d, sim, c.BotsMade(seat=0, bots=made))

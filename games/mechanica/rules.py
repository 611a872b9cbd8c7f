"""Mechanica rules: set-up, decide (validation + outcomes), the workday flow, results."""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from contracts import mechanica as c
from contracts.views.mechanica import MechanicaView
from games.base import Rejected, Result
from games.kit import Emitter
from games.mechanica import factory as fx
from games.mechanica import fold
from games.mechanica.components import MechanicaData, load
from games.mechanica.decide import (
    check_blueprint,
    check_buy,
    check_fork,
    check_install,
    check_rows,
    check_sell,
    check_truck,
    check_upgrade,
)
from games.mechanica.legal import LegalMemo, default_action, legal_actions
from games.mechanica.rule_ids import reject
from games.mechanica.scoring import improvements_value, totals, winners
from games.mechanica.state import MechanicaState, clone, new_state
from games.mechanica.view import build_view
from games.rng import Rng

MIN_PLAYERS = 1
MAX_PLAYERS = 4


def _well_typed(command: msgspec.Struct) -> msgspec.Struct | Rejected:
    """`command` with every field of its declared type (ints, strings, lists of ints), or the
    refusal. The wire decoder checks this already; a command built in code is checked here so
    that no field value can crash the checks."""
    try:
        return msgspec.convert(msgspec.to_builtins(command), type(command))
    except (msgspec.ValidationError, TypeError) as exc:
        return reject("MEC-COMMAND", f"{type(command).__name__}: {exc}")


class MechanicaRules:
    """The `games.base.Rules` implementation for Mechanica."""

    name = "mechanica"
    rules_version = "mechanica-rules-1"
    min_players = MIN_PLAYERS
    max_players = MAX_PLAYERS
    command_types: Sequence[type[msgspec.Struct]] = c.COMMANDS
    event_types: Sequence[type[msgspec.Struct]] = c.EVENTS

    def __init__(self, data: MechanicaData | None = None) -> None:
        self.data = data if data is not None else load()
        self.data_version = self.data.data_version
        self._legal_memo = LegalMemo()

    # ---- set-up -------------------------------------------------------------------------

    def initial_state(self, num_players: int) -> MechanicaState:
        return new_state(num_players, len(self.data.geometry.area), len(self.data.setup.shop_prices))

    def setup(self, num_players: int, rng: Rng) -> list[msgspec.Struct]:
        if not MIN_PLAYERS <= num_players <= MAX_PLAYERS:
            raise ValueError(f"Mechanica takes {MIN_PLAYERS} to {MAX_PLAYERS} players, not {num_players}")
        d = self.data
        out = Emitter(self.initial_state(num_players), self.evolve)
        first = rng.below(num_players)
        out.emit(c.GameSetUp(first_player=first, money=d.setup.money, starting_bot=d.setup.starting_bot))
        tiles = rng.shuffled(list(d.tile_ids))
        extras, stack = tiles[: d.setup.extras], tiles[d.setup.extras :]
        out.emit(c.ImprovementsShuffled(stack_size=len(stack), extras_size=len(extras), stack=stack, extras=extras))
        cards = rng.shuffled(list(d.blueprint_ids))
        split = d.setup.blueprint_piles[0]
        piles = [cards[:split], cards[split:]]
        out.emit(c.BlueprintsShuffled(sizes=[len(p) for p in piles], face_up=[p[0] for p in piles], piles=piles))
        for price in d.setup.shop_prices[:2]:
            out.emit(c.ImprovementDrawn(improvement=out.state.stack[0], price=price, source="stack"))
        self._start_workday(out, 1)
        return out.events

    # ---- the workday --------------------------------------------------------------------

    def _start_workday(self, out: Emitter[MechanicaState], workday: int) -> None:
        out.emit(c.WorkdayStarted(workday=workday))
        d = self.data
        for seat in range(out.state.num_players):
            p = out.state.players[seat]
            moves = fx.run_moves(d, p)
            if moves:
                out.emit(
                    c.BotsMoved(
                        seat=seat,
                        moves=[
                            c.BotMove(model=m, source=fx.spot(d, sq, h), target=fx.spot(d, tsq, th))
                            for sq, h, tsq, th, m in moves
                        ],
                    )
                )
            for ev in fx.activations(d, seat, p):
                out.emit(ev)
        out.emit(c.TurnStarted(seat=out.state.first_player))

    def _end_workday(self, out: Emitter[MechanicaState]) -> None:
        s = out.state
        out.emit(c.WorkdayEnded(workday=s.workday))
        stock_empty = not s.stack and (s.num_players < 4 or not s.extras)
        if stock_empty and not any(s.shop):
            scores = totals(self.data, s)
            out.emit(
                c.GameFinished(
                    scores=scores,
                    winners=winners(scores, [p.vault for p in s.players]),
                    wallet=[p.wallet for p in s.players],
                    vault=[p.vault for p in s.players],
                    improvements=[improvements_value(self.data, p) for p in s.players],
                )
            )
            return
        if s.sideways:
            out.emit(c.BlueprintsReplaced(face_up=[p[1] if len(p) > 1 else p[0] for p in s.piles]))
        self._start_workday(out, s.workday + 1)

    # ---- decide -------------------------------------------------------------------------

    def decide(
        self, state: MechanicaState, seat: int, command: msgspec.Struct, rng: Rng
    ) -> list[msgspec.Struct] | Rejected:
        if state.current != seat:
            return reject("MEC-TURN", f"seat {seat} acted but it is seat {state.current}'s turn")
        typed = _well_typed(command)
        if isinstance(typed, Rejected):
            return typed
        command = typed
        if isinstance(command, c.EndTurn):
            return self._end_turn(state, seat, command)
        return self._check(state, seat, command)

    def _check(self, s: MechanicaState, seat: int, cmd: msgspec.Struct) -> list[msgspec.Struct] | Rejected:
        d = self.data
        if isinstance(cmd, c.Sell):
            return check_sell(d, s, seat, cmd)
        if isinstance(cmd, c.Install):
            return check_install(d, s, seat, cmd)
        if isinstance(cmd, c.Recycle):
            bought = check_buy(d, s, seat, cmd.price)
            if isinstance(bought, Rejected):
                return bought
            tile = s.shop[d.setup.shop_prices.index(cmd.price)]
            placed = check_rows(d, s, seat, d.tiles[tile].recycle, cmd.rows, after_making=False)
            if isinstance(placed, Rejected):
                return placed
            return [bought, c.ImprovementRecycled(seat=seat, improvement=tile, placed=placed[0], lost=placed[1])]
        if isinstance(cmd, c.CompleteBlueprint):
            return check_blueprint(d, s, seat, cmd)
        if isinstance(cmd, c.BuyTruck):
            return check_truck(d, s, seat, cmd)
        if isinstance(cmd, c.UpgradeTruck):
            return check_upgrade(d, s, seat, cmd)
        assert isinstance(cmd, (c.BuyFork, c.SetFork))
        return check_fork(d, s, seat, cmd)

    def _end_turn(self, state: MechanicaState, seat: int, cmd: c.EndTurn) -> list[msgspec.Struct] | Rejected:
        d = self.data
        out = Emitter(clone(state), self.evolve)
        s = out.state
        made = fx.bots_made(d, seat, s.players)
        if made:
            out.emit(c.BotsMade(seat=seat, bots=made))
        fell = s.shop[-1]
        placed: tuple[list[c.PlacedBot], list[str]] = ([], [])
        if fell:
            checked = check_rows(d, s, seat, d.tiles[fell].recycle, cmd.rows, after_making=False)
            if isinstance(checked, Rejected):
                return checked
            placed = checked
        elif cmd.rows:
            return reject("MEC-RECYCLE-ROWS", "nothing falls into the Recycler this turn: rows must be empty")
        out.emit(c.ShopRotated(seat=seat, fell=fell))
        if fell:
            out.emit(
                c.ImprovementRecycled(seat=seat, improvement=fell, placed=placed[0], lost=placed[1], from_rotation=True)
            )
        top = d.setup.shop_prices[0]
        if s.stack:
            out.emit(c.ImprovementDrawn(improvement=s.stack[0], price=top, source="stack"))
        elif s.num_players == 4 and s.extras:
            out.emit(c.ImprovementDrawn(improvement=s.extras[0], price=top, source="extras"))
        stocked = [i for i, t in enumerate(s.shop) if t]
        if 2 <= s.num_players <= 3 and s.extras and stocked == [0]:
            out.emit(c.ShopRotated(seat=seat, second=True))
            out.emit(c.ImprovementDrawn(improvement=s.extras[0], price=top, source="extras"))
        nxt = (seat + 1) % s.num_players
        if nxt == s.first_player:
            out.emit(c.TurnEnded(seat=seat, next_seat=None))
            self._end_workday(out)
        else:
            out.emit(c.TurnEnded(seat=seat, next_seat=nxt))
            out.emit(c.TurnStarted(seat=nxt))
        return out.events

    # ---- folding, queries ---------------------------------------------------------------

    def evolve(self, state: MechanicaState, event: msgspec.Struct) -> MechanicaState:
        return fold.evolve(self.data, state, event)

    def clone(self, state: MechanicaState) -> MechanicaState:
        return clone(state)

    def to_act(self, state: MechanicaState) -> list[int]:
        if state.over or state.current is None:
            return []
        return [state.current]

    def legal_actions(self, state: MechanicaState, seat: int) -> list[msgspec.Struct]:
        if state.over or state.current != seat:
            return []
        return legal_actions(self.data, state, seat, self._legal_memo)

    def default_action(self, state: MechanicaState, seat: int) -> msgspec.Struct:
        """End the turn, placing any Recycler bots into the first free start-zone holes."""
        return default_action(self.data, state, seat)

    def view(self, state: MechanicaState, seat: int | None) -> MechanicaView:
        return build_view(self.data, state, seat)

    def public_event(self, event: msgspec.Struct) -> msgspec.Struct | None:
        if isinstance(event, c.ImprovementsShuffled) and event.stack is not None:
            return msgspec.structs.replace(event, stack=None, extras=None)
        if isinstance(event, c.BlueprintsShuffled) and event.piles is not None:
            return msgspec.structs.replace(event, piles=None)
        return event

    def is_over(self, state: MechanicaState) -> bool:
        return state.over

    def result(self, state: MechanicaState) -> Result:
        """Final result once over; before that, the standing as if the game ended now."""
        d = self.data
        scores = list(state.final_scores) if state.over else totals(d, state)
        won = list(state.winners) if state.over else winners(scores, [p.vault for p in state.players])
        breakdown = [
            {"wallet": p.wallet, "vault": p.vault, "improvements": improvements_value(d, p)} for p in state.players
        ]
        return Result(scores=scores, winners=won, breakdown=breakdown)

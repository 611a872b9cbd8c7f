"""Prosperity rules: set-up, decide (validation + outcomes), turn and count flow, legal actions."""

from __future__ import annotations

import functools
from collections.abc import Sequence

import msgspec

from contracts import prosperity as c
from contracts.views.prosperity import ProsperityView
from games.base import Rejected, Result
from games.kit import Emitter
from games.prosperity import fold
from games.prosperity import scoring as sc
from games.prosperity.components import COLOUR_OF, START_DISCS, ProsperityData, load
from games.prosperity.rule_ids import reject
from games.prosperity.state import COUNT, FINAL, SETUP, TRACKS, ProsperityState, clone, new_state
from games.prosperity.view import build_view
from games.rng import Rng

MIN_PLAYERS = 2
MAX_PLAYERS = 4
START_MONEY = 100
DEFAULT_SIDE = "silver"  # the rulebook's side for a first game
# Symbols whose count asks the player to choose (only when the choice is real).
CHOICE_SYMBOLS = ("energy", "research")


_INCOME = c.Income()
_CLEAN_UP = c.CleanUp()
_RESEARCH = tuple(c.Research(track=t) for t in TRACKS)


@functools.lru_cache(maxsize=4096)
def _buys(tile: str, spaces: tuple[str, ...] | None) -> tuple[c.BuyTile, ...]:
    """BuyTile of `tile` on each of `spaces` (None: a special tile, applied, not placed). A move
    lists dozens; built once per tile and set of open spaces and reused (frozen), as building them
    on every call was the largest part of an offline self-play step."""
    if spaces is None:
        return (c.BuyTile(tile=tile),)
    return tuple(c.BuyTile(tile=tile, space=sid) for sid in spaces)


class ProsperityRules:
    """The `games.base.Rules` implementation for Prosperity."""

    name = "prosperity"
    rules_version = "prosperity-rules-1"
    min_players = MIN_PLAYERS
    max_players = MAX_PLAYERS
    command_types: Sequence[type[msgspec.Struct]] = c.COMMANDS
    event_types: Sequence[type[msgspec.Struct]] = c.EVENTS

    def __init__(self, data: ProsperityData | None = None) -> None:
        self.data = data if data is not None else load()
        self.data_version = self.data.data_version

    # ---- set-up -------------------------------------------------------------------------

    def initial_state(self, num_players: int) -> ProsperityState:
        return new_state(num_players)

    def setup(self, num_players: int, rng: Rng) -> list[msgspec.Struct]:
        if not MIN_PLAYERS <= num_players <= MAX_PLAYERS:
            raise ValueError(f"Prosperity takes {MIN_PLAYERS} to {MAX_PLAYERS} players, not {num_players}")
        first = rng.below(num_players)
        deck: list[str] = []
        backs: list[int] = []
        # Oldest decade on top: each decade shuffled on its own, then stacked in order.
        for decade, ids in self.data.decade_tiles:
            deck += rng.shuffled(list(ids))
            backs += [decade] * len(ids)
        return [
            c.TableSet(
                research_board=list(self.data.start_tiles),
                first_player=first,
                money=START_MONEY,
                discs=START_DISCS,
                research=self.data.research_start,
            ),
            c.DeckBuilt(size=len(deck), backs=backs, tiles=deck),
        ]

    # ---- decide -------------------------------------------------------------------------

    def decide(
        self, state: ProsperityState, seat: int, command: msgspec.Struct, rng: Rng
    ) -> list[msgspec.Struct] | Rejected:
        return self._decide(state, seat, command, in_place=False)

    def decide_into(
        self, state: ProsperityState, seat: int, command: msgspec.Struct, rng: Rng
    ) -> list[msgspec.Struct] | Rejected:
        """`decide` folding into `state` (games.base.DecidesInPlace): every refusal comes first."""
        return self._decide(state, seat, command, in_place=True)

    def _decide(
        self, state: ProsperityState, seat: int, command: msgspec.Struct, in_place: bool
    ) -> list[msgspec.Struct] | Rejected:
        waiting = self.to_act(state)
        if seat not in waiting:
            return reject("PRO-WAIT", f"seat {seat} acted; the game waits for seats {waiting}")
        if state.phase == SETUP:
            if not isinstance(command, c.ChooseBoard):
                return reject("PRO-EXPECTED", f"set-up waits for a ChooseBoard, not {type(command).__name__}")
            return self._choose_board(state, seat, command, in_place)
        if state.phase in (COUNT, FINAL):
            return self._settle_count(state, seat, command, in_place)
        return self._action(state, seat, command, in_place)

    def _emitter(self, state: ProsperityState, in_place: bool) -> Emitter[ProsperityState]:
        return Emitter(state if in_place else clone(state), self.evolve)

    def _choose_board(
        self, state: ProsperityState, seat: int, cmd: c.ChooseBoard, in_place: bool
    ) -> list[msgspec.Struct] | Rejected:
        board = self.data.boards.get(cmd.side)
        if board is None:
            return reject("PRO-BOARD", f"no board side {cmd.side!r}; sides: {list(self.data.board_ids)}")
        printed = sc.shown(self.data, board, [])
        out = self._emitter(state, in_place)
        out.emit(c.BoardChosen(seat=seat, side=cmd.side, energy=printed.energy, ecology=printed.ecology))
        if all(p.side for p in out.state.players):
            self._draw(out, out.state.first_player)
        return out.events

    def _count(self, s: ProsperityState, seat: int, symbol: str, final: bool, choice: int | None) -> c.Counted | None:
        """The seat's count of `symbol`, or None when the seat must choose and `choice` is None.
        `choice`: discs taken (energy) or energy-track steps (research), already validated."""
        p = s.players[seat]
        board = self.data.boards[p.side]
        times = sc.count_times(symbol, final)
        if symbol == "energy":
            if p.energy >= 0:
                level = p.energy * times
                return c.Counted(seat=seat, symbol=symbol, final=final, times=times, level=level,
                                 money=sc.ENERGY_GAIN * level)  # fmt: skip
            options = sc.energy_options(p.energy, times, p.money)
            if choice is None:
                if len(options) > 1:
                    return None
                choice = options[0]
            levels = -p.energy * times
            return c.Counted(seat=seat, symbol=symbol, final=final, times=times, level=-levels,
                             money=-sc.ENERGY_PAY * (levels - choice), discs=choice)  # fmt: skip
        if symbol == "ecology":
            discs, money = sc.ecology_outcome(p.ecology, times, p.discs)
            return c.Counted(seat=seat, symbol=symbol, final=final, times=times, level=p.ecology * times,
                             discs=discs, money=money)  # fmt: skip
        shown = sc.shown(self.data, board, p.stacks)
        if symbol == "capital":
            return c.Counted(seat=seat, symbol=symbol, final=final, level=shown.capital,
                             money=sc.CAPITAL_GAIN * shown.capital)  # fmt: skip
        if symbol == "research":
            steps = shown.research
            top = self.data.research_top
            if final:
                # Both markers advance by the symbols (RULINGS/seed: "on both tracks").
                e, k = min(steps, top - p.research[0]), min(steps, top - p.research[1])
            else:
                options = sc.research_range(steps, p.research, top)
                if choice is None:
                    if len(options) > 1:
                        return None
                    choice = options[0]
                e, k = sc.split_steps(steps, choice, p.research, top)
            return c.Counted(seat=seat, symbol=symbol, final=final, level=steps, energy_steps=e, ecology_steps=k)
        symbols = shown.prosperity + sc.track_prosperity(board, p.discs)
        points = sc.prosperity_count(board, p.discs, shown.prosperity)
        return c.Counted(seat=seat, symbol=symbol, final=final, level=symbols, points=points)

    def _settle_count(
        self, state: ProsperityState, seat: int, cmd: msgspec.Struct, in_place: bool
    ) -> list[msgspec.Struct] | Rejected:
        p = state.players[seat]
        options = sc.pending_options(self.data, state, seat)
        choices = f"choose {options.start}..{options.stop - 1}"
        if state.symbol == "energy":
            if not isinstance(cmd, c.SettleEnergy):
                return reject("PRO-EXPECTED", f"the energy count waits for a SettleEnergy, not {type(cmd).__name__}")
            if cmd.discs not in options:
                return reject(
                    "PRO-SETTLE",
                    f"{cmd.discs} discs for {options.stop - 1} levels with {p.money} euros: {choices} discs",
                )
            choice = cmd.discs
        else:
            if not isinstance(cmd, c.SplitResearch):
                return reject("PRO-EXPECTED", f"the research count waits for a SplitResearch, not {type(cmd).__name__}")
            if cmd.energy not in options:
                return reject(
                    "PRO-SPLIT",
                    f"{cmd.energy} steps on the energy track with markers at {p.research}: {choices}",
                )
            choice = cmd.energy
        out = self._emitter(state, in_place)
        event = self._count(out.state, seat, state.symbol, state.phase == FINAL, choice)
        assert event is not None
        out.emit(event)
        self._advance(out)
        return out.events

    # ---- actions ------------------------------------------------------------------------

    def _action(
        self, state: ProsperityState, seat: int, cmd: msgspec.Struct, in_place: bool
    ) -> list[msgspec.Struct] | Rejected:
        p = state.players[seat]
        event: msgspec.Struct
        if isinstance(cmd, c.Income):
            event = c.IncomeTaken(seat=seat, amount=sc.INCOME)
        elif isinstance(cmd, c.CleanUp):
            if p.discs <= 0:
                return reject("PRO-CLEANUP", "no disc on your pollution track")
            event = c.CleanedUp(seat=seat)
        elif isinstance(cmd, c.Research):
            if cmd.track not in TRACKS:
                return reject("PRO-RESEARCH", f"no research track {cmd.track!r}; tracks: {list(TRACKS)}")
            if p.research[TRACKS.index(cmd.track)] >= self.data.research_top:
                return reject("PRO-RESEARCH", f"your {cmd.track} marker is on the top space {self.data.research_top}")
            event = c.ResearchAdvanced(seat=seat, track=cmd.track)
        elif isinstance(cmd, c.BuyTile):
            bought = self._buy(state, seat, cmd)
            if isinstance(bought, Rejected):
                return bought
            event = bought
        else:
            return reject("PRO-EXPECTED", f"the active player takes an action, not {type(cmd).__name__}")
        out = self._emitter(state, in_place)
        out.emit(event)
        if out.state.actions_left <= 0:
            self._end_turn(out)
        return out.events

    def _buy(self, state: ProsperityState, seat: int, cmd: c.BuyTile) -> msgspec.Struct | Rejected:
        p = state.players[seat]
        if cmd.tile not in state.research_board:
            return reject("PRO-BUY", f"{cmd.tile!r} is not on the research board")
        tile = self.data.tiles[cmd.tile]
        cost = sc.price(tile.level, p.research[TRACKS.index(tile.side)])
        board = self.data.boards[p.side]
        if tile.special:
            if cmd.space is not None:
                return reject("PRO-SPACE", f"{tile.id} is a special tile: it is applied, not placed on {cmd.space}")
            if p.money < cost:
                return reject("PRO-FUNDS", f"{tile.id} costs {cost} euros, you have {p.money}")
            return c.SpecialApplied(seat=seat, tile=tile.id, price=cost, points=tile.points,
                                    discs_removed=min(tile.clean, p.discs))  # fmt: skip
        index = self.data.space_index[p.side].get(cmd.space) if cmd.space is not None else None
        if index is None:
            colour = COLOUR_OF[tile.type]
            return reject("PRO-SPACE", f"{tile.id} needs a {colour} space; {cmd.space!r} is not on your board")
        space = board.spaces[index]
        if space.colour != COLOUR_OF[tile.type]:
            colour = COLOUR_OF[tile.type]
            return reject("PRO-SPACE", f"{tile.id} ({tile.type}) goes on {colour}; {space.id} is {space.colour}")
        if space.needs and not p.stacks[self.data.space_index[p.side][space.needs]]:
            return reject("PRO-TRANSPORT", f"{space.id} is unusable until a transport tile covers {space.needs}")
        if p.money < cost:
            return reject("PRO-FUNDS", f"{tile.id} costs {cost} euros, you have {p.money}")
        stacks = [st if i != index else [*st, tile.id] for i, st in enumerate(p.stacks)]
        after = sc.shown(self.data, board, stacks)
        covered = p.stacks[index][-1] if p.stacks[index] else None
        return c.TileBought(seat=seat, tile=tile.id, price=cost, space=space.id, covered=covered,
                            energy=after.energy, ecology=after.ecology)  # fmt: skip

    # ---- turn, count and end flow -------------------------------------------------------

    def _draw(self, out: Emitter[ProsperityState], seat: int) -> None:
        s = out.state
        tile = s.deck[0]
        symbol = self.data.tiles[tile].count
        assert symbol is not None
        out.emit(c.TileDrawn(seat=seat, turn=s.turn + 1, tile=tile, symbol=symbol))
        self._advance(out)

    def _end_turn(self, out: Emitter[ProsperityState]) -> None:
        s = out.state
        seat = s.active
        if s.deck:
            nxt = (seat + 1) % s.num_players
            out.emit(c.TurnEnded(seat=seat, next_seat=nxt))
            self._draw(out, nxt)
            return
        out.emit(c.TurnEnded(seat=seat, next_seat=None))
        out.emit(c.FinalScoringStarted(order=[(seat + k) % s.num_players for k in range(s.num_players)]))
        self._advance(out)

    def _advance(self, out: Emitter[ProsperityState]) -> None:
        """Count for every seat that needs no choice, stopping at the first that does; then file
        the tile (a turn's count) or finish the game (the final energy count)."""
        s = out.state
        while s.queue:
            event = self._count(s, s.queue[0], s.symbol, s.phase == FINAL, None)
            if event is None:
                return
            out.emit(event)
        if s.phase == COUNT:
            out.emit(c.TileFiled(tile=s.drawn[-1]))
        elif s.phase == FINAL and not s.over:
            self._finish(out)

    def _finish(self, out: Emitter[ProsperityState]) -> None:
        s = out.state
        n = s.num_players
        order = [(s.active + k) % n for k in range(n)]
        for seat in order:
            event = self._count(s, seat, "ecology", True, None)
            assert event is not None
            out.emit(event)
        for seat in order:
            event = self._count(s, seat, "capital", True, None)
            assert event is not None
            out.emit(event)
        for seat in order:
            money = s.players[seat].money
            points = money // sc.CONVERSION
            out.emit(c.MoneyConverted(seat=seat, money=points * sc.CONVERSION, points=points,
                                      money_left=money - points * sc.CONVERSION))  # fmt: skip
        for seat in order:
            event = self._count(s, seat, "research", True, None)
            assert event is not None
            out.emit(event)
        for i, track in enumerate(TRACKS):
            positions = [p.research[i] for p in s.players]
            out.emit(c.ResearchMajority(track=track, positions=positions, points=sc.majority(positions)))
        for seat in order:
            event = self._count(s, seat, "prosperity", True, None)
            assert event is not None
            out.emit(event)
        scores = [p.points for p in s.players]
        money_left = [p.money for p in s.players]
        out.emit(c.GameFinished(scores=scores, money=money_left, winners=sc.winners(scores, money_left)))

    # ---- folding, queries ---------------------------------------------------------------

    def evolve(self, state: ProsperityState, event: msgspec.Struct) -> ProsperityState:
        return fold.evolve(self.data, state, event)

    def clone(self, state: ProsperityState) -> ProsperityState:
        return clone(state)

    def to_act(self, state: ProsperityState) -> list[int]:
        if state.over:
            return []
        if state.phase == SETUP:
            return [i for i, p in enumerate(state.players) if not p.side]
        if state.phase in (COUNT, FINAL):
            return state.queue[:1]
        return [state.active]

    def legal_actions(self, state: ProsperityState, seat: int) -> list[msgspec.Struct]:
        if seat not in self.to_act(state):
            return []
        if state.phase == SETUP:
            return [c.ChooseBoard(side=side) for side in self.data.board_ids]
        if state.phase in (COUNT, FINAL):
            options = sc.pending_options(self.data, state, seat)
            if state.symbol == "energy":
                return [c.SettleEnergy(discs=k) for k in options]
            return [c.SplitResearch(energy=k) for k in options]
        p = state.players[seat]
        actions: list[msgspec.Struct] = [_INCOME, _CLEAN_UP] if p.discs > 0 else [_INCOME]
        top = self.data.research_top
        actions += [_RESEARCH[i] for i in range(len(TRACKS)) if p.research[i] < top]
        board = self.data.boards[p.side]
        index = self.data.space_index[p.side]
        # Spaces open to each colour (a marked blue space only once its green space is covered).
        open_spaces: dict[str, list[str]] = {}
        for space in board.spaces:
            if space.needs and not p.stacks[index[space.needs]]:
                continue
            open_spaces.setdefault(space.colour, []).append(space.id)
        opened = {colour: tuple(ids) for colour, ids in open_spaces.items()}
        tiles = self.data.tiles
        for tile_id in state.research_board:
            tile = tiles[tile_id]
            if sc.price(tile.level, p.research[TRACKS.index(tile.side)]) > p.money:
                continue
            if tile.special:
                actions.append(_buys(tile_id, None)[0])
            else:
                actions += _buys(tile_id, opened.get(COLOUR_OF[tile.type], ()))
        return actions

    def default_action(self, state: ProsperityState, seat: int) -> msgspec.Struct:
        """Set-up: the silver side. Energy: pay money for as many levels as it covers (discs can
        end all prosperity points; money is worth little). Research: the most even split. Actions:
        income."""
        if state.phase == SETUP:
            return c.ChooseBoard(side=DEFAULT_SIDE if DEFAULT_SIDE in self.data.boards else self.data.board_ids[0])
        if state.phase in (COUNT, FINAL) and state.queue:
            options = sc.pending_options(self.data, state, seat)
            if state.symbol == "energy":
                return c.SettleEnergy(discs=options[0] if options else 0)
            return c.SplitResearch(energy=options[len(options) // 2] if options else 0)
        return c.Income()

    def view(self, state: ProsperityState, seat: int | None) -> ProsperityView:
        return build_view(self.data, state, seat)

    def public_event(self, event: msgspec.Struct) -> msgspec.Struct | None:
        if isinstance(event, c.DeckBuilt) and event.tiles is not None:
            return msgspec.structs.replace(event, tiles=None)
        return event

    def is_over(self, state: ProsperityState) -> bool:
        return state.over

    def result(self, state: ProsperityState) -> Result:
        """Final result once over; before that, the standing as if the game ended now."""
        if state.over:
            scores, money, won = state.final_scores, state.final_money, state.winners
        else:
            scores = [p.points for p in state.players]
            money = [p.money for p in state.players]
            won = sc.winners(scores, money)
        breakdown = [
            {
                "points": scores[i],
                "money": money[i],
                "discs": p.discs,
                "energy_research": p.research[0],
                "ecology_research": p.research[1],
            }
            for i, p in enumerate(state.players)
        ]
        return Result(scores=list(scores), winners=list(won), breakdown=breakdown)

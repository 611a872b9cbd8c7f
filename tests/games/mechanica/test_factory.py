"""Oracles for the factory run: each bot's path to the first free hole, the order bots move in,
a full truck, every improvement's activation and the activation order; making bots."""

from __future__ import annotations

from contracts import mechanica as c
from games.mechanica import RULES
from games.mechanica import factory as fx
from games.mechanica.state import MechanicaState
from games.rng import Rng
from tests.games.mechanica.given import (
    DATA,
    act,
    bots_at,
    given,
    holes,
    installed,
    of,
    spot,
    table,
    tile,
)

Move = tuple[tuple[int, int, int], tuple[int, int, int], str]


def run(state: MechanicaState, seat: int = 0) -> tuple[list[Move], list[c.ImprovementActivated]]:
    """Run `seat`'s factory (both steps) into `state`; the moves as ((r, c, h), (r, c, h), model)."""
    p = state.players[seat]
    moves = fx.run_moves(DATA, p)
    event = c.BotsMoved(
        seat=seat,
        moves=[c.BotMove(model=m, source=fx.spot(DATA, a, h), target=fx.spot(DATA, b, k)) for a, h, b, k, m in moves],
    )
    RULES.evolve(state, event)
    acts = fx.activations(DATA, seat, p)
    for ev in acts:
        RULES.evolve(state, ev)
    return [((m.source.row, m.source.col, m.source.hole), (m.target.row, m.target.col, m.target.hole), m.model)
            for m in event.moves], acts  # fmt: skip


def empty_table() -> MechanicaState:
    """Two players after workday 1's run, seat 0's central truck emptied by a sale."""
    state = table()
    act(state, 0, c.Sell(row=3, model="basic"))
    return state


def test_first_run_moves_the_starting_bot_to_the_central_truck() -> None:
    # Rulebook: "Al comienzo del juego, simplemente mueva su bot a lo largo de la cinta
    # transportadora hasta su camión pequeño central" and, with no improvements yet, step 2 is skipped.
    events = RULES.setup(3, Rng.for_version("oracle", 0))
    moved = of(events, c.BotsMoved)
    assert [e.seat for e in moved] == [0, 1, 2]
    for e in moved:
        assert e.moves == [c.BotMove(model="basic", source=spot(3, 1), target=spot(3, 5))]
    assert not of(events, c.ImprovementActivated)


def test_a_bot_stops_in_the_first_free_hole_on_its_way() -> None:
    state = empty_table()
    given(state, installed(0, tile("upgrader"), 3, 3), bots_at(0, ("basic", 3, 1, 1)))
    moves, _ = run(state)
    assert moves == [((3, 1, 1), (3, 3, 1), "basic")]  # the upgrader's input hole, not the truck


def test_a_bot_passes_occupied_holes_and_stops_in_an_output_hole() -> None:
    state = empty_table()
    given(state, installed(0, tile("duplicator"), 3, 3), bots_at(0, ("basic", 3, 3, 3)))
    given(state, bots_at(0, ("deluxe", 2, 1, 1), ("plus", 4, 1, 1)))
    moves, _ = run(state)
    # Nearest the dock moves first: the bot in the last output hole rides to the truck; of the two
    # bots merging into (3, 3) the upper row's takes the input hole, the other passes it and stops
    # in the first free hole after it (output hole 2, same square).
    assert moves == [
        ((3, 3, 3), (3, 5, 1), "basic"),
        ((2, 1, 1), (3, 3, 1), "deluxe"),
        ((4, 1, 1), (3, 3, 2), "plus"),
    ]


def test_a_bot_in_an_input_hole_waits_for_its_improvement() -> None:
    # Given a bot left in the Duplicator's input hole (it sat in hole 1 of a Splitter the Duplicator
    # was installed over), a free output hole after it and a bot coming down the belt
    state = empty_table()
    given(state, installed(0, tile("splitter"), 3, 3), bots_at(0, ("plus", 3, 3, 1)))
    given(state, installed(0, tile("duplicator"), 3, 3), bots_at(0, ("deluxe", 3, 1, 1)))
    assert holes(state, 0, 3, 3) == ["plus", "", ""]
    # When the factory runs
    moves, acts = run(state)
    # Then the waiting bot does not slip on into the output hole: it stays in its input hole, the
    # new bot passes it, and the Duplicator activates on it
    assert moves == [((3, 1, 1), (3, 3, 2), "deluxe")]
    assert [(e.consumed_models, [b.model for b in e.made]) for e in acts] == [(["plus"], ["plus"])]
    assert acts[0].lost == ["plus"] and holes(state, 0, 3, 3) == ["", "deluxe", "plus"]


def test_a_bot_moves_to_a_free_later_hole_of_its_own_square() -> None:
    state = empty_table()
    given(state, installed(0, tile("duplicator"), 3, 3), bots_at(0, ("plus", 3, 3, 2), ("basic", 3, 3, 3)))
    moves, _ = run(state)
    assert moves == [((3, 3, 3), (3, 5, 1), "basic"), ((3, 3, 2), (3, 3, 3), "plus")]


def test_a_full_truck_stops_the_belt() -> None:
    state = table()  # workday 1 put seat 0's basic bot into the central small truck (1 hole)
    given(state, bots_at(0, ("plus", 3, 1, 1)))
    moves, _ = run(state)
    assert moves == []  # no free hole ahead, all the way into the truck: the bot stays
    assert holes(state, 0, 3, 1) == ["plus"]
    act(state, 0, c.BuyTruck(row=3, size="big"))
    moves, _ = run(state)
    assert moves == [((3, 1, 1), (3, 5, 2), "plus")]
    assert holes(state, 0, 3, 5) == ["basic", "plus"]


def test_merging_lanes_upper_row_first_at_equal_distance() -> None:
    state = empty_table()
    given(state, installed(0, tile("upgrader"), 3, 3))
    given(state, bots_at(0, ("plus", 2, 1, 1), ("deluxe", 4, 1, 1)))
    moves, _ = run(state)
    # Rows 2 and 4 both turn into (3, 3), 5 belt steps from the dock each: row 2 moves first.
    assert moves == [((2, 1, 1), (3, 3, 1), "plus"), ((4, 1, 1), (3, 3, 2), "deluxe")]


def test_nearer_the_dock_moves_first() -> None:
    state = empty_table()
    given(state, installed(0, tile("upgrader"), 3, 4), bots_at(0, ("plus", 3, 1, 1)))
    given(state, installed(0, tile("splitter"), 3, 2), bots_at(0, ("deluxe", 3, 2, 3)))
    moves, _ = run(state)
    assert moves[0] == ((3, 2, 3), (3, 4, 1), "deluxe")
    assert moves[1] == ((3, 1, 1), (3, 2, 1), "plus")


def test_fork_sends_bots_to_its_arrow() -> None:
    state = empty_table()
    act(state, 0, c.BuyFork(row=2, col=3, direction="right"))
    given(state, bots_at(0, ("plus", 2, 1, 1)))
    moves, _ = run(state)
    assert moves == [((2, 1, 1), (2, 5, 1), "plus")]  # the printed arrow would lead to row 3's truck


def test_each_effect() -> None:
    state = empty_table()
    given(
        state,
        installed(0, tile("duplicator"), 1, 2),
        installed(0, tile("upgrader"), 1, 3),
        installed(0, tile("splitter"), 2, 2),
        installed(0, tile("downgrader"), 4, 2),
        installed(0, tile("gift_wrapper"), 5, 2),
        installed(0, tile("assembler"), 5, 3),
        bots_at(
            0,
            ("plus", 1, 2, 1), ("deluxe", 1, 3, 1), ("deluxe", 2, 2, 1), ("plus", 4, 2, 1),
            ("deluxe", 5, 2, 1), ("basic", 5, 2, 2), ("basic", 5, 3, 1), ("plus", 5, 3, 2),
        ),
    )  # fmt: skip
    acts = fx.activations(DATA, 0, state.players[0])
    by_square = {(e.row, e.col): e for e in acts}
    made = {k: [b.model for b in e.made] for k, e in by_square.items()}
    assert made == {
        (1, 2): ["plus", "plus"],  # duplicator
        (1, 3): ["deluxe"],  # upgrader: a deluxe stays deluxe
        (2, 2): ["plus", "plus"],  # splitter
        (4, 2): ["basic"],  # downgrader
        (5, 2): [],  # gift wrapper
        (5, 3): ["deluxe"],  # assembler: one better than the best (plus)
    }
    paid = DATA.kinds["downgrader"].money
    assert by_square[(4, 2)].wallet == paid
    assert by_square[(5, 2)].vault == (6 + 2) + (2 + 2)
    wallet, vault = state.players[0].wallet, state.players[0].vault
    for ev in acts:
        RULES.evolve(state, ev)
    assert (state.players[0].wallet, state.players[0].vault) == (wallet + paid, vault + 12)
    assert holes(state, 0, 1, 2) == ["", "plus", "plus"]
    assert holes(state, 0, 5, 2) == ["", ""]


def test_basic_bots_at_the_bottom_of_the_ladder() -> None:
    state = empty_table()
    given(
        state,
        installed(0, tile("splitter"), 2, 2),
        installed(0, tile("downgrader"), 4, 2),
        bots_at(0, ("basic", 2, 2, 1), ("basic", 4, 2, 1)),
    )
    made = {(e.row, e.col): [b.model for b in e.made] for e in fx.activations(DATA, 0, state.players[0])}
    assert made == {(2, 2): ["basic"], (4, 2): []}


def test_assembler_waits_for_both_inputs() -> None:
    state = empty_table()
    given(state, installed(0, tile("assembler"), 3, 3), bots_at(0, ("basic", 3, 1, 1)))
    _, acts = run(state)
    assert acts == [] and holes(state, 0, 3, 3) == ["basic", "", ""]
    given(state, bots_at(0, ("basic", 3, 1, 1)))
    moves, acts = run(state)
    # The waiting bot stays in its input hole; the new one takes the second input hole.
    assert moves == [((3, 1, 1), (3, 3, 2), "basic")]
    assert [b.model for b in acts[0].made] == ["plus"]
    assert holes(state, 0, 3, 3) == ["", "", "plus"]


def test_a_bot_waiting_in_an_assembler_never_slips_out_unchanged() -> None:
    # Given one bot waiting in the Assembler's first input hole and nothing else coming
    state = empty_table()
    given(state, installed(0, tile("assembler"), 3, 3), bots_at(0, ("plus", 3, 3, 1)))
    # When the factory runs on three workdays
    for _ in range(3):
        moves, acts = run(state)
        # Then it neither moves on to the second input hole nor to the output hole (and so never
        # reaches the truck unassembled): it waits for a second bot
        assert moves == [] and acts == []
    assert holes(state, 0, 3, 3) == ["plus", "", ""] and holes(state, 0, 3, 5) == [""]


def test_made_bots_without_a_free_output_hole_are_lost() -> None:
    state = empty_table()
    given(state, installed(0, tile("duplicator"), 3, 3), bots_at(0, ("plus", 3, 3, 1), ("basic", 3, 3, 3)))
    (ev,) = fx.activations(DATA, 0, state.players[0])
    assert [b.spot for b in ev.made] == [spot(3, 3, 2)]
    assert ev.lost == ["plus"]
    assert ev.consumed == [spot(3, 3, 1)]


def test_activation_in_reading_order_and_no_chaining() -> None:
    state = empty_table()
    given(
        state,
        installed(0, tile("upgrader"), 3, 2),
        installed(0, tile("duplicator"), 3, 3),
        installed(0, tile("splitter"), 2, 4),
        bots_at(0, ("basic", 3, 1, 1), ("deluxe", 1, 1, 1)),
    )
    moves, acts = run(state)
    assert moves == [((3, 1, 1), (3, 2, 1), "basic"), ((1, 1, 1), (2, 4, 1), "deluxe")]
    assert [(e.row, e.col) for e in acts] == [(2, 4), (3, 2)]  # row 2 before row 3
    # The upgrader's plus sits in its output hole; the duplicator next to it does not see it today.
    assert holes(state, 0, 3, 2) == ["", "plus"] and holes(state, 0, 3, 3) == ["", "", ""]
    moves, acts = run(state)
    assert ((3, 2, 2), (3, 3, 1), "plus") in moves
    assert [(e.row, e.col) for e in acts] == [(3, 3)]


def test_run_at_the_start_of_each_workday() -> None:
    state = table()
    given(state, installed(0, tile("upgrader"), 3, 3))
    act(state, 0, c.Sell(row=3, model="basic"))
    events = act(state, 0, c.EndTurn())
    made = of(events, c.BotsMade)
    assert made == [c.BotsMade(seat=0, bots=[c.PlacedBot(seat=0, model="basic", spot=spot(3, 1))])]
    events = act(state, 1, c.EndTurn())
    kinds = [type(e).__name__ for e in events]
    # Seat 1's new bot finds its central truck still full (that basic bot was not sold): no move.
    assert kinds[kinds.index("WorkdayEnded") :] == [
        "WorkdayEnded", "WorkdayStarted", "BotsMoved", "ImprovementActivated", "TurnStarted",
    ]  # fmt: skip
    assert holes(state, 0, 3, 3) == ["", "plus"]
    assert holes(state, 1, 3, 1) == ["basic"] and holes(state, 1, 3, 5) == ["basic"]


def test_make_bots_and_overactive_gifts() -> None:
    state = table(3)
    given(
        state,
        installed(0, tile("advanced_fabricator"), 1, 1),
        installed(0, tile("overactive_fabricator"), 5, 1),
        bots_at(1, ("basic", 1, 1, 1)),  # seat 1's top start hole is taken: its gift goes to row 2
        bots_at(0, ("plus", 3, 1, 1)),  # seat 0's Basic Fabricator is blocked
    )
    made = fx.bots_made(DATA, 0, state.players)
    advanced, overactive = DATA.kinds["advanced_fabricator"], DATA.kinds["overactive_fabricator"]
    assert made == [
        c.PlacedBot(seat=0, model=advanced.makes, spot=spot(1, 1)),
        c.PlacedBot(seat=0, model=overactive.makes, spot=spot(5, 1)),
        c.PlacedBot(seat=1, model=overactive.gift, spot=spot(2, 1)),
        c.PlacedBot(seat=2, model=overactive.gift, spot=spot(1, 1)),
    ]


def test_a_blocked_overactive_fabricator_gives_no_gifts() -> None:
    # Given seat 0's Overactive Fabricator with a bot jammed in its centre hole, and free
    # start-zone holes at the other players
    state = table(3)
    given(
        state,
        installed(0, tile("overactive_fabricator"), 5, 1),
        bots_at(0, ("plus", 5, 1, 1)),
    )
    # When seat 0 makes bots
    made = fx.bots_made(DATA, 0, state.players)
    # Then the blocked fabricator makes nothing (MEC-R10), so it gives nothing either (MEC-R11);
    # only the free Basic Fabricator makes its bot
    assert made == [c.PlacedBot(seat=0, model="basic", spot=spot(3, 1))]
    events = act(state, 0, c.EndTurn())
    assert of(events, c.BotsMade) == [c.BotsMade(seat=0, bots=made)]
    assert holes(state, 1, 1, 1) == [""] and holes(state, 2, 1, 1) == [""]

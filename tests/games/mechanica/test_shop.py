"""Oracles for the shop wheel: set-up, rotation, the Recycler, the double rotation, the Extras and
the end of the game."""

from __future__ import annotations

from contracts import mechanica as c
from games.mechanica import RULES
from games.rng import Rng
from tests.games.mechanica.given import TILES, act, holes, of, refused, table, tile

A, B = tile("duplicator"), tile("assembler")
REST = [t for t in TILES if t not in (A, B)]


def _stack(n: int = 19) -> list[str]:
    return [A, B, *REST[:n]]


def test_setup_puts_the_first_two_on_7_and_5() -> None:
    # Rulebook set-up 3: "Coloque las 2 mejoras principales de la pila de mejoras en el lugar de
    # costo 7 y el lugar de costo 5 en la Tienda."
    for n in (1, 2, 3, 4):
        events = RULES.setup(n, Rng.for_version(f"shop-{n}", 0))
        (shuffled,) = of(events, c.ImprovementsShuffled)
        assert shuffled.stack is not None and shuffled.extras is not None
        assert (len(shuffled.stack), len(shuffled.extras)) == (21, 6)
        assert sorted(shuffled.stack + shuffled.extras) == sorted(TILES)
        drawn = of(events, c.ImprovementDrawn)
        assert drawn == [
            c.ImprovementDrawn(improvement=shuffled.stack[0], price=7, source="stack"),
            c.ImprovementDrawn(improvement=shuffled.stack[1], price=5, source="stack"),
        ]
        (setup,) = of(events, c.GameSetUp)
        assert setup.money == 8 and 0 <= setup.first_player < n


def test_rotation_makes_everything_cheaper_and_draws_onto_7() -> None:
    state = table(2, stack=_stack())
    assert state.shop == [A, B, "", ""]
    events = act(state, 0, c.EndTurn())
    assert of(events, c.ShopRotated) == [c.ShopRotated(seat=0, fell="")]
    assert state.shop == [REST[0], A, B, ""]
    act(state, 1, c.EndTurn())
    assert state.shop == [REST[1], REST[0], A, B]


def test_the_recycler_recycles_for_the_active_player() -> None:
    state = table(2, stack=_stack())
    act(state, 0, c.EndTurn())
    act(state, 1, c.EndTurn())
    # B (an Assembler: 3 basic bots) is on the 1 space and falls at seat 0's turn. Seat 0's start
    # zone: row 3 gets a new bot from the Basic Fabricator, so 4 holes are free for 3 bots.
    r = refused(state, 0, c.EndTurn())
    assert r.rule == "MEC-RECYCLE-ROWS"
    assert c.EndTurn(rows=[1, 2, 4]) in RULES.legal_actions(state, 0)
    assert c.EndTurn(rows=[3, 2, 4]) not in RULES.legal_actions(state, 0)
    events = act(state, 0, c.EndTurn(rows=[5, 1, 2]))
    assert of(events, c.ShopRotated) == [c.ShopRotated(seat=0, fell=B)]
    (recycled,) = of(events, c.ImprovementRecycled)
    assert recycled.from_rotation and recycled.seat == 0 and recycled.lost == []
    assert [(b.spot.row, b.model) for b in recycled.placed] == [(5, "basic"), (1, "basic"), (2, "basic")]
    assert B in state.discard and B not in state.shop
    assert [holes(state, 0, r, 1)[0] for r in range(1, 6)] == ["basic", "basic", "basic", "", "basic"]


def test_recycle_bots_beyond_the_free_holes_are_lost() -> None:
    state = table(2, stack=[B, A, *REST[:19]])
    for row in (1, 2, 3, 4):
        state.players[0].holes[(row - 1) * 5][0] = "plus"
    events = act(state, 0, c.Recycle(price=7, rows=[5]))
    (recycled,) = of(events, c.ImprovementRecycled)
    assert [b.spot.row for b in recycled.placed] == [5] and recycled.lost == ["basic", "basic"]
    assert state.players[0].wallet == 1


def test_double_rotation_with_two_or_three_players() -> None:
    # Rulebook: "si la única mejora de la tienda después de rotar está en el lugar de costo 7, rote
    # una segunda vez y ponga la siguiente mejora de los extras en el lugar de costo 7".
    for n in (2, 3):
        state = table(n, stack=_stack(), extras=REST[19:], money=20)
        act(state, 0, c.Recycle(price=7, rows=[1, 2]))
        act(state, 0, c.Recycle(price=5, rows=[3, 4, 5]))
        events = act(state, 0, c.EndTurn())
        assert of(events, c.ShopRotated) == [c.ShopRotated(seat=0), c.ShopRotated(seat=0, second=True)]
        assert of(events, c.ImprovementDrawn) == [
            c.ImprovementDrawn(improvement=REST[0], price=7, source="stack"),
            c.ImprovementDrawn(improvement=REST[19], price=7, source="extras"),
        ]
        assert state.shop == [REST[19], REST[0], "", ""] and len(state.extras) == 5


def test_no_double_rotation_solo_or_with_four() -> None:
    for n in (1, 4):
        state = table(n, stack=_stack(), extras=REST[19:], money=20)
        act(state, 0, c.Recycle(price=7, rows=[1, 2]))
        act(state, 0, c.Recycle(price=5, rows=[3, 4, 5]))
        events = act(state, 0, c.EndTurn())
        assert len(of(events, c.ShopRotated)) == 1
        assert state.shop == [REST[0], "", "", ""] and len(state.extras) == 6


def test_four_players_draw_from_the_extras_when_the_stack_is_empty() -> None:
    state = table(4, stack=[A, B, REST[0]], extras=REST[1:7])
    act(state, 0, c.EndTurn())
    assert state.stack == []
    events = act(state, 1, c.EndTurn())
    assert of(events, c.ImprovementDrawn) == [c.ImprovementDrawn(improvement=REST[1], price=7, source="extras")]
    two = table(2, stack=[A, B, REST[0]], extras=REST[1:7])
    act(two, 0, c.EndTurn())
    assert of(act(two, 1, c.EndTurn()), c.ImprovementDrawn) == []  # 2-3 players: the stack only


def test_the_game_ends_at_the_end_of_a_workday_with_stack_and_shop_empty() -> None:
    state = table(1, stack=[A, B], extras=REST[:6])
    for _ in range(2):
        act(state, 0, c.EndTurn())
    assert state.shop == ["", "", A, B]
    act(state, 0, c.EndTurn(rows=[1, 2, 4]))  # B falls: its 3 basic bots into the start zone
    assert not state.over and state.shop == ["", "", "", A]
    # Rows 2 and 4 are still jammed (the central truck was never emptied); rows 1 and 5 are free.
    events = act(state, 0, c.EndTurn(rows=[1, 5]))  # A falls: the shop is empty, so is the stack
    assert state.over and RULES.to_act(state) == []
    assert [type(e).__name__ for e in events][-3:] == ["TurnEnded", "WorkdayEnded", "GameFinished"]


def test_four_players_play_on_while_the_extras_last() -> None:
    state = table(4, stack=[A, B], extras=REST[:6])
    for _ in range(4):
        act(state, state.current or 0, RULES.default_action(state, state.current or 0))
    assert not state.over and any(state.shop)

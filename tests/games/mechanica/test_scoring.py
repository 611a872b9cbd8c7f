"""Final totals and the tie-break."""

from __future__ import annotations

from contracts import mechanica as c
from games.mechanica import RULES
from games.mechanica.scoring import winners
from tests.games.mechanica.given import TILES, act, given, installed, table, tile


def test_totals_are_wallet_vault_and_installed_improvements() -> None:
    a, b = tile("duplicator"), tile("assembler")
    state = table(2, stack=[a, b], extras=[t for t in TILES if t not in (a, b)][:6])
    given(state, installed(0, tile("upgrader", 2), 3, 3), installed(0, tile("advanced_fabricator", 2), 1, 1))
    state.players[0].vault = 5
    given(state, installed(1, tile("gift_wrapper", 2), 1, 2), installed(1, tile("gift_wrapper", 3), 1, 2))
    while not state.over:
        seat = state.current
        assert seat is not None
        act(state, seat, RULES.default_action(state, seat))
    result = RULES.result(state)
    # Seat 0: 8 wallet + 5 vault + upgrader 2 + advanced fabricator 3. Seat 1: 8 + the one Gift
    # Wrapper still installed (the second demolished the first): 2.
    assert result.scores == [18, 10]
    assert result.winners == [0]
    assert result.breakdown[0] == {"wallet": 8, "vault": 5, "improvements": 5}
    assert state.discard.count(tile("gift_wrapper", 2)) == 1


def test_ties_go_to_the_larger_vault_then_are_shared() -> None:
    assert winners([20, 20, 15], [3, 7, 9]) == [1]
    assert winners([20, 20, 15], [7, 7, 9]) == [0, 1]
    assert winners([12], [0]) == [0]


def test_game_finished_event_carries_the_breakdown() -> None:
    a, b = tile("duplicator"), tile("assembler")
    state = table(1, stack=[a, b], extras=[t for t in TILES if t not in (a, b)][:6])
    events = []
    while not state.over:
        events += act(state, 0, RULES.default_action(state, 0))
    done = events[-1]
    assert isinstance(done, c.GameFinished)
    p = state.players[0]
    assert done.scores == [p.wallet + p.vault] and done.wallet == [p.wallet] and done.improvements == [0]

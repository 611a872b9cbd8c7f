"""Set-up, turn flow, card abilities, the end, hidden information and legal actions."""

from __future__ import annotations

import random

import msgspec
import pytest

from contracts import artifacts as c
from games.artifacts import RULES
from games.artifacts.flow import visible
from games.artifacts.scoring import placement_gain, visible_reputation
from games.artifacts.state import Placed
from games.base import Rejected
from games.rng import Rng
from tests.games.artifacts.given import DATA, START, act, fold, give, of, roll, table


def _setup(n: int, seed: str = "s") -> list[msgspec.Struct]:
    return RULES.setup(n, Rng.for_version(seed, 0))


@pytest.mark.parametrize("n", [2, 3, 4])
def test_setup_lays_the_table(n: int) -> None:
    events = _setup(n)
    state = fold(n, events)
    table_set = events[0]
    assert isinstance(table_set, c.TableSet)
    assert table_set.museum_side == ("2p" if n == 2 else "3p")
    assert table_set.boxes == [6 if n == 2 else 9] * 4
    assert table_set.underwater == sorted(DATA.underwater_ids, key=lambda u: DATA.underwater[u].number)
    # Rows A, B and C: "draw the first 3 cards ... in a row next to the pile (4 visible cards in
    # each row)": the row and the pile's top card; stacks D and E show their top card.
    assert [len(m) for m in state.market] == [4, 4, 4, 1, 1]
    assert all(x is not None for m in state.market for x in m)
    assert [len(d) for d in state.decks] == [4, 4, 4, 6, 6]
    view = RULES.view(state, None)
    assert [len(view.market[d]) for d in "ABCDE"] == [4, 4, 4, 1, 1]
    assert view.deck_sizes == {"A": 4, "B": 4, "C": 4, "D": 6, "E": 6}
    seated = of(events, c.PlayersSeated)[0]
    assert isinstance(seated, c.PlayersSeated)
    first = seated.order[0]
    assert seated.order == [(first + k) % n for k in range(n)]
    assert [seated.dollars[s] for s in seated.order] == DATA.table.starting_money[:n]
    rolls = of(events, c.FirstPlayerRolled)
    last = rolls[-1]
    assert isinstance(last, c.FirstPlayerRolled)
    sums = [sum(r) for r in last.rolls]
    assert sums.count(max(sums)) == 1 and last.seats[sums.index(max(sums))] == first
    assert state.phase == "arrange" and RULES.to_act(state) == [first]


def test_all_four_visible_cards_of_a_row_are_for_sale_and_the_pile_below_stays_secret() -> None:
    state = table(3, dice=[4, 4, 4], market={"A": ["A-03", "A-05", "A-06", "A-07"]})
    give(state, 0, dollars=10)
    below = state.decks[0][0]
    legal = RULES.legal_actions(state, 0)
    for card in ("A-03", "A-05", "A-06", "A-07"):  # the row and the top of the pile
        assert c.Buy(die=4, card="S-hq", action=1, market=card, row=2, col=1) in legal, card
    assert not [a for a in legal if isinstance(a, c.Buy) and a.market == below]
    public = fold(3, [e for e in (RULES.public_event(x) for x in _setup(3, "secret")) if e is not None])
    assert all(x == "?" for d in public.decks for x in d)
    events = act(state, 0, c.Buy(die=4, card="S-hq", action=1, market="A-07", row=2, col=1))
    assert of(events, c.MarketRefilled) == [c.MarketRefilled(deck="A", slots=[4], cards=[below])]
    assert state.market[0] == ["A-03", "A-05", "A-06", below]


def test_first_player_ties_roll_again_among_the_tied_only() -> None:
    for i in range(200):
        events = _setup(4, f"tie-{i}")
        rolls = [e for e in events if isinstance(e, c.FirstPlayerRolled)]
        if len(rolls) > 1:
            first, again = rolls[0], rolls[1]
            sums = [sum(r) for r in first.rolls]
            assert again.seats == [s for s, v in zip(first.seats, sums, strict=True) if v == max(sums)]
            return
    pytest.fail("no tie in 200 set-ups")


def test_arranging_in_turn_order_then_the_first_turn_rolls_three_dice() -> None:
    state = fold(3, _setup(3, "arr"))
    order = list(state.order)
    for seat in order:
        assert RULES.to_act(state) == [seat]
        assert RULES.default_action(state, seat) == c.ArrangeStart(cards=START)
        events = act(state, seat, c.ArrangeStart(cards=[START[2], START[0], START[3], START[1]]))
    started = of(events, c.TurnStarted)[0]
    assert isinstance(started, c.TurnStarted)
    assert started.seat == order[0] and started.round == 1 and len(started.dice) == 3
    assert all(1 <= d <= 6 for d in started.dice)
    assert [(p.card, p.row, p.col) for p in state.players[order[1]].cards] == [
        (START[2], 1, 1), (START[0], 1, 2), (START[3], 1, 3), (START[1], 1, 4),
    ]  # fmt: skip


def test_dice_follow_adventurer_symbols_up_to_the_seven_in_the_box() -> None:
    state = table(2, dice=[3, 3, 3], market={"A": ["A-04"], "C": ["C-02"]})
    give(state, 0, dollars=40)
    act(state, 0, c.Buy(die=3, card="S-hq", action=1, market="A-04", row=2, col=1))  # Jeep: +1 die
    events = act(state, 0, c.EndTurn())
    assert len(of(events, c.TurnStarted)[0].dice) == 3
    act(state, 1, c.EndTurn())
    assert len(state.dice) == 4
    state.players[0].cards += [Placed(card="C-02", level=2, row=2, col=k) for k in (2, 3)]  # given: 2x2 more
    act(state, 0, c.EndTurn())
    act(state, 1, c.EndTurn())
    assert len(state.dice) == 7  # 3 + 1 + 2 + 2 = 8 symbols, 7 dice


def test_the_turn_ends_by_itself_after_the_last_die_and_unplaced_dice_are_lost() -> None:
    state = table(3, dice=[3, 6])
    act(state, 0, c.UseAction(die=3, card="guide"))
    events = act(state, 0, c.UseAction(die=6, card="S-desert"))
    ended = of(events, c.TurnEnded)[0]
    assert isinstance(ended, c.TurnEnded) and ended.unplaced == [] and ended.next_seat == 1
    assert state.current == 1 and state.used == []
    events = act(state, 1, c.EndTurn())
    ended = of(events, c.TurnEnded)[0]
    assert isinstance(ended, c.TurnEnded) and len(ended.unplaced) == 3


def test_buying_pays_places_and_refills_the_market_slot() -> None:
    state = table(3, dice=[4, 4, 4], market={"B": ["B-03", "B-01", "B-05", "B-02"]})
    give(state, 0, dollars=10)
    deck_b = list(state.decks[1])
    events = act(state, 0, c.Buy(die=4, card="S-hq", action=1, market="B-01", row=1, col=0))
    bought, refill = of(events, c.AssetBought)[0], of(events, c.MarketRefilled)[0]
    assert isinstance(bought, c.AssetBought) and (bought.deck, bought.slot, bought.dollars) == ("B", 2, 5)
    assert isinstance(refill, c.MarketRefilled) and refill.slots == [2] and refill.cards == [deck_b[0]]
    assert state.market[1] == ["B-03", deck_b[0], "B-05", "B-02"]
    assert state.players[0].dollars == 12 - 5
    assert state.players[0].reputation == 2


def test_an_empty_deck_leaves_its_slot_empty() -> None:
    state = table(3, dice=[4, 4])
    give(state, 0, dollars=100, scroll=3)
    state.decks[3] = []  # given: stack D is used up
    top = state.market[3][0]
    assert top is not None
    events = act(state, 0, c.Buy(die=4, card="S-hq", action=1, market=top, row=2, col=1))
    assert not of(events, c.MarketRefilled) and state.market[3] == [None]


def test_adjacency_abilities_count_orthogonal_neighbours_only() -> None:
    # Expedition Jeep (A-04 Level 2): +1 reputation per adjacent expedition.
    state = table(3, dice=[3, 3, 3], arrangements={0: ["S-desert", "S-hq", "S-canyon", "S-adventurers"]})
    give(state, 0, dollars=30)
    state.market[0] = ["A-04"]
    act(state, 0, c.Buy(die=3, card="S-hq", action=1, market="A-04", row=2, col=2))  # under Headquarters
    roll(state, 0, [3])
    act(state, 0, c.Upgrade(die=3, card="S-hq", action=1, target="A-04"))
    # Its own icon only: the diagonal Desert (1,1) and Canyon (1,3) Expeditions do not count.
    assert state.players[0].reputation == 1
    roll(state, 0, [3])
    state.market[0] = ["A-06"]
    events = act(state, 0, c.Buy(die=3, card="S-hq", action=1, market="A-06", row=2, col=1))  # left of the Jeep
    assert [e.reputation for e in events if isinstance(e, c.ReputationMarked)] == [2]


def test_a_dive_raises_find_abilities_of_cards_already_owned() -> None:
    # Wreck Charts (B-07 Level 1): 1 reputation + 1 per sunken city find.
    state = table(3, dice=[4, 4, 4], market={"B": ["B-07"]}, underwater=["U-03", "U-07"])  # sunken cities
    give(state, 0, dollars=10)
    act(state, 0, c.Buy(die=4, card="S-hq", action=1, market="B-07", row=2, col=1))
    assert state.players[0].reputation == 1
    events = act(state, 0, c.Dive(dice=[4]))
    assert [e.reputation for e in events if isinstance(e, c.ReputationMarked)] == [1 + 1 + 1]


def test_actions_paying_per_adjacent_card_and_per_find() -> None:
    # Souvenir Shop (A-03 Level 2): odd die, 2 dollars + 1 per adjacent business.
    state = table(3, dice=[3, 3, 5, 5], market={"A": ["A-03", "A-05", "A-08"]})
    give(state, 0, dollars=30)
    act(state, 0, c.Buy(die=3, card="S-hq", action=1, market="A-03", row=2, col=1))
    state.players[0].cards.append(Placed(card="A-05", level=1, row=2, col=2))  # given: a business beside
    state.players[0].cards[-2].level = 2  # given: the Souvenir Stand already upgraded
    events = act(state, 0, c.UseAction(die=5, card="A-03"))
    assert of(events, c.DollarsEarned) == [c.DollarsEarned(seat=0, amount=3)]
    # Pottery Stall (A-08 Level 1): any die, 1 dollar + 1 per pottery find.
    state.players[0].cards.append(Placed(card="A-08", level=1, row=2, col=3))
    state.players[0].underwater = ["U-04", "U-05", "U-02"]  # given: 2 pottery, 1 doubloons
    events = act(state, 0, c.UseAction(die=3, card="A-08"))
    assert of(events, c.DollarsEarned) == [c.DollarsEarned(seat=0, amount=3)]


def test_upgrade_keeps_used_slots_and_opens_new_ones() -> None:
    state = table(3, dice=[5, 2, 6, 4])
    give(state, 0, dollars=10)
    act(state, 0, c.UseAction(die=5, card="S-canyon"))
    act(state, 0, c.Upgrade(die=6, card="S-hq", action=1, target="S-canyon"))
    r = RULES.decide(state, 0, c.UseAction(die=4, card="S-canyon", action=1), Rng.for_version("t", 1))
    assert isinstance(r, Rejected) and r.rule == "ART-SLOT"
    events = act(state, 0, c.UseAction(die=2, card="S-canyon", action=2))  # Level 2 only: a 2, 2 fossils
    assert of(events, c.ArtifactsFound) == [c.ArtifactsFound(seat=0, kind="fossil", count=2)]


def test_headquarters_may_upgrade_itself_and_use_its_new_slot() -> None:
    state = table(3, dice=[4, 3])
    give(state, 0, dollars=10)
    act(state, 0, c.Upgrade(die=4, card="S-hq", action=1, target="S-hq"))
    assert "S-hq#1" in state.used
    legal = RULES.legal_actions(state, 0)
    assert c.UseAction(die=3, card="S-hq", action=2) in legal
    assert not [a for a in legal if isinstance(a, (c.Buy, c.Upgrade))]


def test_two_players_use_the_six_box_museum_side() -> None:
    state = table(2, dice=[3])
    give(state, 0, fossil=6)
    assert [len(b) for b in state.boxes] == [6, 6, 6, 6]
    act(state, 0, c.SellToMuseum(die=3, museum="museum-fossil", box=6))
    assert state.players[0].artifacts[0] == 0 and state.players[0].dollars == 2 + 6 + 1


def test_round_cap_ends_a_game_nobody_plays() -> None:
    state = fold(2, _setup(2, "idle"))
    seed_version = 0
    while not state.over:
        seat = RULES.to_act(state)[0]
        out = RULES.decide(state, seat, RULES.default_action(state, seat), Rng.for_version("idle", seed_version))
        assert not isinstance(out, Rejected)
        for ev in out:
            RULES.evolve(state, ev)
            seed_version += 1
    assert state.round == DATA.table.max_rounds
    assert RULES.result(state).scores == [0, 0]


def test_public_events_hide_deck_order_and_the_view_has_no_secrets() -> None:
    events = _setup(3, "hidden")
    shuffles = [e for e in events if isinstance(e, c.DeckShuffled)]
    assert len(shuffles) == 5 and all(e.cards for e in shuffles)
    public = [RULES.public_event(e) for e in events]
    assert all(isinstance(p, c.DeckShuffled) and p.cards is None for p in public if isinstance(p, c.DeckShuffled))
    state = fold(3, events)
    view = RULES.view(state, 0)
    hidden_cards = [x for d in state.decks for x in d]
    encoded = msgspec.json.encode(view).decode()
    assert not any(f'"{x}"' in encoded for x in hidden_cards)
    folded_public = fold(3, [p for p in public if p is not None])
    assert RULES.view(folded_public, 1) == RULES.view(state, 1)


def test_level_2_faces_of_the_market_only_with_a_die_on_a_buy_action() -> None:
    # ART-R11: "puede mirar el lado opuesto de las cartas disponibles antes de comprar. Solo puede
    # hacer esto después de haber colocado un dado de Aventurero en la acción 'Comprar'".
    state = table(3, dice=[4, 4, 5], market={"B": ["B-01", "B-02", "B-03", "B-04"]})
    give(state, 0, dollars=30)
    assert all(RULES.view(state, seat).market_level_2 is None for seat in (0, 1, 2, None))
    act(state, 0, c.UseAction(die=5, card="guide"))  # a die elsewhere shows nothing
    assert RULES.view(state, 0).market_level_2 is None
    act(state, 0, c.Buy(die=4, card="S-hq", action=1, market="B-01", row=2, col=1))
    backs = RULES.view(state, 0).market_level_2
    assert backs is not None
    for deck, i in (("A", 0), ("B", 1), ("E", 4)):
        assert [None if b is None else b.name for b in backs[deck]] == [
            None if x is None else DATA.assets[x].lv2.name for x in state.market[i]
        ]
    assert msgspec.to_builtins(backs["B"][1]) == msgspec.to_builtins(DATA.assets["B-02"].lv2)
    assert RULES.view(state, 1).market_level_2 is None and RULES.view(state, None).market_level_2 is None
    act(state, 0, c.EndTurn())  # dice leave the cards
    assert RULES.view(state, 0).market_level_2 is None
    # An upgrade also puts the die on the buy action.
    roll(state, 0, [4, 4])
    act(state, 0, c.Upgrade(die=4, card="S-hq", action=1, target="S-canyon"))
    assert RULES.view(state, 0).market_level_2 is not None


def _normal(cmd: msgspec.Struct) -> msgspec.Struct:
    return c.Dive(dice=sorted(cmd.dice)) if isinstance(cmd, c.Dive) else cmd


def _random_command(rnd: random.Random, state: object) -> msgspec.Struct:
    cards = [*DATA.assets, *DATA.public, "nope"]
    die = rnd.randint(0, 7)
    kind = rnd.randrange(6)
    if kind == 0:
        return c.UseAction(die=die, card=rnd.choice(cards), action=rnd.randint(0, 3))
    if kind == 1:
        market = rnd.choice([*DATA.assets, "nope"])
        return c.Buy(die=die, card=rnd.choice(cards), action=rnd.randint(1, 2), market=market,
                     row=rnd.randint(0, 3), col=rnd.randint(-3, 7))  # fmt: skip
    if kind == 2:
        return c.Upgrade(die=die, card=rnd.choice(cards), action=rnd.randint(1, 2), target=rnd.choice(cards))
    if kind == 3:
        return c.SellToMuseum(die=die, museum=rnd.choice(cards), box=rnd.randint(0, 10))
    if kind == 4:
        return c.SellToCollectors(die=die, fossil=rnd.randint(-1, 3), scroll=rnd.randint(0, 3),
                                  gem=rnd.randint(0, 2), statue=rnd.randint(0, 2))  # fmt: skip
    return c.Dive(dice=[rnd.randint(1, 6) for _ in range(rnd.randint(0, 4))])


@pytest.mark.parametrize("n", [2, 4])
def test_legal_actions_are_exactly_what_decide_accepts(n: int) -> None:
    """Every listed command is accepted; random commands are accepted only when listed."""
    rnd = random.Random(n)
    state = fold(n, _setup(n, f"exact-{n}"))
    version = 0
    steps = 0
    while not state.over and steps < 400:
        seat = RULES.to_act(state)[0]
        legal = RULES.legal_actions(state, seat)
        listed = {msgspec.json.encode(_normal(a)) + type(a).__name__.encode() for a in legal}
        for a in legal:
            assert not isinstance(RULES.decide(state, seat, a, Rng.for_version("x", version)), Rejected), a
        for _ in range(40):
            cmd = _random_command(rnd, state)
            out = RULES.decide(state, seat, cmd, Rng.for_version("x", version))
            key = msgspec.json.encode(_normal(cmd)) + type(cmd).__name__.encode()
            assert isinstance(out, Rejected) == (key not in listed), (cmd, out)
        # Prefer doing something so that the game moves on through many kinds of states.
        doing = [a for a in legal if not isinstance(a, c.EndTurn)] or legal
        cmd = doing[rnd.randrange(len(doing))]
        out = RULES.decide(state, seat, cmd, Rng.for_version("x", version))
        assert not isinstance(out, Rejected)
        for ev in out:
            RULES.evolve(state, ev)
            version += 1
        steps += 1


def test_collectors_enumeration_is_exact_up_to_256_mixes() -> None:
    state = table(3, dice=[3])
    give(state, 0, fossil=3, scroll=3, gem=3, statue=2)  # 4*4*4*3 - 1 = 191 mixes
    sales = [a for a in RULES.legal_actions(state, 0) if isinstance(a, c.SellToCollectors)]
    assert len(sales) == 191
    give(state, 0, fossil=5, statue=5)  # 9*4*4*8 - 1 = 1151 mixes: a representative subset
    sales = [a for a in RULES.legal_actions(state, 0) if isinstance(a, c.SellToCollectors)]
    assert 0 < len(sales) < 256
    assert c.SellToCollectors(die=3, fossil=8, scroll=3, gem=3, statue=7) in sales
    assert c.SellToCollectors(die=3, fossil=5) in sales
    assert not isinstance(RULES.decide(state, 0, c.SellToCollectors(die=3, fossil=5, gem=2), Rng.for_version("t", 0)),
                          Rejected)  # fmt: skip


def test_placement_gain_matches_the_full_recount() -> None:
    rnd = random.Random(7)
    ids = [x for d in DATA.decks.values() for x in d]
    for _ in range(300):
        cards = [Placed(card=s, level=rnd.randint(1, 2), row=1, col=i + 1) for i, s in enumerate(START)]
        for cid in rnd.sample(ids, 6):
            spots = sorted({(3 - p.row, p.col) for p in cards} | {(p.row, p.col + 1) for p in cards}
                           - {(p.row, p.col) for p in cards})  # fmt: skip
            r, col = rnd.choice(spots)
            cards.append(Placed(card=cid, level=rnd.randint(1, 2), row=r, col=col))
        new = cards.pop()
        finds = rnd.sample(list(DATA.underwater_ids), rnd.randint(0, 5))
        before = visible_reputation(DATA, cards, finds)
        assert visible_reputation(DATA, [*cards, new], finds) - before == placement_gain(DATA, cards, finds, new)


def test_result_before_the_end_is_the_current_standing() -> None:
    state = table(3, dice=[3])
    result = RULES.result(state)
    # All at 0 reputation: the most dollars (seats 1 and 2 hold 3) share the lead.
    assert result.scores == [0, 0, 0] and result.winners == [1, 2]
    assert visible(DATA, state, 0) == 0


def test_expedition_paying_per_adjacent_expedition_and_any_card_abilities() -> None:
    # Excavation Camp (B-04 Level 2): a 3 or less, 1 fossil + 1 per adjacent expedition.
    state = table(3, dice=[1, 2])
    me = state.players[0]
    me.cards.append(Placed(card="B-04", level=2, row=2, col=1))  # under the Desert Expedition
    me.cards.append(Placed(card="A-01", level=1, row=2, col=2))  # a Mountain Expedition beside it
    events = act(state, 0, c.UseAction(die=2, card="B-04"))
    assert of(events, c.ArtifactsFound) == [c.ArtifactsFound(seat=0, kind="fossil", count=3)]
    # Hall of Fame (E-07 Level 1): 6 + 1 per adjacent card of any kind; it also counts for the
    # abilities of its neighbours.
    hall = Placed(card="E-07", level=1, row=2, col=3)
    assert placement_gain(DATA, me.cards, [], hall) == 6 + 2  # Headquarters above, the Mountain Expedition left
    assert visible_reputation(DATA, [*me.cards, hall], []) == visible_reputation(DATA, me.cards, []) + 8

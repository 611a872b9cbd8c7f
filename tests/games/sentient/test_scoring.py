"""Card scoring, calibration and component data: oracles from the rulebook."""

from __future__ import annotations

from pathlib import Path

import pytest

from contracts import sentient as c
from games.kit import DataError
from games.sentient import RULES
from games.sentient.components import CARD_TYPES, Card, load, parse
from games.sentient.scoring import calibrate, score_card
from tests.games.sentient.given import act, card_where, fold, table_events

DATA = RULES.data


def test_rulebook_card_scoring_example_totals_14() -> None:
    # Rulebook: Service (sum - 6) on 6+5 -> 5; Industry (both odd) -> 3; Information (4) with one
    # four -> 2; Transport (left > right) -> 4; total 14. Dice 6,5,3,4,2 fit that description.
    dice = [6, 5, 3, 4, 2]
    network = [
        DATA.cards[card_where(type="service", kind="sum_minus", offset=6)],
        DATA.cards[card_where(type="industry", kind="both_odd", vp=3)],
        DATA.cards[card_where(type="information", kind="match", number=4)],
        DATA.cards[card_where(type="transport", kind="left_greater", vp=4)],
    ]
    points = [score_card(card, dice[i], dice[i + 1]) for i, card in enumerate(network)]
    assert points == [5, 3, 2, 4]
    assert sum(points) == 14


def test_round_end_scores_the_example_network_through_the_rules() -> None:
    cards = [
        card_where(type="service", kind="sum_minus", offset=6),
        card_where(type="industry", kind="both_odd", vp=3),
        card_where(type="information", kind="match", number=4),
        card_where(type="transport", kind="left_greater", vp=4),
    ]
    # Every +/- corner is blocked, so seat 0's dice stay 6,5,3,4,2 as in the example.
    state = fold(2, table_events(2, factory=cards, dice=[[6, 5, 3, 4, 2], [1, 1, 1, 1, 1]]))
    for _ in range(4):
        slot = next(i + 1 for i, cid in enumerate(state.factory) if cid in cards)
        card = DATA.cards[state.factory[slot - 1] or ""]
        cmd = c.Acquire(
            factory_slot=slot,
            network_slot=cards.index(card.id) + 1,
            block_left=card.left != "=",
            block_right=card.right != "=",
        )
        act(state, 0, cmd)
        free = next(i + 1 for i, cid in enumerate(state.players[1].network) if cid is None)
        other = next(i + 1 for i, cid in enumerate(state.factory) if cid is not None and cid not in cards)
        act(state, 1, c.Acquire(factory_slot=other, network_slot=free))
    act(state, 0, c.Pass())
    out = act(state, 1, c.Pass())
    scored = [e for e in out if isinstance(e, c.CardsScored) and e.seat == 0]
    assert scored[0].cards == cards
    assert scored[0].points == [5, 3, 2, 4]
    assert scored[0].total == 14


@pytest.mark.parametrize(
    ("value", "modifier", "expected"),
    [(6, "+", 1), (1, "-", 6), (3, "+", 4), (3, "-", 2), (6, "=", 6), (1, "=", 1), (5, "+", 6), (2, "-", 1)],
)
def test_calibration_wraps_around(value: int, modifier: str, expected: int) -> None:
    assert calibrate(value, modifier) == expected


def test_acquire_wraps_six_up_to_one_and_one_down_to_six() -> None:
    plus_minus = card_where(left="+", right="-")
    state = fold(
        2,
        table_events(
            2,
            factory=[plus_minus, *[x for x in DATA.card_ids if x != plus_minus][:3]],
            dice=[[6, 1, 3, 3, 3], [3, 3, 3, 3, 3]],
        ),
    )
    out = act(state, 0, c.Acquire(factory_slot=1, network_slot=1))
    cal = next(e for e in out if isinstance(e, c.DiceCalibrated))
    assert (cal.before, cal.after) == ([6, 1], [1, 6])
    assert state.players[0].dice[:2] == [1, 6]


def _card(kind: str, **kw: int) -> Card:
    return Card(id="T", type="service", left="=", right="=", kind=kind, **kw)


@pytest.mark.parametrize(
    ("card", "left", "right", "points"),
    [
        (_card("match", number=4, points_one=2, points_both=7), 4, 4, 7),
        (_card("match", number=4, points_one=2, points_both=7), 4, 1, 2),
        (_card("match", number=4, points_one=2, points_both=7), 1, 4, 2),
        (_card("match", number=4, points_one=2, points_both=7), 1, 2, 0),
        (_card("left_greater", vp=4), 5, 2, 4),
        (_card("left_greater", vp=4), 2, 2, 0),
        (_card("left_less", vp=4), 2, 5, 4),
        (_card("equal", vp=5), 3, 3, 5),
        (_card("equal", vp=5), 3, 4, 0),
        (_card("differ_by_one", vp=4), 3, 4, 4),
        (_card("differ_by_one", vp=4), 3, 5, 0),
        (_card("both_odd", vp=3), 5, 3, 3),
        (_card("both_odd", vp=3), 5, 2, 0),
        (_card("both_even", vp=3), 2, 6, 3),
        (_card("odd_and_even", vp=2), 2, 5, 2),
        (_card("odd_and_even", vp=2), 5, 2, 2),
        (_card("odd_and_even", vp=2), 4, 2, 0),
        (_card("left_odd_right_even", vp=4), 1, 2, 4),
        (_card("left_odd_right_even", vp=4), 2, 1, 0),
        (_card("left_even_right_odd", vp=4), 2, 1, 4),
        (_card("sum_at_least", threshold=9, vp=4), 4, 5, 4),
        (_card("sum_at_least", threshold=9, vp=4), 4, 4, 0),
        (_card("sum_at_most", threshold=5, vp=4), 1, 4, 4),
        (_card("sum_at_most", threshold=5, vp=4), 2, 4, 0),
        (_card("difference_at_least", threshold=3, vp=3), 1, 4, 3),
        (_card("difference_at_least", threshold=3, vp=3), 2, 4, 0),
        (_card("difference_at_most", threshold=1, vp=3), 4, 5, 3),
        (_card("difference_at_most", threshold=1, vp=3), 3, 5, 0),
        (_card("sum_minus", offset=6), 6, 5, 5),
        (_card("sum_minus", offset=6), 2, 1, 0),
        (_card("left_die", offset=2), 5, 1, 3),
        (_card("right_die", offset=2), 5, 1, 0),
        (_card("lower_die", offset=1), 5, 3, 2),
        (_card("higher_die", offset=3), 5, 3, 2),
        (_card("difference", offset=1), 6, 2, 3),
    ],
)
def test_every_scoring_kind(card: Card, left: int, right: int, points: int) -> None:
    assert score_card(card, left, right) == points


def test_data_invariants_and_the_known_real_card() -> None:
    data = load()
    assert len(data.cards) == 60
    for t in CARD_TYPES:
        assert sum(1 for x in data.cards.values() if x.type == t) == 12
        assert len({x.kind for x in data.cards.values() if x.type == t}) >= 4 or t == "information"
    assert len(data.investors) == 15
    assert sorted(s.starting_investor for s in data.board_sides.values()) == sorted(CARD_TYPES)
    faces = [(x.type, x.left, x.right, x.kind, x.vp) for x in data.cards.values()]
    real = [f for f in faces if f == ("transport", "-", "=", "equal", 5)]
    assert real
    assert RULES.data_version == data.data_version
    mods = {(x.left, x.right) for x in data.cards.values()}
    assert len(mods) == 9  # every combination of corners appears


def test_bad_data_names_file_and_field(tmp_path: Path) -> None:
    import tomllib

    from games.sentient.components import DATA_FILE

    raw = tomllib.loads(DATA_FILE.read_text())
    raw["cards"][3]["left"] = "*"
    with pytest.raises(DataError, match=r"sentient\.toml.*cards\[3\]\.left"):
        parse(raw, DATA_FILE)
    raw = tomllib.loads(DATA_FILE.read_text())
    raw["cards"][0]["kind"] = "sum_minus"  # an information card with a service kind
    with pytest.raises(DataError, match=r"cards\[0\].*\.kind"):
        parse(raw, DATA_FILE)
    raw = tomllib.loads(DATA_FILE.read_text())
    del raw["cards"][-1]
    with pytest.raises(DataError, match=r"expected 60 cards"):
        parse(raw, DATA_FILE)
    bad = tmp_path / "broken.toml"
    bad.write_text("data_version = ")
    with pytest.raises(DataError, match=r"broken\.toml"):
        load(bad)


def test_rules_doc_quotes_every_rule_text() -> None:
    from games.sentient.rule_ids import RULES_TEXT

    doc = " ".join((Path(__file__).parents[3] / "docs" / "rules" / "sentient.md").read_text().split())
    for rule, text in RULES_TEXT.items():
        assert f"**{rule}** — {' '.join(text.split())}" in doc, rule

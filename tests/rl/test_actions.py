"""The fixed action encoding: every legal command of random games inside the documented bounds
maps to an index and back; one outside them has none and is left out of the legal indices."""

from __future__ import annotations

import random

import pytest

from games.catalog import SPECS
from games.offline import new_game
from rl.actions import GAMES, codec_for, command_key, encoding_sizes, within_bounds


@pytest.mark.parametrize("game", GAMES)
def test_every_legal_action_round_trips(game: str) -> None:
    rules = SPECS[game].rules
    codec = codec_for(game)
    outside = legal_count = 0
    for n in range(rules.min_players, rules.max_players + 1):
        for g in range(2):
            play = new_game(rules, n, f"rl-actions-{n}-{g}", record_events=False)
            rnd = random.Random(g)
            while not play.is_terminal():
                seat = play.current_player()
                assert seat is not None
                legal = play.legal_actions(seat)
                legal_count += len(legal)
                for cmd in legal:
                    index = codec.encode(cmd)
                    if not within_bounds(cmd):
                        assert index is None, f"{game}: {cmd!r} is outside the bounds yet has an index"
                        outside += 1
                        continue
                    assert index is not None, f"{game}: {cmd!r} has no index"
                    assert codec.decode(index) == cmd
                    assert command_key(codec.decode(index)) == command_key(cmd)
                assert codec.legal_indices(legal)
                play.apply(rnd.choice(legal), seat)
    assert outside <= legal_count // 100, f"{game}: {outside} of {legal_count} legal commands outside the encoding"


def test_sizes_are_fixed_and_bounded() -> None:
    sizes = encoding_sizes()
    assert set(sizes) == set(GAMES) == set(SPECS) & set(GAMES)
    assert all(0 < s <= 100_000 for s in sizes.values())
    assert encoding_sizes() == sizes

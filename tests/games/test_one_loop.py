"""One game loop: the offline API writes the referee's log, byte for byte, for every game.

Given the referee's seed and the seats its joins recorded, an `OfflineGame` fed the commands the
referee accepted must produce exactly the events in the referee's log: set-up, every draw and roll,
the end of the game and the revealed seed; and it plays a resigned seat's turns as the referee does.
"""

from __future__ import annotations

import asyncio

import msgspec
import pytest

from contracts import codec
from contracts import lifecycle as lc
from contracts.registry import command_type, type_name
from games.bots import RandomBot
from games.catalog import GAMES, GREEDY, SPECS
from games.offline import Seat, new_game
from services.history import History
from services.selfplay import record_game


def _referee_game(title: str, players: int, seed: str) -> History:
    bots = [GREEDY[title](), *(RandomBot(seat) for seat in range(1, players))]
    return asyncio.run(record_game(title, bots, seed, game_id=f"loop-{title}"))


def _seats(history: History) -> list[Seat]:
    payloads = [codec.decode_event_payload(codec.encode(e)) for e in history.events if e.type == "lifecycle.SeatJoined"]
    joined = [j for j in payloads if isinstance(j, lc.SeatJoined)]
    return [
        Seat(name=j.name, kind=j.kind, token_hash=j.token_hash, reply_client=j.reply_client)
        for j in sorted(joined, key=lambda j: j.seat)
    ]


@pytest.mark.parametrize("title", sorted(SPECS))
def test_an_offline_game_writes_the_referees_log(title: str) -> None:
    players = SPECS[title].golden_players
    seed = f"one-loop-{title}"
    history = _referee_game(title, players, seed)
    created = history.events[0]
    assert created.type == "lifecycle.GameCreated"

    game = new_game(GAMES[title], players, seed, seats=_seats(history), game_id=history.game_id)
    moves = [o for o in history.outcomes if o.status == "accepted" and not o.command_type.startswith("lifecycle.")]
    assert moves, "the referee's game has moves"
    for outcome in moves:
        assert game.version == outcome.judged_at_version
        cls = command_type(outcome.command_type)
        assert cls is not None and outcome.seat is not None
        game.apply(codec.decode_command_payload(cls, bytes(outcome.payload)), outcome.seat)
        assert game.version == outcome.to_version

    assert game.events is not None
    offline = [(type_name(e), codec.encode(e)) for e in game.events]
    referee = [(e.type, bytes(e.payload)) for e in history.events]
    assert len(offline) == len(referee)
    for version, (mine, theirs) in enumerate(zip(offline, referee, strict=True), start=1):
        assert mine == theirs, f"version {version}"
    assert referee[-1][0] == "lifecycle.SeedRevealed" and game.is_terminal()


def test_a_resigned_seat_is_played_as_the_referee_plays_it() -> None:
    # Offline as in the referee: a resigned seat's turns are its default action, marked as such.
    game = new_game(GAMES["sentient"], 2, "one-loop-resign")
    seat = game.current_player()
    assert seat is not None
    game.apply(lc.Resign(), seat)
    assert game.events is not None
    forced = [e for e in game.events if isinstance(e, lc.DefaultActionForced)]
    assert forced and {e.seat for e in forced} == {seat} and {e.reason for e in forced} == {"resigned"}
    while not game.is_terminal():
        other = game.current_player()
        assert other is not None and other != seat
        game.apply(RandomBot(1).choose(game.view(other), game.legal_actions(other), other), other)
    assert isinstance(game.events[-2], lc.GameEnded) and isinstance(game.events[-1], lc.SeedRevealed)
    assert msgspec.structs.asdict(game.events[-1]) == {"seed": "one-loop-resign"}

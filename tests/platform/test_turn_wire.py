"""The turn service writes seat messages without building a dict per legal action, and the bot
runner reads them without one: given random positions of every game, the bytes are those of the
contract's `TurnRequest`, and a reference bot's answer is the same command either way."""

from __future__ import annotations

import random

import msgspec
import pytest

from contracts import codec
from contracts.protocol import Action, LegalAction, TurnRequest, TurnRequestOut
from contracts.registry import type_name
from games.catalog import GAMES, RULE_BOTS
from games.offline import new_game
from services.bots import RawTurnRequest, kinds_for, make_bot


def test_the_wire_struct_has_the_contract_fields_in_order() -> None:
    assert TurnRequestOut.__struct_fields__ == TurnRequest.__struct_fields__
    assert TurnRequestOut.__struct_config__.tag == TurnRequest.__struct_config__.tag
    assert RawTurnRequest.__struct_fields__ == TurnRequest.__struct_fields__


@pytest.mark.parametrize("title", sorted(GAMES))
def test_seat_messages_are_the_contract_bytes_and_bots_answer_alike(title: str) -> None:
    rules = GAMES[title]
    rng = random.Random(title)
    checked = 0
    for players in (rules.min_players, rules.max_players):
        game = new_game(rules, players, f"wire-{title}-{players}")
        for version in range(400):
            if game.is_terminal():
                break
            seat = game.to_act()[0]
            legal = game.legal_actions(seat)
            view = msgspec.to_builtins(game.view(seat))  # as a client in any language holds it
            contract = TurnRequest(
                game_id="g",
                seat=seat,
                version=version,
                view=view,
                legal_actions=[Action(type=type_name(a), payload=msgspec.to_builtins(a)) for a in legal],
                deadline_ms=1_700_000_000_000 if version % 2 else None,
                data_version=rules.data_version,
            )
            wire = TurnRequestOut(
                game_id="g",
                seat=seat,
                version=version,
                view=game.view(seat),
                legal_actions=[LegalAction(type=type_name(a), payload=a) for a in legal],
                deadline_ms=contract.deadline_ms,
                data_version=rules.data_version,
            )
            data = codec.encode(wire)
            assert data == codec.encode(contract)
            # Two bots of each rule-based kind (greedy, the game's own: Mechanica's planner) with
            # the same seed choose alike: from dicts, and from the raw bytes; and choose a listed one.
            for bot in RULE_BOTS[title]:
                by_dicts = make_bot(bot, title, version).choose_action(
                    view, contract.legal_actions, seat, rules.data_version
                )
                kind, payload = make_bot(bot, title, version).choose(msgspec.json.decode(data, type=RawTurnRequest))
                assert (kind, msgspec.json.decode(payload)) == (by_dicts.type, by_dicts.payload)
                assert by_dicts in contract.legal_actions
            game.apply(rng.choice(legal), seat)
            checked += 1
    assert checked > 20


def test_a_game_s_own_bot_kind_is_hosted_for_that_game_only() -> None:
    assert kinds_for("mechanica") == ["random", "greedy", "planner", "ismcts"]
    assert kinds_for("sentient") == ["random", "greedy", "ismcts"]
    with pytest.raises(ValueError, match="no bot 'planner' for sentient; known: random, greedy, ismcts"):
        make_bot("planner", "sentient")

"""Lifecycle rules (docs/rules/lifecycle.md), given/when/then on the pure match aggregate:
every refusal names its rule, and a refused command never changes the aggregate."""

from __future__ import annotations

import msgspec
import pytest

from contracts import lifecycle as lc
from contracts.sentient import Pass
from games import match as m
from games.base import Rejected


def given(*events: msgspec.Struct) -> m.Match:
    agg = m.Match(game_id="g")
    for ev in events:
        m.evolve(agg, ev)
    return agg


def created(n: int = 2) -> list[msgspec.Struct]:
    from games.sentient import RULES

    return [
        lc.GameCreated(
            game_type="sentient",
            num_players=n,
            rules_version=RULES.rules_version,
            data_version=RULES.data_version,
            seed_commitment="c",
            seed="s",
        )
    ]


def seated(n: int = 2) -> list[msgspec.Struct]:
    return [*created(n), *(lc.SeatJoined(seat=i, name=f"p{i}", kind="bot", token_hash=f"h{i}") for i in range(n))]


def started(n: int = 2) -> m.Match:
    agg = given(*seated(n))
    out = m.decide(agg, m.Request(payload=lc.StartGame(), seat=0, token_hash="h0"), apply=True)
    assert not isinstance(out, Rejected)
    return agg


def refused(agg: m.Match, req: m.Request, rule: str) -> None:
    before = msgspec.json.encode(msgspec.structs.replace(agg, game=None, rules_impl=None))
    out = m.decide(agg, req)
    assert isinstance(out, Rejected) and out.rule == rule, out
    assert out.text == m.LIFECYCLE_RULES[rule]
    assert msgspec.json.encode(msgspec.structs.replace(agg, game=None, rules_impl=None)) == before


def test_not_found() -> None:
    refused(given(), m.Request(payload=lc.StartGame(), seat=0, token_hash="h0"), "GAME-NOT-FOUND")


def test_exists() -> None:
    refused(
        given(*created()),
        m.Request(payload=lc.CreateGame(game_type="sentient", num_players=2), new_seed="x"),
        "GAME-EXISTS",
    )


def test_unknown_game() -> None:
    refused(
        given(), m.Request(payload=lc.CreateGame(game_type="chess", num_players=2), new_seed="x"), "GAME-UNKNOWN-GAME"
    )


@pytest.mark.parametrize("n", [1, 5])
def test_players_out_of_range(n: int) -> None:
    refused(
        given(), m.Request(payload=lc.CreateGame(game_type="sentient", num_players=n), new_seed="x"), "GAME-PLAYERS"
    )


def test_seat_range() -> None:
    refused(given(*created()), m.Request(payload=lc.JoinSeat(seat=2, name="x"), new_token_hash="h"), "GAME-SEAT-RANGE")


def test_seat_taken() -> None:
    refused(
        given(*created(), lc.SeatJoined(seat=0, name="a", kind="bot", token_hash="h0")),
        m.Request(payload=lc.JoinSeat(seat=0, name="x"), new_token_hash="h"),
        "GAME-SEAT-TAKEN",
    )


def test_start_needs_every_seat() -> None:
    agg = given(*created(), lc.SeatJoined(seat=0, name="a", kind="bot", token_hash="h0"))
    refused(agg, m.Request(payload=lc.StartGame(), seat=0, token_hash="h0"), "GAME-SEATS-EMPTY")


def test_join_after_start_is_not_open() -> None:
    refused(started(), m.Request(payload=lc.JoinSeat(seat=0, name="x"), new_token_hash="h"), "GAME-NOT-OPEN")


def test_moves_before_start_are_not_running() -> None:
    refused(given(*seated()), m.Request(payload=Pass(), seat=0, token_hash="h0"), "GAME-NOT-RUNNING")


def test_auth_and_impersonation() -> None:
    agg = started()
    refused(agg, m.Request(payload=Pass(), seat=0, token_hash=None), "GAME-AUTH")
    refused(agg, m.Request(payload=Pass(), seat=0, token_hash="h1"), "GAME-AUTH")
    refused(agg, m.Request(payload=Pass(), seat=7, token_hash="h0"), "GAME-AUTH")


def test_stale_expected_version() -> None:
    agg = started()
    refused(agg, m.Request(payload=Pass(), seat=0, token_hash="h0", expected_version=agg.version - 1), "GAME-STALE")


def test_resigned_seat_sends_nothing_more_and_its_turns_are_played_for_it() -> None:
    agg = started()
    seat = m.to_act(agg)[0]
    other = 1 - seat
    out = m.decide(agg, m.Request(payload=lc.Resign(), seat=other, token_hash=f"h{other}"), apply=True)
    assert not isinstance(out, Rejected) and isinstance(out[0], lc.PlayerResigned)
    refused(agg, m.Request(payload=Pass(), seat=other, token_hash=f"h{other}"), "GAME-RESIGNED")
    legal = agg.rules.legal_actions(agg.game, seat)
    out = m.decide(agg, m.Request(payload=legal[0], seat=seat, token_hash=f"h{seat}"), apply=True)
    assert not isinstance(out, Rejected)
    forced = [e for e in out if isinstance(e, lc.DefaultActionForced)]
    assert forced and {f.seat for f in forced} == {other} and {f.reason for f in forced} == {"resigned"}


def test_force_default_needs_the_admin_and_a_seat_still_waited_for() -> None:
    agg = started()
    seat = m.to_act(agg)[0]
    force = lc.ForceDefault(seat=seat, at_version=agg.version)
    refused(agg, m.Request(payload=force), "GAME-NOT-ADMIN")
    refused(
        agg, m.Request(payload=lc.ForceDefault(seat=1 - seat, at_version=agg.version), admin=True), "GAME-NOT-WAITING"
    )
    refused(
        agg, m.Request(payload=lc.ForceDefault(seat=seat, at_version=agg.version - 1), admin=True), "GAME-NOT-WAITING"
    )
    out = m.decide(agg, m.Request(payload=force, admin=True))
    assert not isinstance(out, Rejected)
    assert isinstance(out[0], lc.DefaultActionForced) and out[0].reason == "timeout"


def test_every_lifecycle_rule_is_documented() -> None:
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[2] / "docs" / "rules" / "lifecycle.md").read_text()
    for rule, text in m.LIFECYCLE_RULES.items():
        assert f"| {rule} | {text} |" in doc, rule


def test_a_join_records_its_reply_client_privately() -> None:
    agg = given(*created())
    req = m.Request(payload=lc.JoinSeat(seat=0, name="a"), new_token_hash="h0", reply_client="alice")
    out = m.decide(agg, req, apply=True)
    assert not isinstance(out, Rejected)
    [joined] = out
    assert isinstance(joined, lc.SeatJoined) and joined.reply_client == "alice"
    assert agg.seats[0] is not None and agg.seats[0].reply_client == "alice"
    shown = m.public_event(agg, joined)
    assert isinstance(shown, lc.SeatJoined) and shown.reply_client is None and shown.token_hash is None


def test_reply_to_another_client() -> None:
    joins = [lc.SeatJoined(seat=i, name=f"p{i}", kind="bot", token_hash=f"h{i}", reply_client="alice") for i in (0, 1)]
    agg = given(*created(), *joins)
    refused(agg, m.Request(payload=lc.StartGame(), seat=0, token_hash="h0", reply_client="mallory"), "GAME-REPLY-TO")
    # Its own client, or no reply stream at all, is fine; without the token the sender is unknown.
    for client in ("alice", None):
        assert not isinstance(
            m.decide(agg, m.Request(payload=lc.StartGame(), seat=0, token_hash="h0", reply_client=client)), Rejected
        )
    refused(agg, m.Request(payload=lc.StartGame(), seat=0, token_hash="x", reply_client="mallory"), "GAME-AUTH")


def test_a_seat_joined_without_a_reply_client_is_not_checked() -> None:
    agg = given(*seated())  # joined before the rule, or without a reply_to
    out = m.decide(agg, m.Request(payload=lc.StartGame(), seat=0, token_hash="h0", reply_client="anyone"))
    assert not isinstance(out, Rejected)


def test_an_archived_game_refuses_everything_and_keeps_who_played_and_the_result() -> None:
    marker = lc.GameArchived(
        file="ab/g.jsonl.gz",
        sha256="0" * 64,
        events=40,
        outcomes=30,
        game_type="sentient",
        num_players=2,
        players=["p0", "p1"],
        kinds=["bot", "human"],
        scores=[10, 12],
        winners=[1],
        seed_commitment="c",
        seed="s",
    )
    agg = given(marker)
    assert (agg.status, agg.game_type, [s.name for s in agg.seats if s]) == (m.ARCHIVED, "sentient", ["p0", "p1"])
    assert agg.result is not None and agg.result.winners == [1] and m.to_act(agg) == []
    for req in (
        m.Request(payload=lc.CreateGame(game_type="sentient", num_players=2), new_seed="x"),
        m.Request(payload=lc.JoinSeat(seat=0, name="x", kind="human")),
        m.Request(payload=Pass(), seat=0, token_hash="h0"),
    ):
        refused(agg, req, "GAME-ARCHIVED")

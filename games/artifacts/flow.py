"""Turn flow shared by every decision: the scratch state events are folded into, reputation
marking, the end trigger, turn ends and starts, and the end of the game."""

from __future__ import annotations

from contracts import artifacts as c
from games.artifacts.components import ArtifactsData
from games.artifacts.scoring import museum_winner, rank, visible_reputation
from games.artifacts.state import ArtifactsState
from games.kit import Emitter
from games.rng import Rng


def museum_bonus(data: ArtifactsData, s: ArtifactsState, seat: int) -> int:
    return sum(
        data.museums[mid].majority for mid, winner in zip(s.museum_ids, s.majorities, strict=False) if winner == seat
    )


def visible(data: ArtifactsData, s: ArtifactsState, seat: int) -> int:
    p = s.players[seat]
    return visible_reputation(data, p.cards, p.underwater, museum_bonus(data, s, seat))


def adventurers(data: ArtifactsData, s: ArtifactsState, seat: int) -> int:
    """Dice a seat rolls: its adventurer symbols, at most the dice in the box."""
    symbols = sum(data.face(pc.card, pc.level).adventurers for pc in s.players[seat].cards)
    return min(symbols, data.table.dice_in_box)


def mark_reputation(data: ArtifactsData, out: Emitter[ArtifactsState], seat: int) -> None:
    """Move the seat's track cube to its visible total, and trigger the end at the threshold."""
    s = out.state
    now = visible(data, s, seat)
    if now != s.players[seat].reputation:
        out.emit(c.ReputationMarked(seat=seat, reputation=now))
    if not s.triggered and now >= data.table.end_reputation and not s.over:
        out.emit(c.EndTriggered(seat=seat, round=s.round, reputation=now))


def start_turn(data: ArtifactsData, out: Emitter[ArtifactsState], seat: int, rng: Rng) -> None:
    s = out.state
    round_no = s.round + 1 if seat == s.order[0] else s.round
    dice = [rng.die() for _ in range(adventurers(data, s, seat))]
    out.emit(c.TurnStarted(seat=seat, round=round_no, dice=dice))


def end_turn(data: ArtifactsData, out: Emitter[ArtifactsState], seat: int, rng: Rng) -> None:
    """Dice leave the cards. After the last seat in turn order of a triggered round (or of the
    last round allowed), the game ends."""
    s = out.state
    ends = (s.triggered or s.round >= data.table.max_rounds) and seat == s.order[-1]
    nxt = None if ends else s.order[(s.order.index(seat) + 1) % len(s.order)]
    out.emit(c.TurnEnded(seat=seat, unplaced=sorted(s.dice), next_seat=nxt))
    if nxt is None:
        finish(data, out)
    else:
        start_turn(data, out, nxt, rng)


def after_action(data: ArtifactsData, out: Emitter[ArtifactsState], seat: int, rng: Rng) -> None:
    """Every action is resolved at once; then the track follows, and a turn with no dice left ends."""
    mark_reputation(data, out, seat)
    if not out.state.dice:
        end_turn(data, out, seat, rng)


def finish(data: ArtifactsData, out: Emitter[ArtifactsState]) -> None:
    s = out.state
    for i, mid in enumerate(s.museum_ids):
        winner, cubes = museum_winner(s.boxes[i], s.num_players)
        rep = data.museums[mid].majority if winner is not None else 0
        out.emit(c.MuseumMajority(museum=mid, seat=winner, cubes=cubes, reputation=rep))
    for seat in range(s.num_players):
        now = visible(data, s, seat)
        if now != s.players[seat].reputation:
            out.emit(c.ReputationMarked(seat=seat, reputation=now))
    reputation = [p.reputation for p in s.players]
    dollars = [p.dollars for p in s.players]
    out.emit(c.GameFinished(reputation=reputation, dollars=dollars, winners=rank(reputation, dollars)))

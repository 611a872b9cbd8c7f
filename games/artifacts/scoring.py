"""Pure scoring: adjacency, action yields, sales, visible reputation, museum majorities, ranking."""

from __future__ import annotations

from collections.abc import Sequence

from games.artifacts.components import Action, ArtifactsData
from games.artifacts.state import Placed


def neighbours(cards: Sequence[Placed], row: int, col: int) -> list[Placed]:
    """Owned cards sharing a side with (row, col): left, right, above or below; never diagonal."""
    return [c for c in cards if (c.row == row and abs(c.col - col) == 1) or (c.col == col and c.row != row)]


def _category_count(data: ArtifactsData, cards: Sequence[Placed], row: int, col: int, category: str) -> int:
    return sum(1 for c in neighbours(cards, row, col) if category == "any" or data.assets[c.card].category == category)


def finds_count(data: ArtifactsData, underwater: Sequence[str], find: str) -> int:
    return sum(1 for u in underwater if find == "any" or data.underwater[u].find == find)


def action_yield(
    data: ArtifactsData, action: Action, cards: Sequence[Placed], underwater: Sequence[str], where: Placed | None
) -> int:
    """Cubes or dollars a simple action gives now: its amount plus any adjacency / finds bonus."""
    if action.effect in ("artifact_adjacent", "dollars_adjacent"):
        assert where is not None, "adjacency actions are printed on asset cards only"
        return action.amount + action.per * _category_count(data, cards, where.row, where.col, action.category)
    if action.effect == "dollars_finds":
        return action.amount + action.per * finds_count(data, underwater, action.find)
    return action.amount


def card_reputation(data: ArtifactsData, placed: Placed, cards: Sequence[Placed], underwater: Sequence[str]) -> int:
    """The reputation one face-up card shows: its printed icon plus its abilities."""
    face = data.face(placed.card, placed.level)
    total = face.reputation
    for ab in face.abilities:
        if ab.effect == "rep_adjacent":
            total += ab.per * _category_count(data, cards, placed.row, placed.col, ab.category)
        else:
            total += ab.per * finds_count(data, underwater, ab.find)
    return total


def visible_reputation(
    data: ArtifactsData, cards: Sequence[Placed], underwater: Sequence[str], museum_bonus: int = 0
) -> int:
    """Everything a player's table shows: face-up cards and abilities, U cards, museum majorities."""
    total = sum(card_reputation(data, c, cards, underwater) for c in cards)
    return total + data.table.dive_reputation * len(underwater) + museum_bonus


def placement_gain(data: ArtifactsData, cards: Sequence[Placed], underwater: Sequence[str], new: Placed) -> int:
    """How much `visible_reputation` rises when `new` joins `cards` (new is not in `cards`): its
    own face, plus what adjacency abilities of its neighbours pay for its category."""
    category = data.assets[new.card].category
    gain = card_reputation(data, new, [*neighbours(cards, new.row, new.col)], underwater)
    for nb in neighbours(cards, new.row, new.col):
        for ab in data.face(nb.card, nb.level).abilities:
            if ab.effect == "rep_adjacent" and ab.category in ("any", category):
                gain += ab.per
    return gain


def museum_sale(count: int, bonus: int) -> int:
    """Dollars for an order of `count` artifacts: 1 each plus the museum's one-off bonus."""
    return count + bonus


def collectors_sale(sold: Sequence[int], per_artifact: int = 1, per_extra_kind: int = 1) -> int:
    """Private Collectors: `per_artifact` per cube, plus `per_extra_kind` per kind beyond the first."""
    kinds = sum(1 for n in sold if n > 0)
    return per_artifact * sum(sold) + per_extra_kind * max(0, kinds - 1)


def museum_winner(boxes: Sequence[int | None], num_players: int) -> tuple[int | None, list[int]]:
    """(majority seat or None, cubes per seat). Most cubes wins; a tie goes to the tied player
    whose cube sits in the later box (reading order: top-left first, left to right)."""
    cubes = [0] * num_players
    last = [-1] * num_players
    for i, seat in enumerate(boxes):
        if seat is not None:
            cubes[seat] += 1
            last[seat] = i
    top = max(cubes) if cubes else 0
    if top == 0:
        return None, cubes
    tied = [s for s in range(num_players) if cubes[s] == top]
    return max(tied, key=lambda s: last[s]), cubes


def rank(reputation: Sequence[int], dollars: Sequence[int]) -> list[int]:
    """Winners: most reputation, then most dollars; still tied: a shared win."""
    best = max(zip(reputation, dollars, strict=True))
    return [i for i, key in enumerate(zip(reputation, dollars, strict=True)) if key == best]

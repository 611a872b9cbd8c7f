"""OpenSkill ratings (Plackett-Luce) from finished games: pure, no I/O. The tournament table rates
bot kinds with it; the gateway rates players by name from the read models for the lobby."""

from __future__ import annotations

from collections.abc import Iterable

import msgspec
from openskill.models import PlackettLuce, PlackettLuceRating

MU = 25.0
SIGMA = 25.0 / 3


class Finished(msgspec.Struct, frozen=True, kw_only=True):
    """One game's result, in the order played: who sat where, the scores, the winners."""

    seats: list[str]  # a name (or bot kind) per seat
    scores: list[int]
    winners: list[int]


class Rating(msgspec.Struct, frozen=True, kw_only=True):
    name: str
    games: int
    wins: float  # a win shared by k seats counts 1/k
    mu: float
    sigma: float
    rating: float  # the conservative estimate mu - 3 sigma (openskill's ordinal)


def informative(g: Finished) -> bool:
    """Does the game say anything about skill: two names or more, a score per seat."""
    return len(set(g.seats)) > 1 and len(g.scores) == len(g.seats)


def unrated(name: str) -> Rating:
    """Where every name starts (and stays until it has played an informative game)."""
    return Rating(name=name, games=0, wins=0.0, mu=MU, sigma=round(SIGMA, 3), rating=0.0)


def rate(games: Iterable[Finished]) -> dict[str, Rating]:
    """Each seat is its own team, ranked winners first (the result's word, tie-breaks included),
    then the others by score. A name at several seats of one game takes the mean of its seats'
    updates; a game of one name against itself says nothing about it and is skipped."""
    model = PlackettLuce()
    ratings: dict[str, PlackettLuceRating] = {}
    played: dict[str, int] = {}
    wins: dict[str, float] = {}
    for g in games:
        if not informative(g):
            continue
        names = set(g.seats)
        winners = set(g.winners)
        for name in names:
            played[name] = played.get(name, 0) + 1
            ratings.setdefault(name, model.rating(mu=MU, sigma=SIGMA, name=name))
        for s in winners:
            wins[g.seats[s]] = wins.get(g.seats[s], 0.0) + 1 / len(winners)
        keys = [(0, 0) if s in winners else (1, -g.scores[s]) for s in range(len(g.seats))]
        order = sorted(set(keys))
        ranks = [float(order.index(k) + 1) for k in keys]
        teams = model.rate([[ratings[name]] for name in g.seats], ranks=ranks)
        for name in names:
            mine = [team[0] for team, n in zip(teams, g.seats, strict=True) if n == name]
            ratings[name] = model.rating(
                mu=sum(r.mu for r in mine) / len(mine), sigma=sum(r.sigma for r in mine) / len(mine), name=name
            )
    out: dict[str, Rating] = {}
    for name, r in ratings.items():
        out[name] = Rating(
            name=name,
            games=played[name],
            wins=round(wins.get(name, 0.0), 3),
            mu=round(r.mu, 3),
            sigma=round(r.sigma, 3),
            rating=round(r.ordinal(), 3),
        )
    return out

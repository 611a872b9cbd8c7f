"""Tournament ratings (OpenSkill, Plackett-Luce) from game records."""

from __future__ import annotations

from services.tournament import GameRecord, Standing, rate


def _records(results: list[tuple[list[str], list[int], list[int]]]) -> list[GameRecord]:
    return [
        GameRecord(game_id=f"g{i}", seats=seats, scores=scores, winners=winners, version=1)
        for i, (seats, scores, winners) in enumerate(results)
    ]


def _table(*bots: str) -> dict[str, Standing]:
    return {b: Standing(bot=b) for b in bots}


def test_the_bot_that_always_wins_is_rated_above_and_ratings_grow_surer() -> None:
    table = _table("greedy", "random")
    games = [(["greedy", "random"], [30, 10], [0]), (["random", "greedy"], [12, 28], [1])] * 10
    rate(table, _records(games))
    greedy, random = table["greedy"], table["random"]
    assert greedy.rating > random.rating and greedy.rating_mu > 25 > random.rating_mu
    assert greedy.rating_sigma < 25 / 3 and random.rating_sigma < 25 / 3
    assert abs(greedy.rating - (greedy.rating_mu - 3 * greedy.rating_sigma)) < 0.01


def test_a_bot_playing_itself_does_not_move_and_a_shared_win_is_a_tie() -> None:
    table = _table("greedy", "random")
    rate(table, _records([(["greedy", "greedy"], [20, 10], [0])]))
    assert table["greedy"].rating_mu == 25.0
    tied = _table("a", "b")
    rate(tied, _records([(["a", "b"], [20, 20], [0, 1])]))
    assert tied["a"].rating_mu == tied["b"].rating_mu


def test_the_winner_ranks_first_even_with_a_lower_score_when_the_result_says_so() -> None:
    # Tie-breaks: the result's winners, not the raw scores, decide first place.
    table = _table("a", "b")
    rate(table, _records([(["a", "b"], [10, 10], [1])] * 3))
    assert table["b"].rating > table["a"].rating


def test_ratings_count_games_and_shared_wins_per_name() -> None:
    from services.ratings import Finished
    from services.ratings import rate as rate_names

    rated = rate_names(
        [
            Finished(seats=["ann", "bob", "cy"], scores=[30, 20, 10], winners=[0]),
            Finished(seats=["ann", "bob"], scores=[15, 15], winners=[0, 1]),
            Finished(seats=["bob", "bob"], scores=[1, 2], winners=[1]),  # alone: says nothing
        ]
    )
    assert {n: (r.games, r.wins) for n, r in rated.items()} == {"ann": (2, 1.5), "bob": (2, 0.5), "cy": (1, 0.0)}
    assert rated["ann"].rating > rated["bob"].rating > rated["cy"].rating

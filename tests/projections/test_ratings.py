"""Ratings from finished games: how a game ranks its seats (R36, R37, R49), what a result does
to a rating, and that the order the followers meet the games in never changes the figures."""

from __future__ import annotations

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from domain.events import GameEnded, SeatScore
from projections.ratings import NEW, provisional, rate, rerate, shown, standings
from store.ratings import Place, RatedGame, Rating


def _ended(*totals: tuple[int, int], architetto: tuple[int, int] | None = None) -> GameEnded:
    """A result: (total, floors on the board) per seat, the Architetto's last if any."""
    rows = [*totals, *([architetto] if architetto else [])]
    scores = tuple(
        SeatScore(seat=s, tokens=t, portraits=0, trade_bonus=0, delegates=0, total=t,
                  floors_on_board=f)
        for s, (t, f) in enumerate(rows)
    )  # fmt: skip
    best = min((-t, f) for t, f in rows)
    winners = tuple(s for s, (t, f) in enumerate(rows) if (-t, f) == best)
    return GameEnded(scores=scores, winners=winners)


def test_a_newcomer_is_shown_1000_and_provisional() -> None:
    assert shown(NEW) == 1000
    assert provisional(NEW)
    assert not provisional(Rating(25, 5, 5))


def test_seats_rank_by_score_then_by_the_fewest_floors_on_the_board_r37() -> None:
    places = standings(_ended((30, 5), (30, 4), (12, 1)), ["ann", "bob", "cy"], {})
    assert places == (Place("ann", 2), Place("bob", 1), Place("cy", 3))


def test_a_shared_win_ties_and_both_winners_gain_alike_r37() -> None:
    places = standings(_ended((30, 4), (30, 4), (10, 2)), ["ann", "bob", "cy"], {})
    assert [p.rank for p in places] == [1, 1, 2]
    after = rate({}, places)
    assert after["ann"].mu == after["bob"].mu > NEW.mu > after["cy"].mu


def test_the_winner_of_a_duel_gains_what_the_loser_drops() -> None:
    after = rate({}, standings(_ended((20, 3), (25, 3)), ["ann", "bob"], {}))
    assert after["bob"].mu > NEW.mu > after["ann"].mu
    assert after["bob"].mu - NEW.mu == NEW.mu - after["ann"].mu
    assert after["ann"].sigma < NEW.sigma and after["ann"].games == 1


def test_a_seat_handed_over_ranks_last_whatever_the_bot_made_of_it() -> None:
    result = _ended((40, 3), (20, 3), (10, 3))
    places = standings(result, ["ann", "bob", "cy"], {}, frozenset({"ann"}))
    assert places == (Place("ann", 3), Place("bob", 1), Place("cy", 2))


def test_the_architetto_is_no_player_the_players_rank_among_themselves_r49() -> None:
    places = standings(_ended((20, 3), (25, 3), architetto=(40, 0)), ["ann", "bob"], {})
    assert places == (Place("ann", 2), Place("bob", 1))


def test_bots_are_rated_by_level_and_a_level_on_two_seats_counts_once_on_its_best() -> None:
    result = _ended((10, 3), (30, 3), (20, 3))
    places = standings(result, ["ann", "b1", "b2"], {"b1": "greedy", "b2": "greedy"})
    assert places == (Place("ann", 3), Place("bot:greedy", 1))


def test_a_game_only_of_bots_moves_no_rating() -> None:
    result = _ended((10, 3), (30, 3))
    assert standings(result, ["b1", "b2"], {"b1": "greedy", "b2": "random"}) == ()


def test_a_person_alone_against_bots_that_all_handed_over_still_counts() -> None:
    places = standings(_ended((10, 3), (30, 3)), ["ann", "b1"], {"b1": "random"})
    assert places == (Place("ann", 2), Place("bot:random", 1))


PLAYERS = ["ann", "bob", "cy", "dee", "bot:greedy", "bot:random"]


@st.composite
def _games(draw: st.DrawFn) -> list[RatedGame]:
    """Finished games of 2-5 identities with random ranks, at distinct end times."""
    count = draw(st.integers(1, 9))
    games = []
    for number in range(count):
        who = draw(st.lists(st.sampled_from(PLAYERS), min_size=2, max_size=5, unique=True))
        ranks = draw(st.lists(st.integers(1, 3), min_size=len(who), max_size=len(who)))
        places = tuple(Place(name, rank) for name, rank in zip(who, ranks, strict=True))
        games.append(RatedGame(f"g{number}", f"2026-12-05T10:00:{number:02d}Z", places))
    return games


def _in_order(games: list[RatedGame]) -> dict[str, Rating]:
    ratings: dict[str, Rating] = {}
    for game in sorted(games, key=lambda g: g.ended):
        ratings.update(rate(ratings, game.places))
    return ratings


@settings(max_examples=150, deadline=None)
@given(games=_games(), data=st.data())
def test_games_rated_in_any_order_leave_the_ratings_of_the_order_they_ended_in(
    games: list[RatedGame], data: st.DataObject
) -> None:
    arrival = data.draw(st.permutations(games))
    kept: dict[str, RatedGame] = {}  # what the store keeps: each rated game's record
    ratings: dict[str, Rating] = {}
    for game in arrival:
        later = sorted((g for g in kept.values() if g.ended > game.ended), key=lambda g: g.ended)
        records, changed = rerate(ratings, later, game)
        kept.update({record.game_id: record for record in records})
        ratings.update(changed)
    assert ratings == _in_order(games)
    for record in kept.values():  # each record's "after" is what its game left
        assert record.after == rate(record.before, record.places)
    assert msgspec.msgpack.decode(msgspec.msgpack.encode(ratings), type=dict[str, Rating]) == (
        ratings
    )

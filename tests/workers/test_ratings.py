"""Ratings kept by the follow-up of each game's end: every finished game rated once, in the
order the games ended whatever order they are followed in, listed by `GET /api/ratings`, and
made again to the same figures by `patrician rebuild-projections`."""

from __future__ import annotations

import os
import random
import subprocess
import time
from typing import Any

import fakeredis
import msgspec
import pytest

from domain.events import GameEnded
from projections.ratings import NEW, rate, shown, standings
from store.client import EventStore
from store.ratings import Place, RatedGame, Rating, RatingKeys, ratings_op
from tests.server.client import Api, Player
from tests.server.live import _patrician
from tests.workers.test_inbox import PREFIX
from workers.ratings import rate_game


def _store() -> tuple[EventStore, RatingKeys]:
    return EventStore(fakeredis.FakeRedis(), prefix="r"), RatingKeys.under("r")


def _game(number: int, *places: tuple[str, int]) -> RatedGame:
    ranked = tuple(Place(name, rank) for name, rank in places)
    return RatedGame(f"g{number}", f"2026-12-05T10:00:0{number}.000Z", ranked)


def test_a_games_end_followed_twice_rates_it_once() -> None:
    store, keys = _store()
    game = _game(1, ("ann", 1), ("bob", 2))
    assert rate_game(store, keys, game)
    once = store.run(ratings_op(keys, ["ann", "bob"]))
    assert not rate_game(store, keys, game)
    assert store.run(ratings_op(keys, ["ann", "bob"])) == once
    assert once["ann"].games == 1 and once["ann"].mu > NEW.mu


def test_a_game_followed_after_one_that_ended_later_is_rated_in_its_place() -> None:
    early, late = _game(1, ("ann", 1), ("bot:greedy", 2)), _game(2, ("bot:greedy", 1), ("bob", 2))
    in_order, out_of_order = _store(), _store()
    for game in (early, late):
        rate_game(*in_order, game)
    for game in (late, early):  # a follower met the later end first
        rate_game(*out_of_order, game)
    names = ["ann", "bob", "bot:greedy"]
    assert out_of_order[0].run(ratings_op(out_of_order[1], names)) == in_order[0].run(
        ratings_op(in_order[1], names)
    )
    client = out_of_order[0].client
    assert client.zrange(out_of_order[1].order, 0, -1) == in_order[0].client.zrange(
        in_order[1].order, 0, -1
    )


def _play(api: Api, players: list[Player], rng: random.Random) -> tuple[GameEnded, list[str]]:
    """A game between these players (the first creates it), played to its end at random;
    its result and the player of each seat."""
    created = api.create_game(players[0], len(players), entropy=f"{rng.getrandbits(64):x}")
    for player in players[1:]:
        api.join(player, created["game_id"], created["invite_code"], f"{rng.getrandbits(64):x}")
    table = api.table_of(created["game_id"], players)
    final = table.play_to_end(rng, whole_turns=0.8)
    seats = [player.player_id for player in table.seats]
    return msgspec.convert(final["result"], GameEnded), seats


def _listed(api: Api, games: dict[str, int]) -> Any:
    """The rating list once each of these has its count of rated games."""
    deadline = time.monotonic() + 30
    while True:
        listed = api.ok(api.request("GET", "/api/ratings"))
        rows = {row["player_id"]: row for row in listed["ratings"]}
        if all(rows.get(name, {}).get("games") == count for name, count in games.items()):
            return listed
        assert time.monotonic() < deadline, listed
        time.sleep(0.1)


@pytest.mark.redis
def test_finished_games_rate_their_players_and_the_rebuild_makes_the_same_figures(
    table: Any,
) -> None:
    running, api = table
    rng = random.Random(3)
    ann, bob, cy = (api.create_player(name) for name in ("Ann", "Bob", "Cy"))
    ratings: dict[str, Rating] = {}
    for players in ([ann, bob], [bob, cy, ann], [cy, ann]):  # one after the other: in order
        result, seats = _play(api, players, rng)
        ratings.update(rate(ratings, standings(result, seats, {})))
    listed = _listed(api, {ann.player_id: 3, bob.player_id: 2, cy.player_id: 2})
    assert listed["total"] == 3 and listed["offset"] == 0
    rows = listed["ratings"]
    assert [row["rating"] for row in rows] == sorted((row["rating"] for row in rows), reverse=True)
    by_id = {row["player_id"]: row for row in rows}
    for player in (ann, bob, cy):
        row, expected = by_id[player.player_id], ratings[player.player_id]
        assert (row["mu"], row["sigma"], row["rating"]) == (
            expected.mu, expected.sigma, shown(expected),
        )  # fmt: skip
        assert row["name"] == player.name and row["provisional"]
    assert rows[0]["place"] == 1

    keys = RatingKeys.under(PREFIX)
    kept = {key: _dump(running.client, key) for key in keys}
    done = subprocess.run(
        [*_patrician(), "rebuild-projections", "--redis-url", running.url],
        env={**os.environ, "PATRICIAN_PREFIX": PREFIX}, capture_output=True, text=True,
        timeout=60, check=True,
    )  # fmt: skip
    assert "rebuilt the ratings from 3 rated games" in done.stdout
    assert {key: _dump(running.client, key) for key in keys if key != keys.revision} == {
        key: value for key, value in kept.items() if key != keys.revision
    }


def _dump(client: Any, key: str) -> object:
    kind = client.type(key)
    if kind == b"hash":
        return client.hgetall(key)
    if kind == b"zset":
        return client.zrange(key, 0, -1, withscores=True)
    return client.get(key)

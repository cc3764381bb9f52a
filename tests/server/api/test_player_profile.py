"""A player's page (`GET /api/players/{id}/profile`) and a table's requirements: anyone reads
a player's games (the latest first, no live score, nothing hidden), their rating after each
rated game and their reliability record, where a turn the clock played counts against them
but not during their quiet hours or a vacation; a table may ask a minimum rating or a most of
timeouts of those who join, and refuses the others in words naming the rule. Through the
embedded server and its workers, under one fake clock."""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
from typing import Any

import pytest
from litestar.testing import TestClient

from server.config.settings import Settings
from tests.server.api.test_bad_input import check_error
from tests.server.client import Api, Json, Player
from tests.server.live import build_app
from tests.workers.test_clocks import DAY, FakeClock, _timed_game, _wait_for_turn
from workers import runner


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def api(clock: FakeClock, monkeypatch: pytest.MonkeyPatch) -> Iterator[Api]:
    monkeypatch.setattr(runner, "TIMER_SECONDS", 0.02)  # the timers looked at often
    with TestClient(build_app(Settings(), clock=clock), timeout=30) as client:
        yield Api(client)


def _profile(api: Api, player: Player | str, **params: Any) -> Json:
    player_id = player if isinstance(player, str) else player.player_id
    return api.ok(api.request("GET", f"/api/players/{player_id}/profile", params=params))


def _settled(api: Api, player: Player, enough: Any, seconds: float = 20) -> Json:
    """The profile once `enough(profile)` holds (the workers follow the game by a moment)."""
    deadline = time.monotonic() + seconds
    while not enough(found := _profile(api, player)):
        assert time.monotonic() < deadline, found
        time.sleep(0.05)
    return found


def _play_out(
    api: Api, game_id: str, players: list[Player], rng: random.Random, *,
    silent: Player | None = None, clock: FakeClock | None = None, times: int = 0,
) -> Json:  # fmt: skip
    """Play the game to its end at random; `silent`'s first `times` turns are left to the
    clock (advanced past each deadline). Its last board."""
    seats = {api.board(game_id, p)["viewer"]: p for p in players}
    left = times
    while (board := api.board(game_id))["phase"] == "playing":
        pending = board["pending"]["seat"]
        if silent is not None and clock is not None and seats[pending] == silent and left:
            clock.advance(DAY + 1)
            _wait_for_turn(api, game_id, pending)
            left -= 1
            continue
        mine = api.board(game_id, seats[pending])
        api.ok(api.send(game_id, seats[pending], mine["version"],
                        [rng.choice(mine["legal_commands"])]))  # fmt: skip
        if clock is not None:
            clock.advance(60)
    return board


def test_a_players_page_lists_their_finished_game_with_their_place_rating_and_turns(
    api: Api,
) -> None:
    table = api.new_table(3, rng=random.Random(21))
    final = table.play_to_end(random.Random(21), whole_turns=0.7)
    me = table.seats[0]
    found = _settled(api, me, lambda p: p["rating_history"] and p["reliability"]["games"])
    assert (found["player_id"], found["name"], found["bot"]) == (me.player_id, me.name, "")
    assert found["rated_games"] == 1 and found["rating"] == found["rating_history"][0]["rating"]
    point = found["rating_history"][0]
    assert point["game_id"] == table.game_id and point["games"] == 1
    assert point["change"] == point["rating"] - 1000, "from the 1000 every newcomer shows"
    assert found["total"] == 1 and found["offset"] == 0
    (game,) = found["games"]
    assert game["game_id"] == table.game_id and game["phase"] == "over"
    assert game["seat"] == 0 and game["ended"] == game["since"] == point["ended"]
    assert [p["seat"] for p in game["players"]] == [0, 1, 2]
    assert [p["player_id"] for p in game["players"]] == [p.player_id for p in table.seats]
    result = final["result"]
    assert game["result"] == result
    mine = next(s for s in result["scores"] if s["seat"] == 0)
    standing = game["standing"]
    assert standing["points"] == mine["total"] and standing["of"] == 3
    assert standing["won"] == (0 in result["winners"])
    assert (standing["place"] == 1) == standing["won"]
    record = api.record(table.game_id)
    seats = [c["seat"] for c in record["commands"] if c["kind"] == "commands"]
    turns = sum(1 for n, s in enumerate(seats) if s == 0 and (n == 0 or seats[n - 1] != 0))
    assert found["reliability"] == {
        "window": 100, "games": 1, "turns": turns, "timed_out": 0, "per_100": 0.0,
        "excused": 0, "handed_over": 0,
    }  # fmt: skip


def test_a_game_in_play_shows_who_plays_it_but_no_score_and_no_result(api: Api) -> None:
    table = api.new_table(2, "classic", rng=random.Random(5))
    for _ in range(4):
        table.step(random.Random(5), False)
    found = _settled(api, table.seats[1], lambda p: p["games"])
    (game,) = found["games"]
    assert game["phase"] == "playing" and game["ended"] is None
    assert game["standing"] is None and game["result"] is None and game["accuracy"] is None
    assert set(game) == {
        "game_id", "phase", "edition", "seats", "modules", "seat", "players", "since", "ended",
        "standing", "result", "accuracy",
    }, "no hand, no token, no score of a game in play"  # fmt: skip
    assert found["rating"] is None and found["rating_history"] == []


def test_the_games_come_the_latest_first_a_page_at_a_time(api: Api, clock: FakeClock) -> None:
    ann = api.create_player("Ann")
    made = []
    for _ in range(3):
        made.append(api.create_game(ann, 3)["game_id"])
        clock.advance(60)
    found = _settled(api, ann, lambda p: p["total"] == 3)
    assert [g["game_id"] for g in found["games"]] == made[::-1]
    assert all(g["phase"] == "waiting" and g["seat"] is None for g in found["games"])
    assert found["games"][0]["players"] == [
        {"player_id": ann.player_id, "name": "Ann", "seat": None, "bot": ""}
    ]
    second = _profile(api, ann, offset=1, limit=1)
    assert second["offset"] == 1 and [g["game_id"] for g in second["games"]] == [made[1]]
    assert second["reliability"]["games"] == 0 and second["reliability"]["per_100"] is None
    api.ok(api.request("POST", f"/api/games/{made[0]}/cancel", player=ann))
    assert _settled(api, ann, lambda p: p["total"] == 2)["total"] == 2, "none called off"


def test_bots_at_a_game_are_named_with_their_level(api: Api) -> None:
    ann = api.create_player("Ann")
    body = {"seats": 3, "bots": [{"level": "random"}, {"level": "greedy"}]}
    game_id = api.ok(api.request("POST", "/api/games", player=ann, json=body), 201)["game_id"]
    found = _settled(api, ann, lambda p: p["games"])
    (game,) = found["games"]
    assert game["game_id"] == game_id
    levels = {p["name"]: p["bot"] for p in game["players"]}
    assert levels == {"Ann": "", "Random bot": "random", "Greedy bot": "greedy"}


def test_turns_the_clock_played_count_against_a_player_but_not_in_their_quiet_hours(
    api: Api, clock: FakeClock
) -> None:
    ada, bea = api.create_player("Ada"), api.create_player("Bea")
    game_id = _timed_game(api, [ada, bea], {"per_move_hours": 24, "hand_over_after": 5})
    _play_out(api, game_id, [ada, bea], random.Random(3), silent=bea, clock=clock, times=2)
    found = _settled(api, bea, lambda p: p["reliability"]["games"] == 1)["reliability"]
    assert found["timed_out"] == 2 and found["excused"] == 0
    assert found["per_100"] == round(200 / found["turns"], 1)
    # Bea sleeps through the next game's timeouts: her quiet hours hold each time the clock
    # plays (the fake clock stands at 09:00 UTC and moves on by whole days and minutes).
    night = {"start": "08:00", "end": "23:00", "time_zone": "UTC"}
    api.ok(api.request("PUT", "/api/me/notifications", player=bea, json={"quiet_hours": night}))
    again = _timed_game(api, [ada, bea], {"per_move_hours": 24, "hand_over_after": 5})
    _play_out(api, again, [ada, bea], random.Random(4), silent=bea, clock=clock, times=1)
    record = _settled(api, bea, lambda p: p["reliability"]["games"] == 2)["reliability"]
    assert record["timed_out"] == 2 and record["excused"] == 1, "quiet hours count as on time"
    ann = _settled(api, ada, lambda p: p["reliability"]["games"] == 2)["reliability"]
    assert ann["timed_out"] == 0 and ann["turns"] > 0


def test_a_turn_played_for_a_seat_handed_over_is_counted_apart(api: Api) -> None:
    table = api.new_table(2, rng=random.Random(8))
    stayer, quitter = table.seats
    api.ok(api.request("POST", f"/api/games/{table.game_id}/resign", player=quitter))
    rng, deadline = random.Random(8), time.monotonic() + 60
    while (board := api.board(table.game_id, stayer))["phase"] == "playing":
        assert time.monotonic() < deadline, "the game did not end"
        if board["pending"]["seat"] == board["viewer"]:
            api.ok(api.send(table.game_id, stayer, board["version"],
                            [rng.choice(board["legal_commands"])]))  # fmt: skip
        else:
            time.sleep(0.01)  # the bot plays the seat handed over
    found = _settled(api, quitter, lambda p: p["reliability"]["games"])["reliability"]
    assert found["handed_over"] > 0 and found["timed_out"] == 0


@pytest.mark.parametrize(
    "params",
    [{"limit": 0}, {"limit": 101}, {"limit": "x"}, {"offset": -1}, {"offset": 1_000_001},
     {"offset": "1.5"}],
)  # fmt: skip
def test_a_bad_page_of_games_is_refused_400_naming_it(api: Api, params: Json) -> None:
    ann = api.create_player("Ann")
    answer = api.request("GET", f"/api/players/{ann.player_id}/profile", params=params)
    assert check_error(answer, 400, "bad_request")["field"] == next(iter(params))


def test_an_unknown_players_page_is_404(api: Api) -> None:
    check_error(api.request("GET", "/api/players/pnobody/profile"), 404, "not_found")
    check_error(api.request("GET", f"/api/players/{'p' * 3000}/profile"), 404, "not_found")


# --- a table's requirements ------------------------------------------------------------------


def _rated(api: Api) -> tuple[Player, int]:
    """A player who won a rated game, and their rating once it is rated."""
    table = api.new_table(2, rng=random.Random(21))
    final = table.play_to_end(random.Random(21), whole_turns=0.7)
    (winner,) = final["result"]["winners"]
    champion = table.seats[winner]
    found = _settled(api, champion, lambda p: p["rating"] is not None)
    assert found["rating"] > 1000
    return champion, found["rating"]


def test_a_table_may_ask_a_minimum_rating_and_refuses_those_below_it_in_words(
    api: Api,
) -> None:
    champion, rating = _rated(api)
    asked = {"seats": 3, "requirements": {"min_rating": rating}}
    created = api.ok(api.request("POST", "/api/games", player=champion, json=asked), 201)
    game_id, code = created["game_id"], created["invite_code"]
    newcomer = api.create_player("Nell")
    answer = api.request("POST", f"/api/games/{game_id}/join", player=newcomer,
                         json={"invite_code": code})  # fmt: skip
    body = check_error(answer, 403, "below_minimum_rating")
    assert body["field"] == "requirements.min_rating"
    assert f"at least {rating}" in body["message"] and "yours is 1000" in body["message"]
    assert api.board(game_id)["joined"] == [champion.player_id], "nothing was written"
    expected = {"min_rating": rating, "max_timeouts_per_100": None}
    assert api.board(game_id)["requirements"] == expected
    (listed,) = [g for g in api.ok(api.request("GET", "/api/lobby")) if g["game_id"] == game_id]
    assert listed["requirements"] == expected
    lower = {"seats": 2, "requirements": {"min_rating": 1000}}
    opened = api.ok(api.request("POST", "/api/games", player=champion, json=lower), 201)
    assert api.join(newcomer, opened["game_id"], opened["invite_code"])["started"], (
        "a newcomer shows 1000: a minimum of 1000 lets them in"
    )


def test_a_table_may_ask_a_most_of_timeouts_and_refuses_those_above_it(
    api: Api, clock: FakeClock
) -> None:
    ada, bea = api.create_player("Ada"), api.create_player("Bea")
    game_id = _timed_game(api, [ada, bea], {"per_move_hours": 24, "hand_over_after": 5})
    _play_out(api, game_id, [ada, bea], random.Random(3), silent=bea, clock=clock, times=1)
    api.lists_at_heads([bea], [game_id])  # (a record read before counts a turn less)
    record = _settled(api, bea, lambda p: p["reliability"]["games"] == 1)["reliability"]
    asked = {"seats": 3, "requirements": {"max_timeouts_per_100": 0}}
    created = api.ok(api.request("POST", "/api/games", player=ada, json=asked), 201)
    join = {"invite_code": created["invite_code"]}
    path = f"/api/games/{created['game_id']}/join"
    body = check_error(api.request("POST", path, player=bea, json=join), 403, "too_many_timeouts")
    assert body["field"] == "requirements.max_timeouts_per_100"
    assert f"yours is {record['per_100']:g} (1 of {record['turns']} turns" in body["message"]
    newcomer = api.create_player("Nell")  # no turn yet: nothing against them
    first = api.ok(api.request("POST", path, player=newcomer, json=join))
    assert api.ok(api.request("POST", path, player=newcomer, json=join)) == first


@pytest.mark.parametrize(
    ("requirements", "field"),
    [({"min_rating": -1}, "requirements.min_rating"),
     ({"min_rating": 4001}, "requirements.min_rating"),
     ({"min_rating": "1200"}, "requirements.min_rating"),
     ({"min_rating": 1.5}, "requirements.min_rating"),
     ({"max_timeouts_per_100": 101}, "requirements.max_timeouts_per_100"),
     ({"max_timeouts_per_100": -0.5}, "requirements.max_timeouts_per_100"),
     ({"most": 3}, "requirements.most"), ("strict", "requirements")],
)  # fmt: skip
def test_a_bad_requirement_is_refused_400_naming_its_field(
    api: Api, requirements: Json, field: str
) -> None:
    ann = api.create_player("Ann")
    body = {"seats": 3, "requirements": requirements}
    answer = api.request("POST", "/api/games", player=ann, json=body)
    assert check_error(answer, 400, "bad_request")["field"] == field


def test_a_table_that_asks_nothing_shows_no_requirements(api: Api) -> None:
    ann = api.create_player("Ann")
    created = api.create_game(ann, 2)
    assert api.board(created["game_id"])["requirements"] is None
    empty = {"seats": 2, "requirements": {}}
    game = api.ok(api.request("POST", "/api/games", player=ann, json=empty), 201)
    assert api.board(game["game_id"])["requirements"] is None, "asking nothing is no rule"

"""Clocks: a timed game never stalls. A seat that does not act within its time has its turn
played by the bot, through the command path, as that seat, with `by: clock:greedy` in the
record; after `hand_over_after` timeouts in a row the bot plays it a minute into each turn;
the player is reminded before each deadline and told when the clock played for them. All time
comes from one fake clock here; the timers live in the store."""

from __future__ import annotations

import json
import random
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from litestar.testing import TestClient

from evidence.audit import audit
from outbound.web_push import write_push_key_file
from server.config.card_data import load_game_data
from server.config.settings import Settings
from tests.server.client import Api, Json, Player
from tests.server.live import REDIS_URL, build_app, delete_prefix, redis_client, unique_prefix
from tests.workers.push_service import Device, PushService, Received
from tests.workers.sink import Sink
from workers import runner
from workers.settings import context_for

PUBLIC = "https://play.example"
DAY = 24 * 3600


class FakeClock:
    """The one time of the server and its workers, moved on by the test."""

    def __init__(self) -> None:
        self.now = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture(params=["embedded", pytest.param("redis", marks=pytest.mark.redis)])
def api(
    request: pytest.FixtureRequest, clock: FakeClock, monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> Iterator[Api]:  # fmt: skip
    """The embedded server with its workers; or the server on the real Redis with the
    workers (RQ, the timers in Redis) beside it, in this process so that they share the fake
    clock. Both with a push key file, as a deployment with Web Push on."""
    monkeypatch.setattr(runner, "TIMER_SECONDS", 0.02)  # the timers looked at often
    key = str(tmp_path / "push-key.pem")
    write_push_key_file(key)
    if request.param == "embedded":
        embedded = Settings(webhook_allow="127.0.0.1", public_url=PUBLIC, push_key_file=key)
        app = build_app(embedded, clock=clock)
        with TestClient(app, timeout=30) as client:
            yield Api(client)
        return
    prefix = unique_prefix("clocks")
    settings = Settings(
        redis_url=REDIS_URL, prefix=prefix, webhook_allow="127.0.0.1", public_url=PUBLIC,
        push_key_file=key,
    )  # fmt: skip
    with served_with_workers(settings, clock) as api:
        yield api


@contextmanager
def served_with_workers(settings: Settings, clock: FakeClock) -> Iterator[Api]:
    """The server on the Redis of `settings` with its workers (RQ, the timers in Redis)
    beside it, in this process so that they share the fake clock; its keys deleted after."""
    workers = runner.EmbeddedWorkers(
        context_for(redis_client(), load_game_data(None), settings.workers(), clock)
    )
    try:
        with TestClient(build_app(settings, clock=clock), timeout=30) as client:
            workers.start()
            yield Api(client)
    finally:
        workers.stop()
        delete_prefix(settings.prefix)


def _timed_game(api: Api, players: list[Player], clock: Json) -> str:
    body = {"seats": len(players), "clock": clock, "entropy": "e"}
    created = api.ok(api.request("POST", "/api/games", player=players[0], json=body), 201)
    for player in players[1:]:
        api.join(player, created["game_id"], created["invite_code"])
    return str(created["game_id"])


def _wait_for_change(api: Api, game_id: str, version: int, seconds: float = 20) -> Json:
    deadline = time.monotonic() + seconds
    while (board := api.board(game_id))["version"] == version:
        assert time.monotonic() < deadline, f"nothing happened at version {version}"
        time.sleep(0.02)
    return board


def _wait_for_turn(api: Api, game_id: str, seat: int, seconds: float = 20) -> Json:
    """The board once `seat`'s turn is over."""
    deadline = time.monotonic() + seconds
    while (board := api.board(game_id))["phase"] == "playing" and (
        board["pending"]["seat"] == seat
    ):
        assert time.monotonic() < deadline, f"the turn of seat {seat} did not end"
        time.sleep(0.02)
    return board


def _wait_for_messages(
    sink: Sink, path: str, enough: Callable[[list[str]], bool], seconds: float = 20
) -> list[Json]:
    """The messages of `path` once their types are `enough`."""
    deadline = time.monotonic() + seconds
    while True:
        received = list(sink.received[path])
        kinds = [m["type"] for m in received]
        if enough(kinds):
            return received
        assert time.monotonic() < deadline, Counter(kinds)
        time.sleep(0.02)


def _reminds(received: Received) -> bool:
    return str(received.message["body"]).startswith("Your turn: the deadline is near")


def _subscribe(api: Api, sink: Sink, player: Player, **more: Json) -> None:
    body = {"webhook": {"url": sink.url(f"/{player.name}")}, **more}
    answer = api.ok(api.request("PUT", "/api/me/notifications", player=player, json=body))
    sink.secrets[f"/{player.name}"] = answer["webhook"]["secret"]


def test_a_game_whose_one_seat_never_acts_ends_with_its_turns_played_by_the_clock(
    api: Api, clock: FakeClock, sink: Sink
) -> None:
    ada, bea = api.create_player("Ada"), api.create_player("Bea")
    _subscribe(api, sink, bea)
    game_id = _timed_game(api, [ada, bea], {"per_move_hours": 24, "hand_over_after": 2})
    rng = random.Random(3)
    seats = {api.board(game_id, p)["viewer"]: p for p in (ada, bea)}
    silent = api.board(game_id, bea)["viewer"]
    timeouts = 0
    board = api.board(game_id)
    while board["phase"] == "playing":
        pending = board["pending"]["seat"]
        assert board["clock"]["running"] == pending
        if pending == silent:
            behind = board["clock"]["seats"][silent]["timeouts"]
            assert behind == timeouts, "every turn of the silent seat so far timed out"
            clock.advance(61 if behind >= 2 else DAY + 1)  # a minute once handed over
            board = _wait_for_turn(api, game_id, silent)
            timeouts += 1
            continue
        mine = api.board(game_id, seats[pending])
        sent = api.send(game_id, seats[pending], mine["version"],
                        [rng.choice(mine["legal_commands"])])  # fmt: skip
        api.ok(sent)
        clock.advance(600)
        board = api.board(game_id)
    record = api.record(game_id)
    assert all(check.ok for check in audit(json.dumps(record).encode()))
    by_seat = [(c["seat"], c["by"]) for c in record["commands"] if c["kind"] == "commands"]
    assert {by for seat, by in by_seat if seat == silent} == {"clock:greedy"}
    assert {by for seat, by in by_seat if seat != silent} == {""}
    turns = [seat for n, (seat, _) in enumerate(by_seat) if n == 0 or by_seat[n - 1][0] != seat]
    steps = api.ok(api.request("GET", f"/api/games/{game_id}/replay"))["steps"]
    played = {(s["event"]["seat"], s["by"]) for s in steps if s["event"]["type"] == "card_played"}
    assert played == {(silent, "clock:greedy"), (1 - silent, "")}, "the replay says so"
    assert turns.count(silent) == timeouts
    assert board["clock"]["seats"][silent]["timeouts"] == timeouts
    told = _wait_for_messages(sink, "/Bea", lambda kinds: "game.ended" in kinds)
    assert [m["type"] for m in told].count("turn.timed_out") == timeouts, "once a turn"
    assert sink.bad_signatures == 0
    first = next(message for message in told if message["type"] == "turn.timed_out")
    assert any("ran out: the greedy bot played" in line for line in first["happened"])
    assert board["clock"]["running"] is None and board["clock"]["deadline"] is None


def test_a_seat_that_plays_in_time_banks_what_it_leaves_up_to_the_most_its_bank_may_hold(
    api: Api, clock: FakeClock
) -> None:
    ada, bea = api.create_player("Ada"), api.create_player("Bea")
    setting = {"per_move_hours": 10, "bank_hours": 2, "max_bank_hours": 5}
    game_id = _timed_game(api, [ada, bea], setting)
    by_seat = {api.board(game_id, p)["viewer"]: p for p in (ada, bea)}
    board = api.board(game_id)
    first = board["pending"]["seat"]
    started = datetime.fromisoformat(board["clock"]["turn_started"])
    assert datetime.fromisoformat(board["clock"]["deadline"]) == started + timedelta(hours=12)
    clock.advance(4 * 3600)  # four of ten hours: six left, the bank may take three more
    while (board := api.board(game_id, by_seat[first]))["pending"]["seat"] == first:
        api.ok(api.send(game_id, by_seat[first], board["version"], [board["legal_commands"][0]]))
    assert board["clock"]["seats"][first]["bank_seconds"] == 5 * 3600
    second = board["pending"]["seat"]
    clock.advance(11 * 3600)  # an hour over: drawn from the bank
    while (board := api.board(game_id, by_seat[second]))["pending"]["seat"] == second:
        api.ok(api.send(game_id, by_seat[second], board["version"], [board["legal_commands"][0]]))
    assert board["clock"]["seats"][second]["bank_seconds"] == 1 * 3600
    # The list follows the game by the workers' delay (docs/api.md): wait for this version.
    deadline = time.monotonic() + 10
    while (mine := api.ok(api.request("GET", "/api/me/games", player=by_seat[first])))[0][
        "version"
    ] < board["version"] and time.monotonic() < deadline:
        time.sleep(0.02)
    assert mine[0]["your_decision"] and mine[0]["clock"]["deadline"] == board["clock"]["deadline"]
    steps = api.ok(api.request("GET", f"/api/games/{game_id}/replay"))["steps"]
    assert steps[-1]["view"]["clock"] == board["clock"], "the replay shows the clocks too"


def test_the_player_is_reminded_before_the_deadline_at_the_hours_they_chose(
    api: Api, clock: FakeClock, sink: Sink, pushes: PushService
) -> None:
    """By webhook and by Web Push alike."""
    ada, bea = api.create_player("Ada"), api.create_player("Bea")
    devices = {}
    for player in (ada, bea):
        _subscribe(api, sink, player, reminder_hours=[3, 1])
        devices[player.name] = pushes.add(Device())
        body = devices[player.name].subscription(pushes)
        api.ok(api.request("POST", "/api/me/push", player=player, json=body), 201)
    game_id = _timed_game(api, [ada, bea], {"per_move_hours": 24})
    board = api.board(game_id)
    name = {api.board(game_id, p)["viewer"]: p.name for p in (ada, bea)}[board["pending"]["seat"]]
    path = f"/{name}"
    before = len(sink.wait(path, 2))  # game.started, turn.started
    clock.advance(21 * 3600 + 1)  # three hours before the deadline
    reminded = sink.wait(path, before + 1)[-1]
    assert (
        reminded["type"] == "turn.reminder" and reminded["deadline"] == board["clock"]["deadline"]
    )
    assert reminded["asked"]["seat"] == board["pending"]["seat"]
    clock.advance(2 * 3600)
    assert sink.wait(path, before + 2)[-1]["type"] == "turn.reminder"
    assert len({*sink.ids[path]}) == len(sink.ids[path]), "two reminders, two ids"
    device = devices[name].path
    assert pushes.until(lambda: sum(_reminds(r) for r in pushes.received[device]) == 2)
    assert api.board(game_id)["version"] == board["version"], "no timeout before the deadline"


def test_a_timeout_that_meets_a_game_that_moved_on_does_nothing(api: Api, clock: FakeClock) -> None:
    from workers.deadlines import timed_out

    ada, bea = api.create_player("Ada"), api.create_player("Bea")
    game_id = _timed_game(api, [ada, bea], {"per_move_hours": 1})
    board = api.board(game_id)
    by_seat = {api.board(game_id, p)["viewer"]: p for p in (ada, bea)}
    player = by_seat[board["pending"]["seat"]]
    mine = api.board(game_id, player)
    api.ok(api.send(game_id, player, mine["version"], [mine["legal_commands"][0]]))
    clock.advance(3600 + 1)  # the first version's deadline: passed
    now = api.board(game_id)["version"]
    assert timed_out(game_id, board["version"]) == "moved on"
    assert timed_out(game_id, now + 1) == "moved on"
    assert api.board(game_id)["version"] >= now  # (the current turn's own timer may fire)
    record = api.record(game_id)
    assert all(c["first_version"] > board["version"] for c in record["commands"] if c["by"])


def test_a_timer_that_comes_before_its_deadline_does_nothing(api: Api, clock: FakeClock) -> None:
    """As when a deadline moved after its timer was set: the job checks the time again."""
    from workers.deadlines import timed_out

    ada, bea = api.create_player("Ada"), api.create_player("Bea")
    game_id = _timed_game(api, [ada, bea], {"per_move_hours": 1})
    version = api.board(game_id)["version"]
    clock.advance(3599)
    assert timed_out(game_id, version) == "not due"
    assert api.board(game_id)["version"] == version


def test_a_deadline_fired_twice_plays_the_turn_once(api: Api, clock: FakeClock) -> None:
    """As when two workers fire one timer, or a worker dies between enqueueing its job and
    marking it fired: the job runs twice, the turn is played once."""
    from workers.deadlines import timed_out

    ada, bea = api.create_player("Ada"), api.create_player("Bea")
    game_id = _timed_game(api, [ada, bea], {"per_move_hours": 1})
    board = api.board(game_id)
    clock.advance(3601)
    for _ in range(2):  # the embedded workers' own firing may come first, or between
        assert timed_out(game_id, board["version"]) in {"played", "moved on"}
    _wait_for_change(api, game_id, board["version"])
    time.sleep(0.3)  # the loop's own firing, if it came second, has run too
    record = api.record(game_id)
    clocked = [c for c in record["commands"] if c["by"] == "clock:greedy"]
    assert [c["first_version"] for c in clocked] == [board["version"] + 1]


@pytest.mark.parametrize(
    ("clock_setting", "field"),
    [
        ({"per_move_hours": 0}, "per_move_hours"),
        ({"per_move_hours": -1}, "per_move_hours"),
        ({"per_move_hours": 24 * 61}, "per_move_hours"),
        ({"per_move_hours": 1, "bank_hours": 3, "max_bank_hours": 2}, "clock.max_bank_hours"),
        ({"per_move_hours": 1, "hand_over_after": 0}, "hand_over_after"),
        ({"per_move_hours": 1, "on_timeout": "oracle"}, "on_timeout"),
        ({"per_move_hours": 1, "tick": 1}, "tick"),
        ({}, "per_move_hours"),
    ],
)
def test_a_clock_that_cannot_be_is_refused_naming_its_field_and_creates_nothing(
    api: Api, clock_setting: Json, field: str
) -> None:
    ada = api.create_player("Ada")
    body = {"seats": 2, "clock": clock_setting}
    answer = api.request("POST", "/api/games", player=ada, json=body)
    assert answer.status_code in (400, 422), answer.text
    assert field in answer.text
    assert api.ok(api.request("GET", "/api/me/games", player=ada)) == []


def test_a_player_on_vacation_has_their_clocks_stand_still_and_the_others_see_until_when(
    api: Api, clock: FakeClock
) -> None:
    ada, bea = api.create_player("Ada"), api.create_player("Bea")
    game_id = _timed_game(api, [ada, bea], {"per_move_hours": 24})
    board = api.board(game_id)
    seat = board["pending"]["seat"]
    away = {api.board(game_id, p)["viewer"]: p for p in (ada, bea)}[seat]
    started = datetime.fromisoformat(board["clock"]["turn_started"])
    clock.advance(3600)
    went = api.ok(api.request("POST", "/api/me/vacation", player=away, json={"days": 3}))
    assert went["until"] == _iso(clock.now + timedelta(days=3)) and went["used_days"] == 3
    seen = api.board(game_id)["clock"]
    assert seen["seats"][seat]["away_until"] == went["until"], "the others see until when"
    deadline = started + timedelta(hours=24, days=3)
    assert datetime.fromisoformat(seen["deadline"]) == deadline
    clock.advance(25 * 3600)  # the turn's own day is over, but its player is away
    time.sleep(0.5)
    assert api.board(game_id)["version"] == board["version"], "no timeout on vacation"
    clock.advance(DAY)  # back a day early: the clock runs again from now
    back = api.ok(api.request("DELETE", "/api/me/vacation", player=away))
    assert back["until"] is None and 2 < back["used_days"] < 2.1
    seen = api.board(game_id)["clock"]
    assert seen["seats"][seat]["away_until"] is None
    on_vacation = timedelta(hours=25 + 24)  # it stood still that long
    assert datetime.fromisoformat(seen["deadline"]) == started + timedelta(hours=24) + on_vacation
    clock.advance(DAY)
    after = _wait_for_turn(api, game_id, seat)
    assert after["version"] > board["version"], "the moved deadline is kept"


def test_vacations_are_limited_to_the_years_allowance_and_one_at_a_time(
    api: Api, clock: FakeClock
) -> None:
    ada = api.create_player("Ada")
    vacation = "/api/me/vacation"
    assert api.ok(api.request("GET", vacation, player=ada)) == {
        "allowance_days": 30, "used_days": 0, "until": None,
    }  # fmt: skip
    too_long = api.request("POST", vacation, player=ada, json={"days": 31})
    assert too_long.status_code == 400 and "days" in too_long.text
    api.ok(api.request("POST", vacation, player=ada, json={"days": 20}))
    again = api.request("POST", vacation, player=ada, json={"days": 1})
    assert again.status_code == 422 and "already" in again.text
    clock.advance(20 * DAY)  # it is over: twenty days used this year
    assert api.ok(api.request("DELETE", vacation, player=ada))["used_days"] == 20
    over = api.request("POST", vacation, player=ada, json={"days": 11})
    assert over.status_code == 422 and "left this year" in over.text


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def test_a_timed_table_that_waits_shows_its_clock_and_no_deadline(api: Api) -> None:
    ada = api.create_player("Ada")
    body = {"seats": 3, "clock": {"per_move_hours": 12, "bank_hours": 1}}
    created = api.ok(api.request("POST", "/api/games", player=ada, json=body), 201)
    board = api.board(created["game_id"], ada)
    assert board["phase"] == "waiting"
    assert board["clock"]["running"] is None and board["clock"]["deadline"] is None
    assert board["clock"]["per_move_seconds"] == 12 * 3600
    mine = api.ok(api.request("GET", "/api/me/games", player=ada))
    assert mine[0]["clock"]["running"] is None
    assert api.ok(api.request("GET", f"/api/games/{created['game_id']}/replay"))["steps"]

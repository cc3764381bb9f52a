"""A seat handed to a bot for good (resigned, R7) after its turn's timer was set: when that
deadline passes, the clock appends nothing and counts no timeout for the seat; the bot plays
it instead, as the resignation's own follow-up (`workers.jobs.handed_over`) does. The race:
the resignation writes the hand-over, then enqueues its follow-up; the deadline passes before
that follow-up plays, and the timer's job (`workers.deadlines.timed_out`) finds the seat a
bot's. All time comes from the clock tests' fake clock; the timers live in the store."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from datetime import datetime

import pytest
from litestar.testing import TestClient
from rq.job import Job, JobStatus

from server.config.settings import Settings
from store.timers import Timer, due_op
from tests.server.client import Api
from tests.server.live import REDIS_URL, build_app, unique_prefix
from tests.workers.test_clocks import FakeClock, _timed_game, served_with_workers
from workers import jobs, runner
from workers.context import current
from workers.job_ids import job_id
from workers.jobs import handed_over


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture(params=["embedded", pytest.param("redis", marks=pytest.mark.redis)])
def api(
    request: pytest.FixtureRequest, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Api]:
    """The embedded server with its workers; or the server on the real Redis with the
    workers (RQ, the timers in Redis) beside it, in this process so that they share the fake
    clock (as in `tests.workers.test_clocks`)."""
    monkeypatch.setattr(runner, "TIMER_SECONDS", 0.02)  # the timers looked at often
    if request.param == "embedded":
        with TestClient(build_app(Settings(), clock=clock), timeout=30) as client:
            yield Api(client)
        return
    prefix = unique_prefix("handover-clock")
    settings = Settings(redis_url=REDIS_URL, prefix=prefix)
    with served_with_workers(settings, clock) as api:
        yield api


@pytest.fixture
def held(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """The follow-ups of hand-overs, held back (RQ finds a job's function by its name when
    it runs it): the game and player of each, which the test lets play when it chooses."""
    calls: list[tuple[str, str]] = []

    def hold(game_id: str, player_id: str) -> str:
        calls.append((game_id, player_id))
        return "held"

    monkeypatch.setattr(jobs, "handed_over", hold)
    return calls


def _until(done: Callable[[], object], what: str, seconds: float = 20) -> None:
    """Wait until `done()` is true."""
    deadline = time.monotonic() + seconds
    while not done():
        assert time.monotonic() < deadline, what
        time.sleep(0.02)


def _timers_due(at: float) -> list[Timer]:
    """The timers set and not yet fired that are due by `at` (a timestamp)."""
    context = current()
    return context.store.run(due_op(context.accounts.prefix, at))


def _timeout_job(game_id: str, version: int) -> Job:
    """The job the timer of the turn at `version` enqueued when it fired."""
    queue = current().queue
    return Job.fetch(
        job_id(game_id, version, "timeout"),
        connection=queue.connection,
        serializer=queue.serializer,
    )


def test_a_seat_handed_to_a_bot_after_its_timer_was_set_is_not_timed_out_by_the_clock(
    api: Api, clock: FakeClock, held: list[tuple[str, str]]
) -> None:
    ada, bea = api.create_player("Ada"), api.create_player("Bea")
    game_id = _timed_game(api, [ada, bea], {"per_move_hours": 1})
    board = api.board(game_id)
    version, seat = board["version"], board["pending"]["seat"]
    resigning = {api.board(game_id, p)["viewer"]: p for p in (ada, bea)}[seat]
    due = datetime.fromisoformat(board["clock"]["deadline"]).timestamp()
    timer = Timer("timeout", game_id, version)
    _until(lambda: timer in _timers_due(due), "the turn's timer is set")
    resigned = api.ok(api.request("POST", f"/api/games/{game_id}/resign", player=resigning))
    assert (resigned["seat"], resigned["level"], resigned["version"]) == (seat, "greedy", version)
    _until(lambda: held == [(game_id, resigning.player_id)], "the resignation's follow-up ran")
    clock.advance(3600 + 1)  # the deadline passes before the bot has played
    _until(lambda: timer not in _timers_due(due), "the timer fired")
    job = _timeout_job(game_id, version)
    _until(lambda: job.get_status() in (JobStatus.FINISHED, JobStatus.FAILED), "its job ran")
    after = api.board(game_id)
    assert after["version"] == version, "the clock appended nothing"
    assert after["clock"]["seats"][seat]["timeouts"] == 0, "nor counted a timeout"
    assert (job.get_status(), job.return_value()) == (JobStatus.FINISHED, "a bot plays it")
    # The follow-up the resignation enqueued plays the seat: as the bot, not as the clock.
    assert handed_over(game_id, resigning.player_id) == "greedy played"
    after = api.board(game_id)
    assert after["version"] > version
    assert after["clock"]["seats"][seat]["timeouts"] == 0
    record = api.record(game_id)
    by = {c["by"] for c in record["commands"] if c["kind"] == "commands" and c["seat"] == seat}
    assert by == {"bot:greedy"}

"""A finished game analysed by the jobs its end enqueues, on a real Redis with `patrician serve`
and `patrician worker`: refused while the game is in play, then served as it is made, and
once made exactly what the analysis gives offline from the game's record (the same seed, the
same budget); a slice's job run again changes nothing and enqueues nothing."""

from __future__ import annotations

import os
import random
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import fakeredis
import httpx
import msgspec
import pytest
import redis
from litestar.testing import TestClient
from rq.job import JobStatus

from bots.analysis import Analyst, decisions
from domain.commands import Command
from projections.analysis import SLICE
from server.config.card_data import load_game_data
from server.config.settings import Settings
from store.analysis import GameAccuracy, accuracies_op, analysis_key
from tests.processes import stop_process
from tests.server.client import Api
from tests.server.live import _patrician, build_app
from tests.server.records import record_events
from tests.workers.test_inbox import PREFIX, Table
from workers.analysis import analyse_slice, enqueue_slice
from workers.settings import WorkerSettings, context_for, later_queue_of

ITERATIONS = 30
"""A small budget: the test checks what is made, bench/analysis.py how fast."""


@pytest.fixture
def analysing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Table, Api]]:
    """The stack's split: `patrician serve`, a worker of the jobs (`--role jobs`), a follower
    and a worker of the work nobody waits on (`--role later`), on a Redis of the test's own;
    the analysis can only be the last one's."""
    monkeypatch.setenv("PATRICIAN_ANALYSIS_ITERATIONS", str(ITERATIONS))
    monkeypatch.setenv("PATRICIAN_WORKER_ROLE", "jobs")  # the Table's worker
    running = Table(tmp_path)
    others: list[subprocess.Popen[bytes]] = []
    try:
        running.start()
        env = {**os.environ, "PATRICIAN_PREFIX": PREFIX}
        for role in ("follower", "later"):
            with (tmp_path / f"{role}.log").open("wb") as out:
                command = [*_patrician(), "worker", "--role", role, "--redis-url", running.url]
                others.append(subprocess.Popen(command, env=env, stdout=out, stderr=out))
        with httpx.Client(base_url=running.server.url, timeout=30) as client:
            yield running, Api(client)
    finally:
        for process in others:
            stop_process(process)
        running.stop()


def settings_of() -> WorkerSettings:
    return WorkerSettings(prefix=PREFIX, analysis_iterations=ITERATIONS)


def _analysis(api: Api, game_id: str) -> httpx.Response:
    return api.request("GET", f"/api/games/{game_id}/analysis")


def _done(api: Api, game_id: str) -> tuple[Any, list[str]]:
    """The analysis once made, and each status it was seen in on the way."""
    seen: list[str] = []
    deadline = time.monotonic() + 90
    while True:
        body = api.ok(_analysis(api, game_id))
        if not seen or seen[-1] != body["status"]:
            seen.append(body["status"])
        if body["status"] == "done":
            return body, seen
        assert time.monotonic() < deadline, body
        assert body["analysed"] <= body["decisions"]
        time.sleep(0.2)


@pytest.mark.redis
def test_a_finished_game_is_analysed_by_its_jobs_as_the_record_says_offline(
    analysing: tuple[Table, Api],
) -> None:
    running, api = analysing
    rng = random.Random(5)
    ann, bob = api.create_player("Ann"), api.create_player("Bob")
    created = api.create_game(ann, 2, entropy="a1")
    game_id = created["game_id"]
    api.join(bob, game_id, created["invite_code"], "b2")
    refused = _analysis(api, game_id)
    assert refused.status_code == 409 and refused.json()["error"] == "game_not_over"
    api.table_of(game_id, [ann, bob]).play_to_end(rng, whole_turns=0.8)

    served, statuses = _done(api, game_id)
    assert statuses[-1] == "done" and set(statuses) <= {"queued", "running", "done"}
    logs = {name: (running.tmp_path / f"{name}.log").read_text() for name in ("later", "worker")}
    assert "analyse_game" in logs["later"] and "analyse_game" not in logs["worker"], logs
    record = api.record(game_id)
    log = record_events(record)
    found = list(decisions(log))
    assert served["decisions"] == served["analysed"] == len(found)
    analyst = Analyst(iterations=ITERATIONS)
    offline = [j for d in found if (j := analyst.judge_decision(log, d, game_id)) is not None]
    assert [
        (j["version"], j["seat"], msgspec.convert(j["played"], Command), j["chance_after"])
        for j in served["judged"]
    ] == [(j.version, j.seat, j.played, j.after) for j in offline]
    assert [j["best"] for j in served["judged"]] == [msgspec.to_builtins(j.best) for j in offline]
    assert all(j["by"] == "" for j in served["judged"])  # both players played every turn
    for seat in served["seats"]:
        own = [j for j in offline if j.seat == seat["seat"]]
        assert seat["own_decisions"] == len(own)
        assert seat["blunders"] == sum(j.mark == "blunder" for j in own)
        assert 0 <= seat["accuracy"] <= 100
    assert served["thresholds"] == {"blunder": 0.15, "mistake": 0.1, "inaccuracy": 0.05}

    client = redis.Redis(port=running.redis.port)
    context = context_for(client, load_game_data(), settings_of())
    seats = {p["player"]: p["seat"] for p in api.board(game_id)["players"]}
    for player in (ann, bob):  # kept for their pages
        kept_for = context.store.run(accuracies_op(PREFIX, player.player_id))
        figures = served["seats"][seats[player.player_id]]
        assert kept_for == {game_id: GameAccuracy(figures["accuracy"], figures["own_decisions"])}
        page = api.ok(api.request("GET", f"/api/players/{player.player_id}/profile"))
        assert page["accuracy"] == {
            "games": 1, "own_decisions": figures["own_decisions"], "accuracy": figures["accuracy"],
        }  # fmt: skip
        assert page["games"][0]["accuracy"] == figures["accuracy"]
    kept = client.hgetall(analysis_key(PREFIX, game_id))
    assert len(kept) == 1 + -(-len(found) // SLICE)  # the count, and one field a slice
    queued = client.llen(f"rq:queue:{PREFIX}:patrician:later")
    assert analyse_slice(context, game_id, 0).endswith("were analysed")
    assert client.hgetall(analysis_key(PREFIX, game_id)) == kept
    assert client.llen(f"rq:queue:{PREFIX}:patrician:later") == queued

    # a game over before games were analysed: asking for its analysis begins it, once
    client.delete(analysis_key(PREFIX, game_id))
    asked = [api.ok(_analysis(api, game_id))["status"] for _ in range(3)]
    assert asked[0] == "queued"
    again, _statuses = _done(api, game_id)
    assert again["judged"] == served["judged"] and again["seats"] == served["seats"]
    assert client.hgetall(analysis_key(PREFIX, game_id)) == kept

    # a slice whose job was lost: asking for the analysis asks for that slice again
    client.hdel(analysis_key(PREFIX, game_id), f"from:{SLICE}")
    assert api.ok(_analysis(api, game_id))["status"] == "running"
    again, _statuses = _done(api, game_id)
    assert again["judged"] == served["judged"]
    assert client.hgetall(analysis_key(PREFIX, game_id)) == kept


def test_a_slice_whose_job_failed_all_its_tries_is_queued_again_when_asked_for() -> None:
    queue = later_queue_of(fakeredis.FakeRedis(), "t")
    enqueue_slice(queue, "g1", 6)
    enqueue_slice(queue, "g1", 6)  # asked again while it waits: one job
    assert queue.job_ids == ["analysis-6-g1"]
    job = queue.dequeue_any([queue], None, connection=queue.connection)
    assert job is not None
    failed = queue.failed_job_registry
    failed.add(job[0], ttl=600, exc_string="the store was away 5 times")
    job[0].set_status(JobStatus.FAILED)
    assert queue.job_ids == [] and failed.get_job_ids() == ["analysis-6-g1"]
    enqueue_slice(queue, "g1", 6)
    assert queue.job_ids == ["analysis-6-g1"] and failed.get_job_ids() == []


def test_a_server_that_analyses_no_game_says_so() -> None:
    settings = Settings(analysis_iterations=0, embedded_workers=False)
    with TestClient(build_app(settings), timeout=30) as client:
        api = Api(client)
        table = api.new_table(2, rng=random.Random(4))
        table.play_to_end(random.Random(4), whole_turns=0.8)
        body = api.ok(_analysis(api, table.game_id))
        assert (body["status"], body["decisions"], body["judged"]) == ("off", 0, [])

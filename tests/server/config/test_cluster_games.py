"""Whole games with the event store on a Redis Cluster (three masters on loopback) and the
jobs' queue on the plain Redis: the end-to-end games, the bots, the webhooks, the table talk,
a resignation, the live stream, the clocks and a vacation, the inboxes and their rebuild.
Between them they touch every family of keys (games, outbox feeds, accounts, tokens, lobby,
players' lists, inboxes, channels, deliveries, talk, handovers, clocks, timers, vacations,
stream tickets, signing keys), so a command whose keys cross slots fails here.

The checks are the other modules' (imported, run on this stack): a game passes on the
cluster what it passes on one Redis. The cluster is started once for the module; each test
has its key prefix, deleted afterwards on every master and on the queue's Redis.
"""

from __future__ import annotations

import asyncio
import os
import random
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from litestar.testing import TestClient

from server.config.card_data import load_game_data
from server.config.redis_clients import RedisSettingsError, redis_clients, store_client
from server.config.settings import Settings
from store.client import AsyncEventStore
from store.timers import Timer, due_op, set_timers_op
from tests.processes import stop_process
from tests.server.api import test_bot_seats as bot_seats
from tests.server.api import test_end_to_end as end_to_end
from tests.server.client import Api, Player
from tests.server.live import (
    REDIS_URL,
    LiveServer,
    _patrician,
    build_app,
    delete_prefix,
    redis_client,
    unique_prefix,
)
from tests.store.servers import REDIS_CLI, REDIS_SERVER, RedisClusterServers
from tests.workers import test_clocks as clocks
from tests.workers import test_play_by_webhook as webhooks
from tests.workers.sink import Sink
from workers import runner
from workers.settings import context_for

pytestmark = [pytest.mark.redis, pytest.mark.timeout(180)]

ALLOW = {"PATRICIAN_WEBHOOK_ALLOW": "127.0.0.1", "PATRICIAN_PUBLIC_URL": webhooks.PUBLIC}


@pytest.fixture(scope="module")
def cluster_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A three-master cluster for the module, named as the operator names one."""
    if REDIS_SERVER is None or REDIS_CLI is None:
        pytest.fail("the cluster tests need redis-server and redis-cli")
    with RedisClusterServers(tmp_path_factory.mktemp("cluster")) as cluster:
        yield f"redis+cluster://127.0.0.1:{cluster.port}"


def _delete_everywhere(prefix: str, cluster_url: str) -> None:
    """Delete the prefix's keys on every master (SCAN goes to each) and on the queue's Redis,
    RQ's registries of the prefix's queue among them (its jobs expire on their own)."""
    client = store_client(cluster_url)
    try:
        for key in list(client.scan_iter(match=f"{prefix}:*", count=1000)):
            client.delete(key)
        for key in list(client.scan_iter(match=f"{{{prefix}:*", count=1000)):
            client.delete(key)  # the timers' own hash tag
    finally:
        client.close()
    delete_prefix(prefix, REDIS_URL)
    queue = redis_client()
    try:
        for key in list(queue.scan_iter(match=f"rq:*:{prefix}:*", count=1000)):
            queue.delete(key)
    finally:
        queue.close()


def _keys_by_node(prefix: str, cluster_url: str) -> dict[str, int]:
    """How many of the prefix's keys each master holds."""
    client: Any = store_client(cluster_url)
    try:
        return {
            node.name: len(client.keys(f"*{prefix}*", target_nodes=node))
            for node in client.get_primaries()
        }
    finally:
        client.close()


@pytest.fixture(scope="module")
def stack(cluster_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """`patrician serve` on the cluster and two `patrician worker` processes beside it, the
    queue on the plain Redis (`--queue-url`)."""
    prefix = unique_prefix("cluster")
    directory = tmp_path_factory.mktemp("cluster-stack")
    server = LiveServer(
        prefix, directory, cluster_url, env={**ALLOW, "PATRICIAN_QUEUE_URL": REDIS_URL}
    )
    env = {**os.environ, **ALLOW, "PATRICIAN_PREFIX": prefix}
    env.pop("REDIS_URL", None)
    command = [*_patrician(), "worker", "--redis-url", cluster_url, "--queue-url", REDIS_URL]
    workers: list[subprocess.Popen[bytes]] = []
    try:
        server.start()
        for n in range(2):
            with (directory / f"worker{n}.log").open("wb") as out:
                workers.append(
                    subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT)
                )
        yield server
    finally:
        for worker in workers:
            worker.terminate()  # both at once, then each waited for (or killed)
        for worker in workers:
            stop_process(worker)
        server.stop()
        _delete_everywhere(prefix, cluster_url)


@pytest.fixture
def stack_http(stack: LiveServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=stack.url, timeout=30) as http:
        yield http


@pytest.fixture
def stack_api(stack_http: httpx.Client) -> Api:
    return Api(stack_http)


@pytest.fixture
def sink() -> Iterator[Sink]:
    with Sink() as receiver:
        yield receiver


# --- in process: the app on the cluster through Litestar's test client --------------------


@pytest.fixture
def cluster_prefix(cluster_url: str) -> Iterator[str]:
    """A fresh key prefix, its keys deleted afterwards on the cluster and on the queue's."""
    prefix = unique_prefix("cluster")
    yield prefix
    _delete_everywhere(prefix, cluster_url)


def test_a_random_game_on_a_cluster_ends_with_the_engines_result(
    cluster_url: str, cluster_prefix: str
) -> None:
    settings = Settings(redis_url=cluster_url, queue_url=REDIS_URL, prefix=cluster_prefix)
    assert settings.redis_cluster, "the scheme names a cluster"
    with TestClient(build_app(settings), timeout=30) as client:
        api = Api(client)
        _table, record = end_to_end.play_and_verify(
            api, 4, "towers", ("trade_routes", "delegates"), seed=11
        )
        assert record["seats"] == 4
        assert api.ok(api.request("GET", "/healthz")) == {"status": "ok", "redis": "ok"}
    spread = _keys_by_node(cluster_prefix, cluster_url)
    assert sum(1 for count in spread.values() if count) >= 2, spread


def test_seats_playing_at_once_on_a_cluster_finish_the_game(
    cluster_url: str, cluster_prefix: str
) -> None:
    """Concurrent requests share their round trips (the server's batches, scripts among
    them), which a cluster's pipelines send to each node."""
    settings = Settings(redis_url=cluster_url, queue_url=REDIS_URL, prefix=cluster_prefix)
    end_to_end.test_seats_playing_at_once_through_the_async_test_client_finish_the_game(
        build_app(settings)
    )


def test_scripts_sent_together_on_a_cluster_each_run_on_their_node(
    cluster_url: str, cluster_prefix: str
) -> None:
    """Concurrent operations share their round trips (the server's batches), scripts among
    them, which a cluster's pipeline sends to each node: the timers of eight games set at
    once are all there."""
    games = [f"g{n}" for n in range(8)]

    async def main() -> tuple[list[bool], list[Timer]]:
        client, follow, queue = redis_clients(cluster_url, cluster=True, queue_url=REDIS_URL)
        store = AsyncEventStore(client, prefix=cluster_prefix, pipelined=True, gather=0.01)
        try:
            done = await asyncio.gather(
                *(
                    store.run(
                        set_timers_op(cluster_prefix, game, 1, [(Timer("timeout", game, 1), n)])
                    )
                    for n, game in enumerate(games)
                )
            )
            return done, await store.run(due_op(cluster_prefix, len(games)))
        finally:
            await client.aclose()
            await follow.aclose()
            queue.close()

    done, due = asyncio.run(main())
    assert done == [True] * len(games)
    assert [timer.game_id for timer in due] == games


@pytest.fixture
def clock_api(
    cluster_url: str,
    cluster_prefix: str,
    clock: clocks.FakeClock,
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[Api]:
    """The server on the cluster with the workers beside it in this process (they share the
    fake clock), their queue on the plain Redis."""
    monkeypatch.setattr(runner, "TIMER_SECONDS", 0.02)
    settings = Settings(
        redis_url=cluster_url, queue_url=REDIS_URL, prefix=cluster_prefix,
        webhook_allow="127.0.0.1", public_url=webhooks.PUBLIC,
    )  # fmt: skip
    context = context_for(
        store_client(cluster_url), load_game_data(None), settings.workers(), clock,
        queue_client=redis_client(),
    )  # fmt: skip
    workers = runner.EmbeddedWorkers(context)
    try:
        with TestClient(build_app(settings, clock=clock), timeout=30) as client:
            workers.start()
            yield Api(client)
    finally:
        workers.stop()


@pytest.fixture
def clock() -> clocks.FakeClock:
    return clocks.FakeClock()


@pytest.fixture
def quiet_sink() -> Iterator[Sink]:
    with Sink(check_time=False) as receiver:  # the fake clock leaps
        yield receiver


def test_a_silent_seat_on_a_cluster_has_its_turns_played_by_the_clock(
    clock_api: Api, clock: clocks.FakeClock, quiet_sink: Sink
) -> None:
    clocks.test_a_game_whose_one_seat_never_acts_ends_with_its_turns_played_by_the_clock(
        clock_api, clock, quiet_sink
    )


def test_a_vacation_on_a_cluster_stops_the_clocks_and_moves_the_deadline(
    clock_api: Api, clock: clocks.FakeClock
) -> None:
    clocks.test_a_player_on_vacation_has_their_clocks_stand_still_and_the_others_see_until_when(
        clock_api, clock
    )


# --- live: `patrician serve` and `patrician worker` processes on the cluster --------------


def test_three_seats_on_a_cluster_play_a_game_each_acting_only_on_its_webhook(
    stack_api: Api, sink: Sink
) -> None:
    webhooks.test_three_seats_play_a_game_to_the_end_each_acting_only_on_its_own_webhook(
        stack_api, sink
    )


def test_worker_processes_on_a_cluster_play_the_bot_seats(stack_api: Api) -> None:
    me = stack_api.create_player("Ada")
    body = {"seats": 3, "bots": [{"level": "greedy"}, {"level": "random"}]}
    game = stack_api.ok(stack_api.request("POST", "/api/games", player=me, json=body), 201)
    played = bot_seats._play_against_bots(stack_api, me, game, random.Random(3))
    assert played["longest"] < 2.0
    bot_seats._check_record(
        stack_api, game["game_id"], {"Greedy bot": "bot:greedy", "Random bot": "bot:random"}
    )
    assert _inbox_phases(stack_api, me, game["game_id"], until="over") == ["over"]


def _inbox_phases(api: Api, player: Player, game_id: str, until: str) -> list[str]:
    """The game's phases in the player's inbox, once it shows `until` or after 20 s: the
    inbox is the worker's to write, after the append the board shows at once."""
    deadline = time.monotonic() + 20
    while True:
        mine = api.ok(api.request("GET", "/api/me/games", player=player))
        phases = [g["phase"] for g in mine if g["game_id"] == game_id]
        if phases == [until] or time.monotonic() > deadline:
            return phases
        time.sleep(0.05)


def test_talk_and_a_resignation_on_a_cluster_reach_the_other_seat(
    stack_api: Api, sink: Sink
) -> None:
    api = stack_api
    game_id, _board, mover, other = webhooks._two_seats_subscribed(api, sink)
    talk = f"/api/games/{game_id}/talk"
    api.ok(api.request("POST", talk, player=mover, json={"text": "your move"}), 201)
    webhooks._play_turn(api, game_id, mover, random.Random(2))
    turn = next(m for m in sink.wait(f"/{other.name}", 2) if m["type"] == "turn.started")
    assert [(m["name"], m["text"]) for m in turn["talk"]] == [(mover.name, "your move")]
    resigned = api.ok(api.request("POST", f"/api/games/{game_id}/resign", player=other))
    assert resigned["level"] == "greedy"
    deadline = time.monotonic() + 20
    while not (
        told := [m for m in sink.received[f"/{mover.name}"] if m["type"] == "seat.resigned"]
    ):
        assert time.monotonic() < deadline, "the other seat was not told of the resignation"
        time.sleep(0.05)
    assert told[0]["about_seat"] == resigned["seat"]


def test_the_live_stream_on_a_cluster_resumes_without_gap_or_repeat(
    stack: LiveServer, stack_api: Api, stack_http: httpx.Client
) -> None:
    end_to_end.test_the_live_stream_resumes_after_last_event_id_without_gap_or_repeat(
        stack, stack_api, stack_http
    )


def test_the_inboxes_on_a_cluster_are_rebuilt_from_every_masters_games(
    stack: LiveServer, cluster_url: str, stack_api: Api
) -> None:
    me = stack_api.create_player("Ada")
    body = {"seats": 2, "bots": [{"level": "random"}]}
    stack_api.ok(stack_api.request("POST", "/api/games", player=me, json=body), 201)
    env = {**os.environ, "PATRICIAN_PREFIX": stack.prefix}
    env.pop("REDIS_URL", None)
    command = [*_patrician(), "rebuild-projections", "--redis-url", cluster_url]
    done = subprocess.run(
        [*command, "--queue-url", REDIS_URL],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    games, players = _rebuilt(done.stdout)
    assert games >= 1 and players >= 2, done.stdout
    mine = stack_api.ok(stack_api.request("GET", "/api/me/games", player=me))
    assert len(mine) == 1


def _rebuilt(said: str) -> tuple[int, int]:
    """The counts of `rebuilt the inboxes of P players from G games`: (G, P)."""
    words = said.splitlines()[0].split()
    return int(words[-2]), int(words[4])


# --- settings --------------------------------------------------------------------------------


def test_a_cluster_is_named_by_its_scheme_or_by_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("REDIS_URL", "redis://127.0.0.1:7000")
    monkeypatch.setenv("PATRICIAN_REDIS_CLUSTER", "1")
    monkeypatch.setenv("PATRICIAN_QUEUE_URL", REDIS_URL)
    settings = Settings.from_environment()
    assert settings.redis_cluster and settings.queue_url == REDIS_URL
    plain = Settings(redis_url=REDIS_URL)
    assert not plain.redis_cluster and plain.queue_url == REDIS_URL, "one Redis holds both"
    on_cluster = Settings(redis_url="redis+cluster://127.0.0.1:7000")
    assert on_cluster.redis_cluster and on_cluster.queue_url is None
    with pytest.raises(RedisSettingsError, match="PATRICIAN_QUEUE_URL"):
        build_app(on_cluster)  # the queue the app needs is nowhere
    with pytest.raises(RedisSettingsError, match="plain Redis"):
        Settings(redis_url=REDIS_URL, queue_url="redis+cluster://127.0.0.1:7000")
    logged = Settings(redis_url="redis+cluster://:s3cret@h:7000", queue_url="redis://:s3cret@q")
    assert "s3cret" not in repr(logged), "settings get logged: no password in them"


def test_a_worker_on_a_cluster_without_a_queue_is_refused_in_one_line(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "PATRICIAN_QUEUE_URL")}
    command = [*_patrician(), "worker", "--redis-url", "redis+cluster://127.0.0.1:1"]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2, done.stderr
    assert "PATRICIAN_QUEUE_URL" in done.stderr and "Traceback" not in done.stderr

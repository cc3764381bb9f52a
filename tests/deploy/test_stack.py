"""`make up` for real: the whole stack of deploy/Procfile (Redis with deploy/redis.conf, two
API processes, four followers and a job worker, under honcho) in a temporary copy of its
settings; a person plays a game against a bot through the API, and its record audits with
`patrician audit`; `make down` leaves nothing behind. And the backup of docs/operations.md:
the AOF folder of the running Redis copied, a new `redis-server` started on the copy, a
`patrician serve` on that, and every game in it audits."""

from __future__ import annotations

import json
import random
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import redis

from evidence.audit import audit_result
from store.client import EventStore
from tests.deploy.stack import Stack
from tests.server.api.test_bot_seats import _play_against_bots
from tests.server.client import Api, Json
from tests.server.live import LiveServer, _patrician, unique_prefix
from tests.store.servers import RedisServer

pytestmark = pytest.mark.redis


@pytest.fixture
def stack(tmp_path: Path) -> Iterator[Stack]:
    stack = Stack(tmp_path, unique_prefix("stack"))
    try:
        yield stack
    finally:
        stack.stop()


def _up(stack: Stack) -> None:
    started = time.monotonic()
    up = stack.make("up")
    assert up.returncode == 0, f"{up.stdout}\n{up.stderr}"
    assert stack.url in up.stdout and str(stack.log) in up.stdout and "make down" in up.stdout
    assert sorted(stack.started()) == [
        "api.1",
        "follower-1.1",
        "follower-2.1",
        "follower-3.1",
        "follower-4.1",
        "later.1",
        "redis.1",
        "worker.1",
    ]
    print(f"make up: {time.monotonic() - started:.1f} s")


def _finished_game(api: Api, seats: int, seed: int) -> Json:
    """A person against bots, played to the end through the API (the workers play the bots)."""
    me = api.create_player("Ada")
    bots = [{"level": "random"}] * (seats - 1)
    options = {"seats": seats, "bots": bots}
    game = api.ok(api.request("POST", "/api/games", player=me, json=options), 201)
    played = _play_against_bots(api, me, game, random.Random(seed))
    assert played["board"]["phase"] == "over"
    return game


def test_make_up_runs_the_whole_stack_whose_games_audit_and_make_down_stops_all_of_it(
    stack: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATRICIAN_ANALYSIS_ITERATIONS", "30")  # its games analysed, quickly
    _up(stack)
    again = stack.make("up")
    assert again.returncode == 0 and "already up" in again.stdout, again.stdout

    with httpx.Client(base_url=stack.url, timeout=30) as client:
        api = Api(client)
        game = _finished_game(api, seats=2, seed=1)
        record = client.get(f"/api/games/{game['game_id']}/record")
        keys = client.get("/api/keys")
        metrics = client.get("/metrics").text
    assert 'patrician_followed_notices_total{outcome="ok"}' in metrics, (
        "the API adds up the workers' counts"
    )
    assert record.status_code == keys.status_code == 200
    (stack.directory / "game.json").write_bytes(record.content)
    (stack.directory / "keys.json").write_bytes(keys.content)
    audited = subprocess.run(
        [*_patrician(), "audit", "game.json", "--keys", "keys.json"],
        cwd=stack.directory, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert audited.returncode == 0, audited.stdout + audited.stderr
    by = {command["by"] for command in json.loads(record.content)["commands"]}
    assert "bot:random" in by, "a worker played the bot's seat"

    with httpx.Client(base_url=stack.url, timeout=30) as client:  # analysed by the later line
        deadline = time.monotonic() + 60
        while (analysis := client.get(f"/api/games/{game['game_id']}/analysis").json())[
            "status"
        ] != "done":
            assert time.monotonic() < deadline, analysis
            time.sleep(0.3)
    assert analysis["analysed"] == analysis["decisions"] > 0 and analysis["judged"]
    lines = stack.log.read_text(errors="replace").splitlines()
    made_by = {line.split("|")[0].split()[-1] for line in lines if "analyse_game" in line}
    assert made_by == {"later.1"}, made_by

    store = redis.Redis(port=stack.redis_port, socket_timeout=5, decode_responses=True)
    try:
        assert _config(store, "appendonly") == "yes"
        assert _config(store, "appendfsync") == "always"
        assert Path(_config(store, "dir")).resolve() == stack.data.resolve()
    finally:
        store.close()
    assert list((stack.data / "appendonlydir").glob("*.incr.aof")), "the AOF in the data folder"

    down = stack.make("down")
    assert down.returncode == 0 and "down" in down.stdout, down.stdout + down.stderr
    assert stack.leftovers() == []


def _config(client: redis.Redis, name: str) -> str:
    return str(client.config_get(name)[name])


def _backup(port: int, into: Path) -> None:
    """The backup of docs/operations.md: automatic rewrites held off while the AOF folder is
    copied (a rewrite would replace its files under the copy), then allowed again."""
    client = redis.Redis(port=port, socket_timeout=5, decode_responses=True)
    try:
        before = _config(client, "auto-aof-rewrite-percentage")
        client.config_set("auto-aof-rewrite-percentage", 0)
        try:
            while int(client.info("persistence")["aof_rewrite_in_progress"]):
                time.sleep(0.1)
            folder = _config(client, "appenddirname")
            shutil.copytree(Path(_config(client, "dir")) / folder, into / folder)
        finally:
            client.config_set("auto-aof-rewrite-percentage", before)
    finally:
        client.close()


def test_a_copy_of_the_aof_of_a_running_stack_restores_every_game_and_each_audits(
    stack: Stack, tmp_path: Path
) -> None:
    _up(stack)
    with httpx.Client(base_url=stack.url, timeout=30) as client:
        api = Api(client)
        games = [_finished_game(api, seats=2, seed=2)]
        heads = {g["game_id"]: api.board(g["game_id"])["version"] for g in games}

        restored = tmp_path / "restored"
        restored.mkdir()
        _backup(stack.redis_port, restored)  # while the stack runs
        after = api.create_player("Late")  # a game begun after the copy is not in it
        options = {"seats": 2, "bots": [{"level": "random"}]}
        game_after = api.ok(api.request("POST", "/api/games", player=after, json=options), 201)

    conf = ["--appendonly", "yes", "--appendfsync", "always", "--aof-load-truncated", "yes"]
    with RedisServer(restored, *conf) as copy:
        url = f"redis://127.0.0.1:{copy.port}/0"
        store = redis.Redis(port=copy.port, socket_timeout=5)
        try:
            stored = sorted(EventStore(store, prefix=stack.prefix).game_ids())
        finally:
            store.close()
        assert stored == sorted(heads), "every game of the copy's time, none after"
        assert game_after["game_id"] not in stored
        env = {"PATRICIAN_SIGNING_KEY_FILE": str(stack.key_file)}
        with (
            LiveServer(stack.prefix, tmp_path, redis_url=url, env=env) as server,
            httpx.Client(base_url=server.url, timeout=30) as http,
        ):
            keys = http.get("/api/keys").content
            for game_id in stored:
                record = http.get(f"/api/games/{game_id}/record")
                assert record.status_code == 200, record.text
                result = audit_result(record.content, (), keys)
                assert result.ok, result
                assert json.loads(record.content)["head"]["version"] == heads[game_id]

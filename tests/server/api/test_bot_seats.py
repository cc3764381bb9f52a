"""Seats played by bots: a person creates a game with bots in the other seats and plays it to
the end; each bot decides within a second, through the command path, as its seat, and the
record says the bot acted. In the embedded server (the workers in its process) and against a
real Redis with `patrician worker` processes."""

from __future__ import annotations

import json
import os
import random
import subprocess
import time
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path

import pytest
import redis
from litestar.testing import TestClient
from rq import Worker

from domain.decide import turns_up_a_card
from domain.events import event_decoder
from evidence.audit import audit
from server.config.settings import Settings
from tests.server.client import Api, Json, Player
from tests.server.live import LiveServer, _patrician, build_app
from workers.settings import queue_of


def _play_against_bots(api: Api, me: Player, game: Json, rng: random.Random) -> Json:
    """Play the person's seat until the game ends; how long the bots took, at most."""
    deadline = time.monotonic() + 120
    waited_since = time.monotonic()
    longest = 0.0
    board = api.board(game["game_id"], me)
    version = board["version"]
    while board["phase"] != "over":
        assert time.monotonic() < deadline, "the game did not end"
        if board["version"] != version:
            version, waited_since = board["version"], time.monotonic()
        if board["pending"]["seat"] == board["viewer"]:
            api.send(game["game_id"], me, board["version"], [rng.choice(board["legal_commands"])])
            waited_since = time.monotonic()
        else:
            longest = max(longest, time.monotonic() - waited_since)
            time.sleep(0.01)
        board = api.board(game["game_id"], me)
    return {"board": board, "longest": longest}


def _check_record(api: Api, game_id: str, bots: dict[str, str]) -> None:
    record = api.record(game_id)
    assert all(check.ok for check in audit(json.dumps(record).encode())), "the audit holds"
    names = {p["player_id"]: p["name"] for p in record["players"]}
    by = {c["player_id"]: c["by"] for c in record["commands"] if c["kind"] == "commands"}
    for player_id, by_whom in by.items():
        expected = bots.get(names[player_id], "")
        assert by_whom == expected, (names[player_id], by_whom)


@pytest.fixture
def api() -> Iterator[Api]:
    """The embedded server with its workers in its process, as `make run` starts it."""
    with TestClient(build_app(Settings()), timeout=30) as client:
        yield Api(client)


def test_a_person_against_three_bots_plays_a_game_to_the_end(api: Api) -> None:
    me = api.create_player("Ada")
    game = api.ok(api.request("POST", "/api/games", player=me, json={
        "seats": 4, "bots": [{"level": "greedy"}, {"level": "random"}, {"level": "greedy"}],
    }), 201)  # fmt: skip
    board = api.board(game["game_id"], me)
    assert board["phase"] == "playing", "the bots filled the table"
    assert sorted(board["names"]) == ["Ada", "Greedy bot 1", "Greedy bot 3", "Random bot"]
    played = _play_against_bots(api, me, game, random.Random(1))
    assert played["longest"] < 1.0, "each bot decided within a second"
    bots = {"Greedy bot 1": "bot:greedy", "Greedy bot 3": "bot:greedy", "Random bot": "bot:random"}
    _check_record(api, game["game_id"], bots)


def test_the_search_bot_plays_its_seat_too(api: Api) -> None:
    me = api.create_player("Ada")
    body = {"seats": 2, "bots": [{"level": "ismcts"}]}
    game = api.ok(api.request("POST", "/api/games", player=me, json=body), 201)
    _play_against_bots(api, me, game, random.Random(2))
    _check_record(api, game["game_id"], {"Search bot": "bot:ismcts"})


def test_a_bot_plays_its_whole_turn_in_one_append_up_to_a_card_turned_up(api: Api) -> None:
    """A bot's turn is one append (one follow-up, one notification of what it did), not one a
    decision; it ends early only where a hidden card is turned up (R42), and the next append
    goes on with it."""
    me = api.create_player("Ada")
    body = {"seats": 3, "bots": [{"level": "greedy"}, {"level": "random"}]}
    game = api.ok(api.request("POST", "/api/games", player=me, json=body), 201)
    _play_against_bots(api, me, game, random.Random(4))
    record = api.record(game["game_id"])
    events = {e["version"]: event_decoder.decode(e["data"]) for e in record["events"]}
    appends = [c for c in record["commands"] if c["kind"] == "commands"]
    bots = [a for a in appends if a["by"].startswith("bot:")]
    assert any(len(a["commands"]) > 1 for a in bots), "turns of more than one decision"
    cut = 0
    for a, b in pairwise(appends):
        if a["by"].startswith("bot:") and b["seat"] == a["seat"]:
            played = [events[v] for v in range(a["first_version"], a["last_version"] + 1)]
            assert turns_up_a_card(played), f"the bot's turn was cut at {a['last_version']}"
            cut += 1
    assert cut < len(bots) / 2


def test_bots_cannot_take_every_seat(api: Api) -> None:
    me = api.create_player("Ada")
    body = {"seats": 2, "bots": [{"level": "greedy"}, {"level": "greedy"}]}
    answer = api.request("POST", "/api/games", player=me, json=body)
    assert answer.status_code == 422 and answer.json()["field"] == "bots"
    unknown = api.request(
        "POST", "/api/games", player=me, json={"seats": 2, "bots": [{"level": "x"}]}
    )
    assert unknown.status_code == 400


@pytest.mark.redis
@pytest.mark.timeout(180)
def test_worker_processes_play_the_bot_seats_against_a_real_redis(
    live_server: LiveServer, live_api: Api, tmp_path: Path
) -> None:
    env = {**os.environ, "PATRICIAN_PREFIX": live_server.prefix}
    env.pop("REDIS_URL", None)
    assert live_server.redis_url is not None
    command = [*_patrician(), "worker", "--redis-url", live_server.redis_url]
    workers = []
    for n in range(2):
        with (tmp_path / f"w{n}.log").open("wb") as out:
            workers.append(subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT))
    try:
        # What is timed is a bot's decision, not a worker process's start: wait for both.
        with redis.Redis.from_url(live_server.redis_url) as client:
            queue = queue_of(client, live_server.prefix)
            deadline = time.monotonic() + 60
            while len(Worker.all(connection=client, queue=queue)) < len(workers):
                assert time.monotonic() < deadline, "the workers did not come up"
                time.sleep(0.05)
        me = live_api.create_player("Ada")
        body = {"seats": 3, "bots": [{"level": "greedy"}, {"level": "random"}]}
        game = live_api.ok(live_api.request("POST", "/api/games", player=me, json=body), 201)
        played = _play_against_bots(live_api, me, game, random.Random(3))
        logs = "".join((tmp_path / f"w{n}.log").read_text() for n in range(2))
        assert played["longest"] < 2.0, logs[-3000:]
        _check_record(
            live_api, game["game_id"], {"Greedy bot": "bot:greedy", "Random bot": "bot:random"}
        )
    finally:
        for worker in workers:
            worker.terminate()
        for worker in workers:
            try:
                worker.wait(timeout=10)
            except subprocess.TimeoutExpired:
                worker.kill()

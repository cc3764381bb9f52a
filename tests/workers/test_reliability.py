"""The turns of each finished game are kept by the follow-up of its end, in a real worker
process on a Redis of the test's own, so that a player's page reads no finished game's log;
`patrician rebuild-projections` makes them again to the same bytes."""

from __future__ import annotations

import os
import random
import subprocess
import time
from typing import Any

import pytest

from store.reliability import turns_key
from tests.server.live import _patrician
from tests.workers.test_inbox import PREFIX
from tests.workers.test_ratings import _play


@pytest.mark.redis
def test_a_finished_games_turns_are_kept_at_its_end_and_the_rebuild_makes_the_same(
    table: Any,
) -> None:
    running, api = table
    rng = random.Random(5)
    ann, bob = api.create_player("Ann"), api.create_player("Bob")
    _result, seats = _play(api, [ann, bob], rng)
    key = turns_key(PREFIX)
    deadline = time.monotonic() + 30
    while not running.client.hlen(key):
        assert time.monotonic() < deadline, "the game's turns were never kept"
        time.sleep(0.1)
    kept = running.client.hgetall(key)
    record = api.ok(api.request("GET", f"/api/players/{ann.player_id}/profile"))["reliability"]
    assert record["games"] == 1 and record["turns"] > 0 and record["timed_out"] == 0
    running.client.delete(key)  # a page counts a game not kept from its log, the same
    again = api.ok(api.request("GET", f"/api/players/{ann.player_id}/profile"))["reliability"]
    assert again == record
    done = subprocess.run(
        [*_patrician(), "rebuild-projections", "--redis-url", running.url],
        env={**os.environ, "PATRICIAN_PREFIX": PREFIX}, capture_output=True, text=True,
        timeout=60, check=True,
    )  # fmt: skip
    assert "rebuilt the turns of 1 finished games" in done.stdout
    assert running.client.hgetall(key) == kept
    assert seats[0] in {ann.player_id, bob.player_id}

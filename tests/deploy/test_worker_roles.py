"""The worker processes of the stack: `patrician worker --role follower` (the Procfile's
follower lines) started before its Redis waits for it, sets up the outbox's consumer groups
once it answers, runs no jobs, and stops at once on SIGTERM; a role that does not exist is
refused in words, before anything is started."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
import redis

from store.keys import KeySpace
from tests.processes import free_port, stop_process
from tests.server.live import _patrician, unique_prefix
from tests.store.servers import RedisServer
from workers.follower import GROUP


def test_a_worker_role_that_does_not_exist_is_refused_in_words() -> None:
    refused = subprocess.run(
        [*_patrician(), "worker", "--redis-url", "redis://127.0.0.1:1/0", "--role", "boss"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert refused.returncode == 2
    assert "--role" in refused.stderr and "all, jobs, follower, later" in refused.stderr
    assert "Traceback" not in refused.stderr


@pytest.mark.redis
def test_a_follower_started_before_its_redis_waits_for_it_and_stops_on_sigterm(
    tmp_path: Path,
) -> None:
    port = free_port()
    prefix = unique_prefix("role")
    env = {**os.environ, "PATRICIAN_PREFIX": prefix, "PYTHONUNBUFFERED": "1"}
    env.pop("REDIS_URL", None)
    log = tmp_path / "follower.log"
    command = [*_patrician(), "worker", "--role", "follower"]
    command += ["--redis-url", f"redis://127.0.0.1:{port}/0"]
    with log.open("wb") as out:
        process = subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        time.sleep(3.0)  # it starts (its imports take a second or two) with no Redis to talk to
        assert process.poll() is None, log.read_text()
        with RedisServer(tmp_path, port=port) as server:
            client = redis.Redis(port=server.port, socket_timeout=5)
            feeds = KeySpace(prefix).outbox_keys()
            deadline = time.monotonic() + 30
            while not all(client.exists(feed) for feed in feeds):
                assert process.poll() is None, log.read_text()
                assert time.monotonic() < deadline, f"no consumer groups:\n{log.read_text()}"
                time.sleep(0.1)
            assert all(client.xinfo_groups(feed)[0]["name"] == GROUP.encode() for feed in feeds)
            assert client.smembers("rq:workers") == set(), "the follower runs no jobs"
            client.close()

            process.send_signal(signal.SIGTERM)
            assert process.wait(timeout=5) == 0, log.read_text()
    finally:
        stop_process(process)
    assert "Traceback" not in log.read_text()

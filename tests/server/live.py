"""Apps and servers for the server tests: the in-process app (embedded fakeredis or the real
Redis under a unique key prefix) and live `patrician serve` processes on free loopback ports.

Every live server binds 127.0.0.1 only, logs to a file the test can show, is waited for
through /healthz, and is stopped by whoever started it. Keys are deleted prefix by prefix.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import redis
from litestar import Litestar

from server.app import create_app
from server.config.settings import Settings
from server.ops.log_output import DELAY
from store.clock import Clock, system_clock
from tests.processes import Started, free_port, stop_process
from tests.server.client import Api
from tests.server.sealing import KEY_FILE

REDIS_URL = os.environ.get("PATRICIAN_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")


def unique_prefix(kind: str = "srv") -> str:
    return f"test-{kind}-{uuid.uuid4().hex[:12]}"


def build_app(settings: Settings | None = None, clock: Clock = system_clock) -> Litestar:
    """The app of `create_app` (the embedded store unless `settings` say otherwise; no game
    analysed, as tests/conftest.py says why)."""
    return create_app(settings or Settings(analysis_iterations=0), clock=clock)


def redis_client(url: str = REDIS_URL) -> redis.Redis:
    return redis.Redis.from_url(url, socket_timeout=5)


def redis_available(url: str = REDIS_URL) -> bool:
    client = redis_client(url)
    try:
        return bool(client.ping())
    except redis.exceptions.ConnectionError:
        return False
    finally:
        client.close()


def delete_prefix(prefix: str, url: str = REDIS_URL) -> int:
    """Delete every key of a test prefix; how many there were."""
    client = redis_client(url)
    try:
        keys = list(client.scan_iter(match=f"{prefix}:*", count=1000))
        for key in keys:
            client.delete(key)
        return len(keys)
    finally:
        client.close()


def _patrician() -> list[str]:
    script = Path(sys.executable).parent / "patrician"
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", "from server.cli.main import main; main()"]


class LiveServer(Started):
    """One `patrician serve` process against a Redis, under a key prefix; with `redis_url`
    None, on its embedded store with its workers in its process (as `make run` starts it)."""

    def __init__(
        self,
        prefix: str,
        log_dir: Path,
        redis_url: str | None = REDIS_URL,
        env: dict[str, str] | None = None,
    ) -> None:
        self.prefix = prefix
        self.env = env or {}
        self.redis_url = redis_url
        self.log_dir = log_dir
        self.port = 0
        self.process: subprocess.Popen[bytes] | None = None
        self.log_path = log_dir / f"serve-{uuid.uuid4().hex[:8]}.log"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 20.0, *, ready_status: int = 200) -> None:
        """Start and wait until /healthz answers `ready_status` (503: up, store out of reach)."""
        for _attempt in range(3):  # a free port may be taken before the server binds it
            self.port = free_port()
            # The processes of one deployment share one key file (the fixture key here).
            env = {"PATRICIAN_SIGNING_KEY_FILE": str(KEY_FILE), **os.environ, **self.env}
            env["PATRICIAN_PREFIX"] = self.prefix
            env["PYTHONUNBUFFERED"] = "1"
            env.pop("REDIS_URL", None)
            command = [*_patrician(), "serve", "--host", "127.0.0.1", "--port", str(self.port)]
            if self.redis_url is not None:
                command += ["--redis-url", self.redis_url, "--workers", "1"]
            with self.log_path.open("ab") as log:
                self.process = subprocess.Popen(
                    command, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=self.log_dir
                )
            if self._wait_healthy(timeout, ready_status):
                return
            self.stop()
        raise RuntimeError(f"patrician serve did not come up:\n{self.log()}")

    def _wait_healthy(self, timeout: float, status: int) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.process is not None
            if self.process.poll() is not None:
                return False
            try:
                answer = httpx.get(self.url + "/healthz", timeout=1.0)
                if answer.status_code == status == 200:
                    return bool(answer.json() == {"status": "ok", "redis": "ok"})
                if answer.status_code == status:
                    return True
            except httpx.TransportError:
                pass
            time.sleep(0.05)
        return False

    def stop(self) -> None:
        process, self.process = self.process, None
        stop_process(process)

    def log(self) -> str:
        time.sleep(2 * DELAY)  # the server writes its lines in batches (server.ops.log_output)
        try:
            return self.log_path.read_text(errors="replace")[-5000:]
        except OSError:
            return ""


def serving(
    kind: str,
    log_dir: Path,
    redis_url: str | None,
    env: dict[str, str] | None = None,
    timeout: float = 20.0,
) -> Iterator[LiveServer]:
    """A fixture's body: one `patrician serve` under a new key prefix (on its embedded store
    when `redis_url` is None), started, yielded, then stopped and its keys deleted."""
    prefix = unique_prefix(kind)
    server = LiveServer(prefix, log_dir, redis_url, env=env)
    try:
        server.start(timeout)
        yield server
    finally:
        server.stop()
        if redis_url is not None:
            delete_prefix(prefix, redis_url)


@contextmanager
def a_game_followed(url: str) -> Iterator[httpx.Response]:
    """A new two-seat table on the server at `url`, and its live stream open from its last
    version (a follower up to date: nothing to send it), as a page keeps it open."""
    with httpx.Client(base_url=url, timeout=10) as http:
        api = Api(http)
        game = api.create_game(api.create_player("Mary"), 2)
        path = f"/api/games/{game['game_id']}"
        version = api.ok(http.get(f"{path}/events"))["version"]
        with (
            httpx.Client(base_url=url, timeout=10) as follower,
            follower.stream("GET", f"{path}/stream?after={version}") as stream,
        ):
            assert stream.status_code == 200
            yield stream

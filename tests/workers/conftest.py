"""What the workers' tests share: a real SMTP server on loopback (aiosmtpd) that keeps what
it is sent (`tests.workers.mailbox.Inbox`), for the tests of e-mail; the embedded server whose
workers send to loopback, and a push service that takes its tokens, for the tests of Web Push
(a module may define its own `app` and `api`); and, for the tests under a fake clock, the
webhook sink and the push service that do not check the time (it leaps); and a server with
one worker process on a Redis server of the test's own (`table`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from aiosmtpd.controller import Controller
from litestar import Litestar
from litestar.testing import TestClient

from server.config.settings import Settings
from tests.processes import free_port
from tests.server.client import Api
from tests.server.live import build_app
from tests.workers.mailbox import Inbox
from tests.workers.push_service import PushService
from tests.workers.sink import Sink
from tests.workers.test_inbox import Table


@pytest.fixture
def table(tmp_path: Path) -> Iterator[tuple[Table, Api]]:
    """`patrician serve` and one `patrician worker` on a Redis server of the test's own
    (`tests.workers.test_inbox.Table`), and an API client of that server."""
    running = Table(tmp_path)
    try:
        running.start()
        with httpx.Client(base_url=running.server.url, timeout=30) as client:
            yield running, Api(client)
    finally:
        running.stop()


@pytest.fixture
def inbox() -> Iterator[tuple[Inbox, int]]:
    """The inbox and the port of its SMTP server, for as long as the test runs."""
    handler, port = Inbox(), free_port()
    controller = Controller(handler, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        yield handler, port
    finally:
        controller.stop()


PUBLIC = "https://play.example"
"""The public address of the push tests' server: the links of its notices."""


@pytest.fixture(scope="module")
def app() -> Iterator[TestClient[Litestar]]:
    """The embedded server (its push key made at start), its workers sending to loopback."""
    settings = Settings(public_url=PUBLIC, webhook_allow="127.0.0.1", rate_notifications=0)
    with TestClient(build_app(settings), timeout=30) as client:
        yield client


@pytest.fixture
def api(app: TestClient[Litestar]) -> Api:
    return Api(app)


@pytest.fixture
def service(api: Api) -> Iterator[PushService]:
    """A push service that takes the tokens of the module's `api` server (checking their
    time against the real clock)."""
    key = api.ok(api.request("GET", "/api/push/key"))["public_key"]
    with PushService(key) as pushes:
        yield pushes


@pytest.fixture
def sink() -> Iterator[Sink]:
    """A webhook sink for a test under a fake clock (a module may define its own)."""
    with Sink(check_time=False) as receiver:
        yield receiver


@pytest.fixture
def pushes(api: Api) -> Iterator[PushService]:
    """A push service that takes the tokens of the module's `api` server, under a fake
    clock."""
    key = api.ok(api.request("GET", "/api/push/key"))["public_key"]
    with PushService(key, check_time=False) as service:
        yield service

"""What the workers' tests share: a real SMTP server on loopback (aiosmtpd) that keeps what
it is sent (`tests.workers.mailbox.Inbox`), for the tests of e-mail; and, for the tests under
a fake clock, the webhook sink and the push service that do not check the time (it leaps)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from aiosmtpd.controller import Controller

from tests.processes import free_port
from tests.server.client import Api
from tests.workers.mailbox import Inbox
from tests.workers.push_service import PushService
from tests.workers.sink import Sink


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

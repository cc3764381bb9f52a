"""What the workers' tests share: a real SMTP server on loopback (aiosmtpd) that keeps what
it is sent (`tests.workers.mailbox.Inbox`), for the tests of e-mail."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from aiosmtpd.controller import Controller

from tests.processes import free_port
from tests.workers.mailbox import Inbox


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

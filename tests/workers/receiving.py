"""What the receivers of the tests on loopback share (the webhook sink, the push service): a
real HTTP server on 127.0.0.1 in a thread, whose first request that fails its checks is
remembered, so that every wait raises with what was wrong (and so does leaving it) rather
than a test waiting for a message that never counts."""

from __future__ import annotations

import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Self


class Receiver:
    def __init__(self, handler: type[BaseHTTPRequestHandler], poll: float = 0.5) -> None:
        self.failure: str | None = None
        """What was wrong with the first request that failed the checks (None: none did)."""
        self.told = False
        """Whether a wait raised with `failure` already (leaving then does not again)."""
        self.changed = threading.Condition()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.thread = threading.Thread(target=self.server.serve_forever, args=(poll,), daemon=True)

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def url(self, path: str) -> str:
        return f"{self.origin}{path}"

    def __enter__(self) -> Self:
        self.thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> None:
        self.leaving()
        self.server.shutdown()
        self.server.server_close()
        if kind is None and not self.told:
            self.check()  # a test that never waited is failed too

    def leaving(self) -> None:
        """What a receiver lets go before it stops (requests it holds)."""

    def check(self) -> None:
        """Fail (AssertionError) if a request failed the checks, saying what was wrong."""
        if self.failure is not None:
            self.told = True
            raise AssertionError(self.failure)

    def until(self, ready: Callable[[], bool], timeout: float = 20.0) -> bool:
        """Wait until `ready()` (False after `timeout`), failing at once if a request fails
        the checks meanwhile."""
        with self.changed:
            self.changed.wait_for(lambda: self.failure is not None or ready(), timeout)
        self.check()
        return ready()

"""A webhook receiver for the tests and the benchmark: a real HTTP server on loopback that
checks each delivery's Standard Webhooks signature with the player's secret and keeps what
arrived, per path (one path per player)."""

from __future__ import annotations

import hmac
import json
import threading
import time
from collections import defaultdict
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from standardwebhooks.webhooks import Webhook, WebhookVerificationError


class Sink:
    def __init__(self, status: int = 200, *, check_time: bool = True) -> None:
        """`check_time`: whether a timestamp must be near the real time (as Standard
        Webhooks asks); not under a test's fake clock, whose time leaps."""
        self.status = status
        self.check_time = check_time
        self.secrets: dict[str, str] = {}
        self.received: dict[str, list[dict[str, Any]]] = defaultdict(list)
        self.ids: dict[str, list[str]] = defaultdict(list)
        self.arrived: dict[str, list[float]] = defaultdict(list)
        self.bad_signatures = 0
        self.changed = threading.Condition()
        self.holds = 0
        """How many of the next requests are held (see `hold`)."""
        self.held: list[str] = []
        """The `webhook-id` of each request held, in order."""
        self.released = threading.Event()
        sink = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length", "0")))
                if sink._receive(self.path, body, dict(self.headers.items())):
                    sink.released.wait()
                    return  # never answered: the connection is closed
                self.send_response(sink.status)
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                return None

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}{path}"

    def __enter__(self) -> Sink:
        self.thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.released.set()
        self.server.shutdown()
        self.server.server_close()

    def hold(self, count: int = 1) -> None:
        """Hold the next `count` requests with a good signature: each is kept as any other
        (it reached the receiver), but never answered, its sender left waiting for an answer
        until `release` (then the connection is closed without one): a receiver that
        hangs, to kill a worker while it waits."""
        with self.changed:
            self.holds += count

    def release(self) -> None:
        """Close the connections of the requests held, unanswered."""
        self.released.set()

    def wait_held(self, count: int = 1, timeout: float = 20.0) -> list[str]:
        """The `webhook-id` of the first `count` requests held, once they are held."""
        with self.changed:
            if not self.changed.wait_for(lambda: len(self.held) >= count, timeout):
                raise AssertionError(f"{len(self.held)} of {count} requests held")
            return list(self.held[:count])

    def _receive(self, path: str, body: bytes, headers: dict[str, str]) -> bool:
        """Keep a request; whether it is held."""
        lowered = {k.lower(): v for k, v in headers.items()}
        secret = self.secrets.get(path)
        try:
            if secret is None:
                raise WebhookVerificationError("no secret for this path")
            if self.check_time:
                Webhook(secret).verify(body, lowered)
            else:
                self._verify_signature(secret, body, lowered)
        except WebhookVerificationError:
            self.bad_signatures += 1
            return False
        with self.changed:
            self.received[path].append(json.loads(body))
            self.ids[path].append(lowered["webhook-id"])
            self.arrived[path].append(time.monotonic())
            held = self.holds > 0
            if held:
                self.holds -= 1
                self.held.append(lowered["webhook-id"])
            self.changed.notify_all()
            return held

    @staticmethod
    def _verify_signature(secret: str, body: bytes, headers: dict[str, str]) -> None:
        """What `Webhook.verify` checks but the timestamp's distance from the real time."""
        moment = datetime.fromtimestamp(int(headers["webhook-timestamp"]), UTC)
        expected = Webhook(secret).sign(headers["webhook-id"], moment, body.decode())
        given = headers["webhook-signature"].split(" ")
        if not any(hmac.compare_digest(expected, sig) for sig in given):
            raise WebhookVerificationError("no matching signature")

    def wait(self, path: str, count: int, timeout: float = 20.0) -> list[dict[str, Any]]:
        """The first `count` messages of `path`, once they have arrived."""
        deadline = time.monotonic() + timeout
        with self.changed:
            while len(self.received[path]) < count:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"{path}: {len(self.received[path])} of {count} came")
                self.changed.wait(left)
            return list(self.received[path][:count])

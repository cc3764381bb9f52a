"""A webhook receiver for the tests and the benchmark: a real HTTP server on loopback that
checks each delivery's Standard Webhooks signature with the player's secret, and that the id
signed is the notification's own (docs/notifications.md, "The webhook"), and keeps what
arrived, per path (one path per player).

A delivery that fails either check is answered 400 and not kept, and the first one fails the
test at once: every wait on the receiver raises with what was wrong (and so does leaving it),
rather than a game left waiting for a message that never counts."""

from __future__ import annotations

import hmac
import json
import re
import threading
import time
from collections import defaultdict
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler
from typing import Any

from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from tests.workers.receiving import Receiver


class Sink(Receiver):
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
        self.holds = 0
        """How many of the next requests are held (see `hold`)."""
        self.held: list[str] = []
        """The `webhook-id` of each request held, in order."""
        self.released = threading.Event()
        sink = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length", "0")))
                held = sink._receive(self.path, body, dict(self.headers.items()))
                if held is None:  # it failed the checks
                    self.send_response(400)
                    self.send_header("content-length", "0")
                    self.end_headers()
                    return
                if held:
                    sink.released.wait()
                    return  # never answered: the connection is closed
                self.send_response(sink.status)
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                return None

        super().__init__(Handler)

    def leaving(self) -> None:
        self.released.set()

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
        if not self.until(lambda: len(self.held) >= count, timeout):
            raise AssertionError(f"{len(self.held)} of {count} requests held")
        with self.changed:
            return list(self.held[:count])

    def _receive(self, path: str, body: bytes, headers: dict[str, str]) -> bool | None:
        """Keep a request; whether it is held (None: it failed the checks, and is not kept)."""
        lowered = {k.lower(): v for k, v in headers.items()}
        wrong = self._wrong(path, body, lowered)
        if wrong is not None:
            with self.changed:
                self.bad_signatures += 1
                if self.failure is None:
                    self.failure = f"a webhook to {path}: {wrong}"
                self.changed.notify_all()
            return None
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

    def _wrong(self, path: str, body: bytes, headers: dict[str, str]) -> str | None:
        """What is wrong with a delivery (None: nothing): its signature must hold for its
        `webhook-id` with the path's secret, and that id must be its notification's."""
        secret = self.secrets.get(path)
        if secret is None:
            return "no secret is known for this path (the test subscribed no player to it)"
        sent_as = headers.get("webhook-id", "")
        try:
            document = json.loads(body)
            own = notice_id(document)
        except (ValueError, KeyError, TypeError) as error:
            return f"its body is no notification document ({error!r}): {body[:200]!r}"
        what = f"{document['type']} of game {document['game_id']} at version {document['version']}"
        try:
            if self.check_time:
                Webhook(secret).verify(body, headers)
            elif not _signed_for(secret, sent_as, body, headers):
                raise WebhookVerificationError("No matching signature found")
        except WebhookVerificationError as error:
            candidates = [own, *(c for c in _near(sent_as) if c != own)]
            signed = next((c for c in candidates if _signed_for(secret, c, body, headers)), None)
            if signed is not None and signed != sent_as:
                return (f"the {what} was sent as webhook-id {sent_as!r} but signed for the id "
                        f"{signed!r}: its signature does not hold")  # fmt: skip
            return (f"the signature of the {what}, webhook-id {sent_as!r}, does not hold "
                    f"({error}; not for the notification's id {own!r} either)")  # fmt: skip
        if not (re.fullmatch(own, sent_as) if own.startswith("^") else sent_as == own):
            return (f"the {what} was sent and signed as webhook-id {sent_as!r}, which is not "
                    f"the notification's id {own.strip('^$')!r}")  # fmt: skip
        return None

    def wait(self, path: str, count: int, timeout: float = 20.0) -> list[dict[str, Any]]:
        """The first `count` messages of `path`, once they have arrived."""
        if not self.until(lambda: len(self.received[path]) >= count, timeout):
            raise AssertionError(f"{path}: {len(self.received[path])} of {count} came")
        with self.changed:
            return list(self.received[path][:count])


def notice_id(document: dict[str, Any]) -> str:
    """The id of the notification `document` is (docs/notifications.md, "The webhook"):
    `<type with - for .>-<version>-<game>-<seat or x>-webhook`, the game id written with `_`
    as `__` and `.` as `_d`; a reminder's with its minutes before the seat's `-webhook`, as
    a pattern (`^...$`: the document does not say them)."""
    kind = str(document["type"])
    game = str(document["game_id"]).replace("_", "__").replace(".", "_d")
    seat = "x" if document["seat"] is None else str(int(document["seat"]))
    stem = f"{kind.replace('.', '-')}-{int(document['version'])}-{game}-{seat}"
    if kind == "turn.reminder":
        return f"^{re.escape(stem)}-[0-9]+[ms]-webhook$"
    return f"{stem}-webhook"


def _near(sent_as: str) -> list[str]:
    """Ids a wrong signature may have been made for instead: the one sent with a job's
    suffix (quiet hours, a grace period) or without it."""
    stem = sent_as.removesuffix("-q").removesuffix("-g")
    return [stem, f"{stem}-q", f"{stem}-g"]


def _signed_for(secret: str, webhook_id: str, body: bytes, headers: dict[str, str]) -> bool:
    """Whether the signature holds for `webhook_id` (whatever the timestamp's distance from
    the real time)."""
    try:
        moment = datetime.fromtimestamp(int(headers["webhook-timestamp"]), UTC)
        expected = Webhook(secret).sign(webhook_id, moment, body.decode())
    except (KeyError, ValueError):
        return False
    given = headers.get("webhook-signature", "").split(" ")
    return any(hmac.compare_digest(expected, sig) for sig in given)

"""A Web Push service for the tests and the benchmark: a real HTTP server on loopback that
takes push messages as a browser vendor's push service does (RFC 8030), checks each one's
VAPID signature (RFC 8292) and its encryption for the subscribed browser (RFC 8291), and
keeps what arrived, per subscription path. `Device` is the browser's side of it: the keys
it makes when it subscribes, and its `PushSubscription.toJSON()`.

A message that fails a check is answered 400 (413 when too big) and not kept, and the first
one fails the test at once: every wait on the service raises with what was wrong (and so
does leaving it), rather than a test left waiting for a message that never counts."""

from __future__ import annotations

import base64
import json
import re
import secrets
import struct
import time
from collections import defaultdict
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

import http_ece
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from tests.workers.receiving import Receiver

HEADERS = {  # name: (form, whether needed, meaning) (RFC 8030 sect. 5, RFC 8188 sect. 2)
    "Content-Encoding": ("(?i)aes128gcm", True, "aes128gcm"),
    "TTL": ("[0-9]+", True, "a non-negative integer"),
    "Urgency": ("very-low|low|normal|high", False, "very-low, low, normal or high"),
    "Topic": ("[A-Za-z0-9_-]{1,32}", False, "1 to 32 characters of base64url"),
}
MAX_BODY = 4096
"""The largest body taken (RFC 8030 sect. 7.2: a push service takes at least 4096 bytes)."""


def b64url(data: bytes) -> str:
    """Base64url without padding, as browsers and VAPID write keys."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def point(key: ec.EllipticCurvePublicKey) -> bytes:
    """A P-256 public key as its uncompressed point (65 bytes, 0x04...)."""
    return key.public_bytes(Encoding.X962, PublicFormat.UncompressedPoint)


@dataclass
class Device:
    """What a browser makes when it subscribes to push: a key pair and an auth secret."""

    private_key: ec.EllipticCurvePrivateKey = field(
        default_factory=lambda: ec.generate_private_key(ec.SECP256R1())
    )
    auth: bytes = field(default_factory=lambda: secrets.token_bytes(16))
    path: str = field(default_factory=lambda: f"/push/{secrets.token_hex(12)}")

    @property
    def public_key(self) -> bytes:
        return point(self.private_key.public_key())

    @property
    def p256dh(self) -> str:
        return b64url(self.public_key)

    @property
    def auth_b64(self) -> str:
        return b64url(self.auth)

    def subscription(self, service: PushService, **extra: Any) -> dict[str, Any]:
        """As `PushSubscription.toJSON()` gives it (`extra`: e.g. `expirationTime=None`)."""
        keys = {"p256dh": self.p256dh, "auth": self.auth_b64}
        return {"endpoint": service.url(self.path), **extra, "keys": keys}


@dataclass
class Received:
    """A push message kept: its decrypted JSON, its headers, the VAPID claims it was sent
    with and when it arrived (`time.monotonic()`)."""

    message: dict[str, Any]
    ttl: int
    urgency: str | None
    topic: str | None
    claims: dict[str, Any]
    at: float


class Refused(Exception):
    """A check a push message failed: its status and what was wrong."""

    def __init__(self, wrong: str, status: int = 400) -> None:
        super().__init__(wrong)
        self.status = status


class PushService(Receiver):
    def __init__(
        self, vapid_public_key: str | None = None, status: int = 201, *, check_time: bool = True
    ) -> None:
        """`vapid_public_key`: the application server's key (base64url of its point) that
        every message must be signed with (None: any key). `status`: the answer to a
        message that passes the checks (see `answer`). `check_time`: whether the JWT's `exp`
        must be in the next 24 hours of the real time; not under a test's fake clock."""
        self.vapid_public_key = vapid_public_key
        self.status = status
        self.check_time = check_time
        self.devices: dict[str, Device] = {}
        self.gone: set[str] = set()
        self.answers: dict[str, tuple[int, int | None]] = {}
        self.received: dict[str, list[Received]] = defaultdict(list)
        self.requests: dict[str, int] = defaultdict(int)
        """How many requests came to each path, kept or not."""
        self.statuses: dict[str, list[int]] = defaultdict(list)
        """The status each request to a path was answered, in order."""
        service = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length", "0")))
                lowered = {k.lower(): v for k, v in self.headers.items()}
                status, header = service._receive(self.path, body, lowered)
                self.send_response(status)
                if header:
                    self.send_header(*header.split(": ", 1))
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                return None

        super().__init__(Handler, poll=0.05)  # `origin` is what a VAPID JWT's `aud` must be

    def add(self, device: Device) -> Device:
        with self.changed:
            self.devices[device.path] = device
            self.gone.discard(device.path)
        return device

    def forget(self, device: Device | str) -> None:
        """End a subscription: its path is answered 410 Gone from now on (no failure)."""
        path = device if isinstance(device, str) else device.path
        with self.changed:
            self.devices.pop(path, None)
            self.gone.add(path)

    def answer(self, path: str, status: int, times: int | None = None) -> None:
        """Answer the next `times` good messages to `path` with `status` (None: all of
        them), not keeping them unless it is a 2xx; a 429 or 503 with `Retry-After: 1`."""
        with self.changed:
            self.answers[path] = (status, times)

    def wait(self, path: str, count: int, timeout: float = 20.0) -> list[Received]:
        """The first `count` messages kept for `path`, once they have arrived."""
        if not self.until(lambda: len(self.received[path]) >= count, timeout):
            with self.changed:
                came = [r.message for r in self.received[path]]
                raise AssertionError(
                    f"{path}: {len(came)} of {count} messages kept ({came}); "
                    f"{self.requests[path]} requests, answered {self.statuses[path]}"
                )
        with self.changed:
            return list(self.received[path][:count])

    def _receive(self, path: str, body: bytes, headers: dict[str, str]) -> tuple[int, str]:
        """The status a request is answered and a header to say (`name: value`), keeping
        its message if it passes the checks."""
        with self.changed:
            self.requests[path] += 1
            device, gone = self.devices.get(path), path in self.gone
        try:
            if device is None and not gone:
                raise Refused("no device subscribed at this path (the test added none)", 404)
            kept = None if device is None else self._checked(device, body, headers)
        except Refused as refused:
            with self.changed:
                self.failure = self.failure or f"a push message to {path}: {refused}"
                return self._answered(path, refused.status)
        with self.changed:
            if kept is None:  # a subscription the test forgot: gone, as an expired one is
                return self._answered(path, 410)
            status, times = self.answers.get(path, (self.status, None))
            if times is not None:
                self.answers[path] = (status, times - 1)
                if times <= 1:
                    del self.answers[path]
            if 200 <= status < 300:
                self.received[path].append(kept)
                return self._answered(
                    path, status, f"location: {self.url(f'/m/{secrets.token_hex(8)}')}"
                )
            return self._answered(path, status, "retry-after: 1" if status in (429, 503) else "")

    def _answered(self, path: str, status: int, header: str = "") -> tuple[int, str]:
        """(Under `changed`.)"""
        self.statuses[path].append(status)
        self.changed.notify_all()
        return status, header

    def _checked(self, device: Device, body: bytes, headers: dict[str, str]) -> Received:
        """The message a request carries, once it passes the checks (else `Refused`)."""
        claims = self._vapid(headers.get("authorization", ""))
        for name, (form, needed, meaning) in HEADERS.items():
            value = headers.get(name.lower())
            if value is None and not needed:
                continue
            if value is None or not re.fullmatch(form, value):
                raise Refused(f"{name} {value!r} is not {meaning}")
        if len(body) > MAX_BODY:
            raise Refused(f"its body is {len(body)} bytes, over {MAX_BODY}", 413)
        rs, id_len = struct.unpack("!LB", body[16:21]) if len(body) >= 21 else (0, 0)
        if len(body) < 86 + 17 or id_len != 65 or body[21] != 4 or len(body) - 86 > rs:
            raise Refused(f"its body is no aes128gcm record from a P-256 key: {body[:24]!r}")
        try:
            plain = http_ece.decrypt(
                body, private_key=device.private_key, auth_secret=device.auth, version="aes128gcm"
            )
            message = json.loads(plain)
        except Exception as error:  # http_ece raises what cryptography and struct raise
            raise Refused(
                f"its body does not decrypt with the device's keys to JSON: {error!r}"
            ) from None
        if not isinstance(message, dict) or not all(
            isinstance(message.get(k), str) for k in ("title", "body", "url", "tag")
        ):
            raise Refused(f"its message is no object of string title, body, url, tag: {message}")
        if not re.match(r"/(?!/)", message["url"]):
            raise Refused(f"its url {message['url']!r} is not a path on the site")
        urgency, topic, at = headers.get("urgency"), headers.get("topic"), time.monotonic()
        return Received(message, int(headers["ttl"]), urgency, topic, claims, at)

    def _vapid(self, authorization: str) -> dict[str, Any]:
        """The claims of a `vapid t=<JWT>,k=<key>` header, once they pass the checks."""
        scheme, _, rest = authorization.partition(" ")
        parts = dict(p.strip().partition("=")[::2] for p in rest.split(","))
        if scheme.lower() != "vapid" or not parts.get("t") or not parts.get("k"):
            raise Refused(f"Authorization {authorization[:100]!r} is not `vapid t=...,k=...`")
        key_text, token = parts["k"], parts["t"]
        if self.vapid_public_key is not None and key_text != self.vapid_public_key:
            raise Refused(f"VAPID key {key_text!r} is not the server's {self.vapid_public_key!r}")
        try:
            key = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), unb64url(key_text))
            signed, _, signature = token.rpartition(".")
            header, claims = (json.loads(unb64url(part)) for part in signed.split("."))
            raw = unb64url(signature)
            if header.get("alg") != "ES256" or len(raw) != 64:
                raise ValueError(f"the JWT's header {header} is not ES256 or its signature not r|s")
            r, s = int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big")
            key.verify(encode_dss_signature(r, s), signed.encode(), ec.ECDSA(hashes.SHA256()))
        except InvalidSignature:
            raise Refused(f"the JWT's signature does not hold under k={key_text!r}") from None
        except (ValueError, AttributeError) as error:
            raise Refused(f"VAPID key or JWT malformed: {error!r}") from None
        if not isinstance(claims, dict):
            raise Refused(f"the JWT's claims {claims!r} are no object")
        if claims.get("aud") != self.origin:
            raise Refused(f"the JWT's aud {claims.get('aud')!r} is not {self.origin!r}")
        exp = claims.get("exp")
        if not isinstance(exp, int) or isinstance(exp, bool):
            raise Refused(f"the JWT's exp {exp!r} is no integer")
        now = time.time()
        if self.check_time and not now < exp <= now + 24 * 3600:
            raise Refused(f"the JWT's exp {exp} is not within 24 hours after now ({now:.0f})")
        sub = claims.get("sub")
        if not isinstance(sub, str) or not sub.startswith(("mailto:", "https:")):
            raise Refused(f"the JWT's sub {sub!r} is no mailto: or https: URL")
        return claims

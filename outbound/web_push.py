"""Web Push, as a push service takes a message for one browser: the server's VAPID key
(RFC 8292), the message encrypted for the browser's keys (RFC 8291, `aes128gcm`), and the
headers of the request (RFC 8030: `TTL`, `Urgency`, `Topic`).

The key identifies this server to every push service; a browser subscribes with its public
half (`applicationServerKey`), and a push service accepts messages for that subscription only
when signed with the private half. So every process that sends pushes signs with the same key:
read from its file in production (`PATRICIAN_PUSH_KEY_FILE`, written by `patrician
push-keygen`; without one, push is off), made at start by the embedded server, whose workers
run in its process. A new key makes every subscription made for the old one useless: the
page subscribes again when it finds that the key it subscribed with is no longer the
server's (docs/notifications.md, "Push").

Maintained libraries do the cryptography: `py_vapid` signs the token, `http_ece` encrypts.
Sending is the webhooks' sender's (`workers.webhook_sending`), which checks every address
against SSRF as it connects.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import os
import urllib.parse
from datetime import datetime, timedelta
from pathlib import Path

import http_ece
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import (
    Encoding,
    NoEncryption,
    PrivateFormat,
    PublicFormat,
    load_pem_private_key,
)
from py_vapid import Vapid02, VapidException

MAX_PLAINTEXT = 3993
"""The longest message a push service must take: 4096 bytes of body, less the `aes128gcm`
header (86 bytes), the padding delimiter and the tag (RFC 8291, section 4)."""
TOKEN_LIFETIME = timedelta(hours=12)
"""How long a VAPID token is good for (push services refuse more than 24 hours)."""
TOPIC_LENGTH = 32
"""The most characters of a `Topic` (RFC 8030, 5.4)."""


class PushKeyError(ValueError):
    """A push key file that cannot be used (missing, unreadable, not a P-256 private key)."""


def b64url(raw: bytes) -> str:
    """Base64url without padding, as browsers write push keys."""
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def from_b64url(text: str) -> bytes:
    """The bytes of base64url with or without its padding (ValueError if it is not)."""
    if not text or any(c not in _B64URL for c in text):
        raise ValueError("not base64url")
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


_B64URL = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_=")


class PushKey:
    """The server's VAPID key pair."""

    def __init__(self, private: ec.EllipticCurvePrivateKey) -> None:
        if not isinstance(private.curve, ec.SECP256R1):
            raise PushKeyError("a push key is a P-256 (prime256v1) key")
        self._vapid = Vapid02(private)
        raw = private.public_key().public_bytes(Encoding.X962, PublicFormat.UncompressedPoint)
        self.public_key = b64url(raw)
        """What a browser subscribes with (`applicationServerKey`): the public point, 65
        bytes, base64url."""

    @classmethod
    def generate(cls) -> PushKey:
        return cls(ec.generate_private_key(ec.SECP256R1()))

    def authorization(self, endpoint: str, contact: str, now: datetime) -> str:
        """The `Authorization` header of a request to `endpoint`: a token for its push
        service (`aud`, its origin), good for `TOKEN_LIFETIME` from `now`, naming who runs
        this server (`sub`: `contact`, a mailto: or https: URL)."""
        parts = urllib.parse.urlsplit(endpoint)
        claims = {
            "aud": f"{parts.scheme}://{parts.netloc}",
            "exp": int((now + TOKEN_LIFETIME).timestamp()),
            "sub": contact,
        }
        return str(self._vapid.sign(claims)["Authorization"])

    def pem(self) -> bytes:
        private = self._vapid.private_key
        return bytes(private.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption()))


@functools.lru_cache(maxsize=64)
def contact_accepted(contact: str) -> bool:
    """Whether push services take `contact` as a VAPID `sub` (a mailto: or https: URL): the
    VAPID library's own check, by signing with a throwaway key (once per contact: settings
    are made often in tests and by every process's start)."""
    try:
        PushKey.generate().authorization("https://push.example", contact, datetime.now())
    except VapidException:
        return False
    return True


def read_push_key(path: str | Path) -> PushKey:
    try:
        private = load_pem_private_key(Path(path).read_bytes(), password=None)
    except (OSError, ValueError, TypeError) as error:
        raise PushKeyError(f"push key {path}: {error}") from None
    if not isinstance(private, ec.EllipticCurvePrivateKey):
        raise PushKeyError(f"push key {path}: not a P-256 private key")
    try:
        return PushKey(private)
    except PushKeyError as error:
        raise PushKeyError(f"push key {path}: {error}") from None


def write_push_key_file(path: str | Path) -> PushKey:
    """A new key, in a new file readable by its owner only (never over an existing file)."""
    key = PushKey.generate()
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "wb") as out:
        out.write(key.pem())
    return key


def push_key_for(path: str | None, *, embedded: bool) -> PushKey | None:
    """The key of the file at `path`; without one, a key made now for the embedded server
    (its workers share its process), and none (push off) for processes that would each
    make another."""
    if path:
        return read_push_key(path)
    return PushKey.generate() if embedded else None


def encrypted(message: bytes, p256dh: bytes, auth: bytes) -> bytes:
    """`message` encrypted for one browser (its public key `p256dh`, its `auth` secret), with
    a key pair made for this message alone."""
    if len(message) > MAX_PLAINTEXT:
        raise ValueError(f"a push message is at most {MAX_PLAINTEXT} bytes")
    ephemeral = ec.generate_private_key(ec.SECP256R1())
    return bytes(
        http_ece.encrypt(
            message, private_key=ephemeral, dh=p256dh, auth_secret=auth, version="aes128gcm"
        )
    )


def topic_of(game_id: str) -> str:
    """The `Topic` of a game's messages: a push service keeps only the newest message of a
    topic that a device has not received yet (32 base64url characters, naming nothing)."""
    return b64url(hashlib.sha256(game_id.encode()).digest()[:24])


def in_push_words(reason: str) -> str:
    """A refusal of `outbound.targets` (whose checks a push endpoint passes as a webhook URL
    does) said of what it is here: the push address and push service the player's browser
    chose, never "the webhook"."""
    said = reason.replace("The webhook URL", "This browser's push address")
    return said.replace("The webhook host", "This browser's push service")

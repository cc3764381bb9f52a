"""The mail side of the e-mail tests: a real SMTP server on loopback (`aiosmtpd`) that keeps
what it received, by recipient, with how each came (over TLS, after a login), and the
throwaway certificates of its TLS (made by the `openssl` command, as the webhook tests make
theirs)."""

from __future__ import annotations

import email
import email.policy
import shutil
import ssl
import subprocess
import threading
import time
from collections.abc import Callable
from email.message import EmailMessage
from pathlib import Path
from typing import Any, NamedTuple


class Received(NamedTuple):
    to: str
    message: EmailMessage
    tls: bool
    """Whether the session was over TLS when the e-mail came (STARTTLS or from the start)."""
    login: str | None
    """The user name it logged in with (None: no login)."""


class Inbox:
    """What the SMTP server received, by recipient (an aiosmtpd handler)."""

    def __init__(self, *, implicit_tls: bool = False) -> None:
        self.received: list[Received] = []
        self.changed = threading.Condition()
        self.implicit_tls = implicit_tls

    @property
    def messages(self) -> list[tuple[str, EmailMessage]]:
        return [(r.to, r.message) for r in self.received]

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        message = email.message_from_bytes(envelope.content, policy=email.policy.default)
        tls = self.implicit_tls or session.ssl is not None
        login = None
        if session.authenticated and session.auth_data is not None:
            login = bytes(session.auth_data.login).decode()
        with self.changed:
            for to in envelope.rcpt_tos:
                self.received.append(Received(to, message, tls, login))
            self.changed.notify_all()
        return "250 OK"

    def of(self, to: str) -> list[EmailMessage]:
        return [r.message for r in self.received if r.to == to]

    def wait(
        self,
        to: str,
        count: int,
        timeout: float = 20.0,
        *,
        which: Callable[[EmailMessage], bool] = lambda message: True,
    ) -> list[EmailMessage]:
        """The e-mails to `to` that `which` takes, once there are `count` of them."""
        deadline = time.monotonic() + timeout
        with self.changed:
            while len(found := [m for m in self.of(to) if which(m)]) < count:
                left = deadline - time.monotonic()
                assert left > 0, f"{to}: {len(found)} of {count} e-mails came: " + ", ".join(
                    str(m["Subject"]) for m in self.of(to)
                )
                self.changed.wait(left)
            return found


class Certificate(NamedTuple):
    cert: Path
    key: Path

    def server_context(self) -> ssl.SSLContext:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.cert, self.key)
        return context


def self_signed(directory: Path, *names: str) -> Certificate:
    """A self-signed certificate for `names` (`DNS:...` or `IP:...`), for a day."""
    openssl = shutil.which("openssl")
    assert openssl is not None, "openssl makes the test's certificate (Debian's openssl)"
    stem = names[0].partition(":")[2].replace(".", "-")
    key, cert = directory / f"{stem}-key.pem", directory / f"{stem}-cert.pem"
    subprocess.run(
        [openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
         "-nodes", "-keyout", key, "-out", cert, "-days", "1",
         "-subj", f"/CN={names[0].partition(':')[2]}", "-addext",
         "subjectAltName=" + ",".join(names)],
        check=True, capture_output=True,
    )  # fmt: skip
    return Certificate(cert, key)


def text_of(message: EmailMessage) -> str:
    """The plain-text part of an e-mail."""
    part = message.get_body(preferencelist=("plain",))
    assert part is not None
    return str(part.get_content())


def html_of(message: EmailMessage) -> str:
    """The HTML part of an e-mail."""
    part = message.get_body(preferencelist=("html",))
    assert part is not None
    return str(part.get_content())

"""The SMTP connection of the e-mails: what a `PATRICIAN_SMTP_URL` means (read strictly, at
start too, by `smtp_server`), and one message sent over it (`transmit`) with the password kept
out of every error, log and delivery log.

SMTP URLs (`PATRICIAN_SMTP_URL`, read strictly by `smtp_server`; docs/notifications.md):

- `smtp://host[:port]`: no TLS (port 25), for a relay on the same machine or network;
- `smtp://host[:port]?starttls=1`: the connection is upgraded by STARTTLS before anything else
  is sent, and a server that does not offer it is not sent the e-mail;
- `smtps://host[:port]`: TLS from the start (port 465);
- `user:password@` before the host (percent-encoded) logs in (AUTH PLAIN or LOGIN), only over
  TLS: a password is never sent in clear, nor written in a log, a delivery log or an error;
- `ca_file=/path/ca.pem` in the query: trust the certificates of that file (a private CA)
  instead of the system's. The server's certificate is always verified, for its host name.
"""

from __future__ import annotations

import base64
import smtplib
import ssl
from dataclasses import dataclass, field
from email.message import EmailMessage
from typing import Literal
from urllib.parse import parse_qsl, quote, unquote, urlsplit

import msgspec

SMTP_TIMEOUT = 10.0


def settings_repr(settings: msgspec.Struct) -> str:
    """The repr of settings that hold an SMTP URL (`smtp_url`), its password left out (and
    those of the Redis URLs, `redis_url` and `queue_url`, where they are): settings get
    logged."""
    shown = msgspec.structs.asdict(settings)
    for name in ("smtp_url", "redis_url", "queue_url"):
        if shown.get(name):
            shown[name] = without_password(shown[name])
    listed = ", ".join(f"{name}={value!r}" for name, value in shown.items())
    return f"{type(settings).__name__}({listed})"


def without_password(url: str) -> str:
    """The URL to show (a repr, a log): its password, if it has one, written `***` (any URL:
    the Redis one too)."""
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:
        return "<an SMTP URL that does not read>"
    if not password:
        return url
    host = parts.netloc.rpartition("@")[2]
    return parts._replace(netloc=f"{parts.username}:***@{host}").geturl()


def said(failed: BaseException) -> str:
    """A failure in words (ours say their kind already, and no credential)."""
    if isinstance(failed, (MailNotSent, SmtpUrlError)):
        return str(failed)
    return f"{type(failed).__name__}: {failed}"


class SmtpUrlError(smtplib.SMTPException):
    """`PATRICIAN_SMTP_URL` cannot be used (said without its password)."""


class MailNotSent(smtplib.SMTPException):
    """The SMTP server did not take an e-mail: why, in words, with no credential in them."""


Security = Literal["none", "starttls", "tls"]
_ON, _OFF = ("1", "true", "yes"), ("0", "false", "no")


@dataclass(frozen=True)
class SmtpServer:
    """Where e-mails go and how (an SMTP URL read): its repr leaves the password out."""

    host: str
    port: int
    security: Security
    """"tls": TLS from the start; "starttls": upgraded before anything is sent."""
    ca_file: str | None = None
    """The certificates to trust instead of the system's (a private CA)."""
    user: str | None = None
    password: str = field(default="", repr=False)

    def tls(self) -> ssl.SSLContext:
        """A client context that verifies the server's certificate for its host name."""
        return ssl.create_default_context(cafile=self.ca_file)

    def secrets(self) -> list[str]:
        """The password as it could be written or sent: plain, percent-encoded, in base64
        (AUTH LOGIN), and AUTH PLAIN's base64 of the user and password."""
        if not self.password:
            return []
        plain = f"\0{self.user}\0{self.password}".encode()
        return [
            self.password,
            quote(self.password, safe=""),
            base64.b64encode(self.password.encode()).decode(),
            base64.b64encode(plain).decode(),
        ]


def smtp_server(url: str) -> SmtpServer:
    """The SMTP server of an SMTP URL (see the module), or `SmtpUrlError` saying what is wrong
    with it (never the password)."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        port = 0  # urlsplit's own words would say the URL, password and all
        parts = urlsplit("")
    if port == 0:
        raise SmtpUrlError("PATRICIAN_SMTP_URL is not a valid URL (its host or port)")
    scheme = parts.scheme.lower()
    if scheme not in ("smtp", "smtps"):
        raise SmtpUrlError("PATRICIAN_SMTP_URL must begin with smtp:// or smtps://")
    if not parts.hostname:
        raise SmtpUrlError("PATRICIAN_SMTP_URL names no host")
    if parts.path not in ("", "/") or parts.fragment:
        raise SmtpUrlError("PATRICIAN_SMTP_URL takes no path or fragment")
    options: dict[str, str] = {}
    try:
        pairs = parse_qsl(parts.query, keep_blank_values=True, strict_parsing=bool(parts.query))
    except ValueError:
        raise SmtpUrlError("PATRICIAN_SMTP_URL has a malformed query") from None
    for name, value in pairs:
        if name not in ("starttls", "ca_file"):
            raise SmtpUrlError(f"PATRICIAN_SMTP_URL: unknown option {name!r} (starttls, ca_file)")
        if name in options:
            raise SmtpUrlError(f"PATRICIAN_SMTP_URL: {name} given twice")
        options[name] = value
    starttls = options.get("starttls", "0").lower()
    if starttls not in _ON + _OFF:
        raise SmtpUrlError("PATRICIAN_SMTP_URL: starttls is 1 or 0 (true/false, yes/no)")
    security: Security = "tls" if scheme == "smtps" else "none"
    if starttls in _ON:
        if scheme == "smtps":
            raise SmtpUrlError("PATRICIAN_SMTP_URL: smtps:// is TLS from the start, no STARTTLS")
        security = "starttls"
    ca_file = options.get("ca_file")
    if ca_file is not None and (not ca_file or security == "none"):
        raise SmtpUrlError("PATRICIAN_SMTP_URL: ca_file is a file, for smtps:// or starttls=1")
    user = unquote(parts.username) if parts.username is not None else None
    password = unquote(parts.password) if parts.password is not None else ""
    if user is not None or password:
        if not user or not password:
            raise SmtpUrlError("PATRICIAN_SMTP_URL: a login needs a user name and a password")
        if not (user.isascii() and password.isascii()):
            raise SmtpUrlError("PATRICIAN_SMTP_URL: the user name and password must be ASCII")
        if security == "none":
            raise SmtpUrlError(
                "PATRICIAN_SMTP_URL: a password is sent only over TLS (smtps:// or starttls=1)"
            )
    default_port = 465 if scheme == "smtps" else 25
    return SmtpServer(parts.hostname, port or default_port, security, ca_file, user, password)


def transmit(server: SmtpServer, message: EmailMessage) -> None:
    """Hand `message` to the SMTP server: TLS as it says (the certificate verified), a login
    if it has one; `MailNotSent` (its words rid of the password) if it is not taken."""
    try:
        if server.security == "tls":
            client: smtplib.SMTP = smtplib.SMTP_SSL(
                server.host, server.port, timeout=SMTP_TIMEOUT, context=server.tls()
            )
        else:
            client = smtplib.SMTP(server.host, server.port, timeout=SMTP_TIMEOUT)
        with client:
            if server.security == "starttls":
                client.starttls(context=server.tls())  # refused: nothing more is sent
            if server.user is not None:
                client.login(server.user, server.password)
            client.send_message(message)
    except (OSError, smtplib.SMTPException) as failed:
        said = f"{type(failed).__name__}: {failed}"
        for secret in server.secrets():
            said = said.replace(secret, "***")
        raise MailNotSent(said) from None  # not chained: the original's words stay here

"""E-mail goes over SMTP as `PATRICIAN_SMTP_URL` says, tried against real SMTP servers on
loopback (aiosmtpd): TLS from the start (`smtps://`) or upgraded by STARTTLS before anything is
sent (`?starttls=1`, never without it), the server's certificate always verified for its host
name (a private CA trusted only by `ca_file=`), a login (AUTH PLAIN or LOGIN) only over TLS;
and the password is in no log, delivery log, error or stored value, even when the server
says it back."""

from __future__ import annotations

import base64
import os
import secrets
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from email.message import EmailMessage
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest
import redis
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword

from server.config.settings import Settings
from tests.processes import free_port
from tests.server.client import Api, Player
from tests.server.live import (
    REDIS_URL,
    LiveServer,
    _patrician,
    delete_prefix,
    redis_client,
    unique_prefix,
)
from tests.workers.mailbox import Certificate, Inbox, self_signed
from workers.smtp import MailNotSent, SmtpUrlError, smtp_server, transmit

USER = "ada"
TO = "ada@example.org"


@pytest.fixture
def password() -> str:
    """A password with the characters a URL must percent-encode, new for each test (so that
    finding it anywhere is finding this test's)."""
    return f"pw@:/{secrets.token_hex(8)}"


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> Certificate:
    return self_signed(tmp_path_factory.mktemp("tls"), "DNS:localhost", "IP:127.0.0.1")


class Authenticator:
    """Accepts `USER` with the password; keeps every attempt (mechanism, user, password)."""

    def __init__(self, password: str) -> None:
        self.password = password
        self.attempts: list[tuple[str, str, str]] = []
        self.accept = True

    def __call__(
        self, server: Any, session: Any, envelope: Any, mechanism: str, data: Any
    ) -> AuthResult:
        assert isinstance(data, LoginPassword)
        user, given = bytes(data.login).decode(), bytes(data.password).decode()
        self.attempts.append((mechanism, user, given))
        ok = self.accept and user == USER and given == self.password
        return AuthResult(success=ok, handled=False, auth_data=data if ok else None)


@contextmanager
def smtp(handler: Any, **options: Any) -> Iterator[int]:
    """A real SMTP server on a free loopback port, with aiosmtpd's `options`; its port."""
    port = free_port()
    controller = Controller(handler, hostname="127.0.0.1", port=port, **options)
    controller.start()
    try:
        yield port
    finally:
        controller.stop()


def _message() -> EmailMessage:
    message = EmailMessage()
    message["From"] = "Patrician <patrician@play.example>"
    message["To"] = TO
    message["Subject"] = "Your turn"
    message.set_content("It is your turn.")
    return message


def _url(scheme: str, port: int, query: str = "", login: str = "") -> str:
    return f"{scheme}://{login}127.0.0.1:{port}" + (f"?{query}" if query else "")


def _login(password: str) -> str:
    return f"{USER}:{quote(password, safe='')}@"


def _forms(password: str) -> list[str]:
    """The password as it could be written: plain, percent-encoded, in base64 (AUTH LOGIN) and
    in AUTH PLAIN's base64 of the user and password."""
    return [
        password,
        quote(password, safe=""),
        base64.b64encode(password.encode()).decode(),
        base64.b64encode(f"\0{USER}\0{password}".encode()).decode(),
    ]


def _says_none_of(text: str, password: str) -> None:
    found = [form for form in _forms(password) if form in text]
    assert not found, f"the password is in {text!r}"


def test_smtps_sends_over_tls_from_the_start_trusting_the_ca_file(
    certificate: Certificate,
) -> None:
    inbox = Inbox(implicit_tls=True)
    with smtp(inbox, ssl_context=certificate.server_context()) as port:
        transmit(smtp_server(_url("smtps", port, f"ca_file={certificate.cert}")), _message())
    (came,) = inbox.received
    assert came.to == TO and came.tls and came.login is None


def test_smtps_refuses_a_certificate_that_no_trusted_authority_signed(
    certificate: Certificate,
) -> None:
    inbox = Inbox(implicit_tls=True)
    with (
        smtp(inbox, ssl_context=certificate.server_context()) as port,
        pytest.raises(MailNotSent, match="CERTIFICATE_VERIFY_FAILED"),
    ):
        transmit(smtp_server(_url("smtps", port)), _message())  # the system's CAs only
    assert inbox.received == []


def test_smtps_refuses_a_certificate_made_out_to_another_host(tmp_path: Path) -> None:
    other = self_signed(tmp_path, "DNS:mail.example")
    inbox = Inbox(implicit_tls=True)
    with (
        smtp(inbox, ssl_context=other.server_context()) as port,
        pytest.raises(MailNotSent, match="mismatch"),
    ):
        transmit(smtp_server(_url("smtps", port, f"ca_file={other.cert}")), _message())
    assert inbox.received == []


def test_starttls_upgrades_the_connection_before_the_email_is_sent(
    certificate: Certificate,
) -> None:
    inbox = Inbox()
    options = {"tls_context": certificate.server_context(), "require_starttls": True}
    with smtp(inbox, **options) as port:
        query = f"starttls=1&ca_file={certificate.cert}"
        transmit(smtp_server(_url("smtp", port, query)), _message())
    (came,) = inbox.received
    assert came.to == TO and came.tls


def test_starttls_sends_nothing_to_a_server_that_does_not_offer_it(
    certificate: Certificate,
) -> None:
    inbox = Inbox()
    with smtp(inbox) as port:
        query = f"starttls=1&ca_file={certificate.cert}"
        with pytest.raises(MailNotSent, match="STARTTLS extension not supported"):
            transmit(smtp_server(_url("smtp", port, query)), _message())
    assert inbox.received == []


def test_starttls_verifies_the_servers_certificate_too(certificate: Certificate) -> None:
    inbox = Inbox()
    options = {"tls_context": certificate.server_context(), "require_starttls": True}
    with (
        smtp(inbox, **options) as port,
        pytest.raises(MailNotSent, match="CERTIFICATE_VERIFY_FAILED"),
    ):
        transmit(smtp_server(_url("smtp", port, "starttls=true")), _message())
    assert inbox.received == []


@pytest.mark.parametrize("mechanism", ["PLAIN", "LOGIN"])
@pytest.mark.parametrize("security", ["starttls", "smtps"])
def test_the_urls_user_and_password_log_in_over_tls(
    certificate: Certificate, password: str, mechanism: str, security: str
) -> None:
    inbox, checker = Inbox(implicit_tls=security == "smtps"), Authenticator(password)
    others = [m for m in ("PLAIN", "LOGIN") if m != mechanism]
    options: dict[str, Any] = {"authenticator": checker, "auth_exclude_mechanism": others}
    if security == "smtps":  # aiosmtpd counts only STARTTLS as TLS for its AUTH rules
        options |= {"ssl_context": certificate.server_context(), "auth_require_tls": False}
        scheme, query = "smtps", f"ca_file={certificate.cert}"
    else:
        options |= {"tls_context": certificate.server_context(), "require_starttls": True}
        options |= {"auth_required": True}
        scheme, query = "smtp", f"starttls=1&ca_file={certificate.cert}"
    with smtp(inbox, **options) as port:
        server = smtp_server(_url(scheme, port, query, _login(password)))
        _says_none_of(repr(server), password)
        transmit(server, _message())
    assert checker.attempts == [(mechanism, USER, password)]
    (came,) = inbox.received
    assert came.tls and came.login == USER


def test_a_refused_login_is_said_without_the_password(
    certificate: Certificate, password: str
) -> None:
    inbox, checker = Inbox(), Authenticator("another one")
    options = {
        "tls_context": certificate.server_context(), "require_starttls": True,
        "auth_required": True, "authenticator": checker,
    }  # fmt: skip
    with smtp(inbox, **options) as port:
        url = _url("smtp", port, f"starttls=1&ca_file={certificate.cert}", _login(password))
        with pytest.raises(MailNotSent) as refused:
            transmit(smtp_server(url), _message())
    assert "SMTPAuthenticationError" in str(refused.value) and "535" in str(refused.value)
    _says_none_of(str(refused.value), password)
    assert refused.value.__cause__ is None and refused.value.__suppress_context__
    assert inbox.received == []


class Parrot(Inbox):
    """A server that answers AUTH PLAIN by saying back what it was sent, encoded and not."""

    async def auth_PLAIN(self, server: Any, args: list[str]) -> AuthResult:
        sent = args[1] if len(args) > 1 else ""
        said = base64.b64decode(sent).decode(errors="replace").replace("\0", " ")
        await server.push(f"535 5.7.8 {sent} ({said}) is not welcome")
        return AuthResult(success=False, handled=True)


def test_a_server_that_says_the_credentials_back_has_them_blanked_out(
    certificate: Certificate, password: str
) -> None:
    parrot = Parrot()
    options = {"tls_context": certificate.server_context(), "require_starttls": True,
               "auth_exclude_mechanism": ["LOGIN"]}  # fmt: skip
    with smtp(parrot, **options) as port:
        url = _url("smtp", port, f"starttls=1&ca_file={certificate.cert}", _login(password))
        with pytest.raises(MailNotSent, match=r"\*\*\*") as refused:
            transmit(smtp_server(url), _message())
    _says_none_of(str(refused.value), password)


def test_a_password_is_never_sent_without_tls(password: str) -> None:
    inbox, checker = Inbox(), Authenticator(password)
    options = {"authenticator": checker, "auth_require_tls": False}  # AUTH offered in clear
    with smtp(inbox, **options) as port:
        url = _url("smtp", port, login=_login(password))
        with pytest.raises(SmtpUrlError, match="only over TLS") as refused:
            transmit(smtp_server(url), _message())
        with pytest.raises(SmtpUrlError):
            Settings(smtp_url=url)  # nor does the server or a worker start with it
    _says_none_of(str(refused.value), password)
    assert checker.attempts == [] and inbox.received == []


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("http://mail.example", "smtp:// or smtps://"),
        ("smtp://", "no host"),
        ("smtp://mail.example:99999", "host or port"),
        ("smtp://mail.example:0", "host or port"),
        ("smtp://ada:{password}@[::1:25", "host or port"),
        ("smtp://mail.example/inbox", "no path"),
        ("smtp://mail.example?starttls=maybe", "starttls is 1 or 0"),
        ("smtp://mail.example?starttls=1&starttls=0", "twice"),
        ("smtp://mail.example?tls=1", "unknown option 'tls'"),
        ("smtps://mail.example?starttls=1", "TLS from the start"),
        ("smtp://mail.example?ca_file=/etc/ca.pem", "for smtps:// or starttls=1"),
        ("smtps://mail.example?ca_file=", "ca_file is a file"),
        ("smtps://ada@mail.example", "a user name and a password"),
        ("smtps://:{password}@mail.example", "a user name and a password"),
        ("smtps://ad%C3%A4:{password}@mail.example", "ASCII"),
        ("smtp://ada:{password}@mail.example?starttls=0", "only over TLS"),
    ],
)
def test_an_smtp_url_that_cannot_be_used_stops_the_start_saying_why_but_not_the_password(
    url: str, says: str, password: str
) -> None:
    url = url.format(password=quote(password, safe=""))
    with pytest.raises(SmtpUrlError, match=says) as refused:
        Settings(smtp_url=url)
    _says_none_of(str(refused.value), password)


@pytest.mark.parametrize(
    ("url", "server"),
    [
        ("smtp://mail.example", ("mail.example", 25, "none")),
        ("smtp://mail.example:2525?starttls=0", ("mail.example", 2525, "none")),
        ("smtp://mail.example:587?starttls=1", ("mail.example", 587, "starttls")),
        ("smtp://MAIL.example?starttls=yes", ("mail.example", 25, "starttls")),
        ("smtps://mail.example", ("mail.example", 465, "tls")),
        ("smtps://[::1]:4650/", ("::1", 4650, "tls")),
    ],
)
def test_an_smtp_url_means_its_host_port_and_tls(url: str, server: tuple[str, int, str]) -> None:
    read = smtp_server(url)
    assert (read.host, read.port, read.security) == server
    assert read.user is None and read.ca_file is None


def test_a_login_is_read_percent_decoded(password: str) -> None:
    read = smtp_server(f"smtps://ada%40example.org:{quote(password, safe='')}@mail.example")
    assert read.user == "ada@example.org" and read.password == password
    _says_none_of(repr(read), password)


@contextmanager
def _deployed(tmp_path: Path, smtp_url: str, password: str) -> Iterator[tuple[Api, list[Path]]]:
    """`patrician serve` and a `patrician worker` on the real Redis, sending e-mail through
    `smtp_url` (given in the environment, as an operator would); the API and their logs. At
    the end the whole Redis is searched for `password` (RQ's own keys, `rq:...`, are not
    under the prefix), before the prefix's keys are deleted."""
    prefix = unique_prefix("smtp")
    env = {"PATRICIAN_SMTP_URL": smtp_url, "PATRICIAN_MAIL_GRACE_SECONDS": "0",
           "PATRICIAN_PUBLIC_URL": "https://play.example"}  # fmt: skip
    server = LiveServer(prefix, tmp_path, env=env)
    worker_log = tmp_path / "worker.log"
    command = [*_patrician(), "worker", "--redis-url", REDIS_URL]
    worker = None
    try:
        server.start()
        with worker_log.open("wb") as out:
            worker = subprocess.Popen(
                command, env={**os.environ, **env, "PATRICIAN_PREFIX": prefix},
                stdout=out, stderr=subprocess.STDOUT,
            )  # fmt: skip
        with httpx.Client(base_url=server.url, timeout=30) as client:
            yield Api(client), [server.log_path, worker_log]
        _all_of_redis_says_none_of(password)
    finally:
        if worker is not None:
            worker.terminate()
            worker.wait(timeout=20)
        server.stop()
        delete_prefix(prefix, REDIS_URL)


def _all_of_redis_says_none_of(password: str) -> None:
    """No key or value of the whole Redis holds the password; the failures of the e-mail jobs
    are there (RQ keeps each one's error: what was searched holds what should be)."""
    client: redis.Redis = redis_client()
    errors = 0
    try:
        for key in client.scan_iter(count=1000):
            kind = client.type(key)
            values: Any = None
            if kind == b"string":
                values = client.get(key)
            elif kind == b"hash":
                values = client.hgetall(key)
            elif kind == b"list":
                values = client.lrange(key, 0, -1)
            elif kind == b"set":
                values = client.smembers(key)
            elif kind == b"zset":
                values = client.zrange(key, 0, -1)
            elif kind == b"stream":
                values = client.xrange(key)
            said = repr((key, values))
            _says_none_of(said, password)
            errors += "SMTPAuthenticationError" in said
    finally:
        client.close()
    assert errors, "no e-mail job's failure was found in Redis"


def _set_email(api: Api, player: Player) -> None:
    body = {"email": {"address": TO}}
    api.ok(api.request("PUT", "/api/me/notifications", player=player, json=body))


@pytest.mark.redis
@pytest.mark.timeout(120)
def test_the_workers_send_over_tls_with_the_login_and_a_refusal_leaves_the_password_nowhere(
    tmp_path: Path, certificate: Certificate, password: str
) -> None:
    inbox, checker = Inbox(), Authenticator(password)
    options = {
        "tls_context": certificate.server_context(), "require_starttls": True,
        "auth_required": True, "authenticator": checker,
    }  # fmt: skip
    with smtp(inbox, **options) as port:
        url = _url("smtp", port, f"starttls=1&ca_file={certificate.cert}", _login(password))
        with _deployed(tmp_path, url, password) as (api, logs):
            ada, bea = api.create_player("Ada"), api.create_player("Bea")
            _set_email(api, ada)
            (asked,) = inbox.wait(TO, 1)
            assert "confirm" in asked["Subject"].lower()
            assert inbox.received[0].tls and inbox.received[0].login == USER
            token = _token(asked)
            confirmed = api.request("POST", f"/api/email/confirm?token={token}")
            assert confirmed.status_code == 200, confirmed.text
            checker.accept = False  # from now on the server refuses the login
            created = api.create_game(ada, 2, entropy="e")
            api.join(bea, created["game_id"], created["invite_code"])
            failed = _wait_for_failure(api, ada)
            assert "SMTPAuthenticationError" in failed["detail"], failed
            for delivery in api.ok(api.request("GET", "/api/me/deliveries", player=ada)):
                _says_none_of(str(delivery), password)
        for log in logs:
            _says_none_of(log.read_text(errors="replace"), password)
    assert checker.attempts and all(given == password for _m, _u, given in checker.attempts)


def _token(message: EmailMessage) -> str:
    part = message.get_body(preferencelist=("plain",))
    assert part is not None
    text = str(part.get_content())
    return text.split("token=", 1)[1].split(maxsplit=1)[0]


def _wait_for_failure(api: Api, player: Player) -> dict[str, Any]:
    deadline = time.monotonic() + 30
    while True:
        found = api.ok(api.request("GET", "/api/me/deliveries", player=player))
        failed = [d for d in found if d["channel"] == "email" and d["status"] == "failed"]
        if failed:
            return dict(failed[0])
        assert time.monotonic() < deadline, found
        time.sleep(0.1)


def test_the_settings_and_the_workers_context_never_show_the_smtp_password() -> None:
    """Settings and contexts end up in logs and tracebacks: their reprs leave it out."""
    import fakeredis

    from server.config.card_data import load_game_data
    from server.config.settings import Settings
    from workers.settings import context_for

    url = "smtps://bob:s3cr%40t-word@mail.example:465"
    settings = Settings(smtp_url=url)
    context = context_for(fakeredis.FakeRedis(), load_game_data(None), settings.workers())
    for shown in (repr(settings), repr(settings.workers()), repr(context)):
        assert "s3cr" not in shown and "word" not in shown
    assert "bob:***@mail.example" in repr(settings)


@pytest.mark.parametrize("command", ["serve", "worker", "rebuild-projections"])
def test_a_command_given_an_smtp_url_it_cannot_use_says_why_in_a_line_without_the_password(
    command: str,
) -> None:
    env = {**os.environ, "PATRICIAN_SMTP_URL": "smtp://bob:s3cret-pw@mail.example"}
    args = [*_patrician(), command] + ([] if command == "serve" else ["--redis-url", REDIS_URL])
    done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and "s3cret" not in done.stderr + done.stdout
    assert "Error: PATRICIAN_SMTP_URL: a password is sent only over TLS" in done.stderr

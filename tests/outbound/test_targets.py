"""Where a webhook may be sent: only public addresses (or the operator's allowlist), checked
when the URL is set and again when it is sent, with no second lookup in between (DNS
rebinding); redirects are not followed, answers are capped, time-outs are DeliveryFailed.

The sending tests use a real HTTP server on loopback, allowed with `Allowlist.parse`."""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import socket
import ssl
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, cast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from outbound.lookups import LOOKUP_THREADS
from outbound.targets import (
    Allowlist,
    DeliveryFailed,
    LookupBusy,
    LookupFailed,
    Resolver,
    TargetRefused,
    check_url,
    checked_addresses,
    checked_url,
    system_resolve,
)
from tests.workers.mailbox import self_signed
from workers.webhook_sending import Delivered, post

NONE = Allowlist.parse("")
LOOPBACK = Allowlist.parse("127.0.0.1")
PUBLIC = "93.184.215.14"


def answering(*addresses: str) -> Resolver:
    """A resolver that answers `addresses` for any name, without the network."""

    def resolve(host: str, port: int) -> list[str]:
        return list(addresses)

    return resolve


def nowhere(host: str, port: int) -> list[str]:
    raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")


def never_asked(host: str, port: int) -> list[str]:
    raise AssertionError(f"{host} was looked up, but it is an address")


def never_connect(*args: Any, **kwargs: Any) -> socket.socket:
    raise AssertionError(f"a connection was made: {args}")


REFUSED = [
    pytest.param("http://127.0.0.1/hook", never_asked, "is a loopback address", id="loopback"),
    pytest.param("http://[::1]:8080/hook", never_asked, "is a loopback address", id="loopback6"),
    pytest.param("http://10.1.2.3/", never_asked, "is a private address", id="10/8"),
    pytest.param("http://172.16.0.1/", never_asked, "is a private address", id="172.16/12"),
    pytest.param("http://172.31.255.254/", never_asked, "is a private address", id="172.31"),
    pytest.param("http://192.168.1.1/", never_asked, "is a private address", id="192.168/16"),
    pytest.param("http://[fd12::1]/", never_asked, "is a private address", id="fc00::/7"),
    pytest.param(
        "http://169.254.169.254/latest/meta-data/", never_asked, "link-local", id="metadata"
    ),
    pytest.param("http://[fe80::1]/", never_asked, "is a link-local address", id="fe80::/10"),
    pytest.param("http://0.0.0.0:8000/", never_asked, "is an unspecified address", id="0.0.0.0"),
    pytest.param("http://[::]/", never_asked, "is an unspecified address", id="::"),
    pytest.param("http://100.64.0.1/", never_asked, "carrier-grade NAT", id="100.64/10"),
    pytest.param("http://224.0.0.1/", never_asked, "is a multicast address", id="multicast"),
    pytest.param("http://240.0.0.1/", never_asked, "is a reserved address", id="240/4"),
    pytest.param("http://192.0.0.8/", never_asked, "is not a public address", id="192.0.0/24"),
    pytest.param("http://[fec0::1]/", never_asked, "not a public address", id="site-local"),
    pytest.param("http://[::ffff:127.0.0.1]/", never_asked, "loopback", id="v4-mapped"),
    pytest.param("http://[::127.0.0.1]/", never_asked, "loopback", id="v4-compatible"),
    pytest.param("http://[2002:7f00:1::]/", never_asked, "loopback", id="6to4"),
    pytest.param("http://[64:ff9b::a00:1]/", never_asked, "private", id="nat64"),
    pytest.param("http://2130706433/", never_asked, "loopback", id="decimal"),
    pytest.param("http://0x7f.1/", never_asked, "loopback", id="hex"),
    pytest.param("http://127.1/", never_asked, "loopback", id="short"),
    pytest.param("http://0177.0.0.1/", never_asked, "loopback", id="octal"),
    pytest.param("http://2130706433/", system_resolve, "loopback", id="decimal-system"),
    pytest.param("http://0x7f.1/", system_resolve, "loopback", id="hex-system"),
    pytest.param("http://127.1/", system_resolve, "loopback", id="short-system"),
    pytest.param(
        "https://hooks.example/",
        answering("127.0.0.1"),
        "hooks.example resolves to 127.0.0.1, which is a loopback address",
        id="name-to-loopback",
    ),
    pytest.param("http://localhost:8000/", system_resolve, "loopback", id="localhost"),
    pytest.param(
        "https://hooks.example/", answering("::ffff:127.0.0.1"), "loopback", id="name-to-mapped"
    ),
    pytest.param(
        "https://hooks.example/", answering(PUBLIC, "10.0.0.1"), "private", id="one-of-several"
    ),
    pytest.param("https://hooks.example/", answering("not-an-ip"), "resolves to", id="junk"),
    pytest.param("ftp://hooks.example/", never_asked, "http:// or https://", id="ftp"),
    pytest.param("file:///etc/passwd", never_asked, "http:// or https://", id="file"),
    pytest.param("gopher://hooks.example:70/", never_asked, "http:// or https://", id="gopher"),
    pytest.param("hooks.example/hook", never_asked, "http:// or https://", id="no-scheme"),
    pytest.param("http://me:secret@hooks.example/", never_asked, "user name", id="userinfo"),
    pytest.param("http://me@hooks.example/", never_asked, "user name", id="user"),
    pytest.param("http://hooks.example\\@127.0.0.1/", never_asked, "'\\'", id="backslash"),
    pytest.param("http://hooks.example /", never_asked, "spaces", id="space"),
    pytest.param("http://hooks.example/\r\nX: y", never_asked, "control", id="crlf"),
    pytest.param("http:///hook", never_asked, "no host name", id="no-host"),
    pytest.param("http://hooks.example:99999/", never_asked, "not a valid URL", id="bad-port"),
    pytest.param("http://a..example/", never_asked, "not a valid host name", id="empty-label"),
    pytest.param("http://nothing.invalid/", nowhere, "does not resolve", id="unresolvable"),
    pytest.param("http://nothing.invalid/", answering(), "does not resolve", id="no-answer"),
    pytest.param(
        "https://hooks.example/" + "a" * 2048, never_asked, "longer than 2048", id="too-long"
    ),
]


@pytest.mark.parametrize(("url", "resolve", "reason"), REFUSED)
def test_check_url_refuses_a_target_that_is_not_public_with_a_reason_a_player_understands(
    url: str, resolve: Resolver, reason: str
) -> None:
    with pytest.raises(TargetRefused) as refused:
        check_url(url, NONE, resolve)
    assert reason in refused.value.reason
    assert str(refused.value) == refused.value.reason
    assert refused.value.reason.startswith("The webhook ")
    assert isinstance(refused.value, ValueError)


@pytest.mark.parametrize(("url", "resolve", "reason"), REFUSED)
def test_post_refuses_the_same_targets_without_ever_connecting(
    url: str, resolve: Resolver, reason: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(socket, "create_connection", never_connect)
    with pytest.raises(TargetRefused) as refused:
        post(url, b"{}", {"content-type": "application/json"}, NONE, resolve=resolve)
    assert reason in refused.value.reason


@pytest.mark.parametrize(
    "address",
    [PUBLIC, "2606:2800:21f:cb07::1", "::ffff:93.184.215.14", "64:ff9b::5db8:d70e"],
)
def test_a_name_that_resolves_only_to_public_addresses_passes(address: str) -> None:
    check_url("https://hooks.example/notify?game=g1", NONE, answering(address))


def test_a_public_address_literal_passes_without_a_lookup() -> None:
    check_url(f"http://{PUBLIC}:8080/notify", NONE, never_asked)


def test_an_international_host_name_is_looked_up_in_its_ascii_form() -> None:
    asked: list[str] = []

    def resolve(host: str, port: int) -> list[str]:
        asked.append(host)
        return [PUBLIC]

    check_url("https://bücher.example/hook", NONE, resolve)
    assert asked == ["xn--bcher-kva.example"]


def test_the_lookup_is_for_the_urls_port_or_the_schemes_default() -> None:
    asked: list[tuple[str, int]] = []

    def resolve(host: str, port: int) -> list[str]:
        asked.append((host, port))
        return [PUBLIC]

    for url in ("https://hooks.example/", "http://hooks.example/", "http://hooks.example:81/"):
        check_url(url, NONE, resolve)
    assert [port for _, port in asked] == [443, 80, 81]


NOT_PUBLIC_V4 = [
    "0.0.0.0/8",
    "10.0.0.0/8",
    "100.64.0.0/10",
    "127.0.0.0/8",
    "169.254.0.0/16",
    "172.16.0.0/12",
    "192.168.0.0/16",
    "224.0.0.0/4",
    "240.0.0.0/4",
]


@settings(database=None, max_examples=300)
@given(st.sampled_from(NOT_PUBLIC_V4).flatmap(lambda net: st.ip_addresses(network=net)))
def test_any_ipv4_address_in_a_non_public_range_is_refused_also_as_mapped_ipv6(
    address: ipaddress.IPv4Address | ipaddress.IPv6Address,
) -> None:
    for answer in (str(address), f"::ffff:{address}"):
        with pytest.raises(TargetRefused):
            check_url("https://hooks.example/", NONE, answering(answer))


def test_the_allowlist_takes_addresses_and_networks_separated_by_commas_or_spaces() -> None:
    allow = Allowlist.parse(" 127.0.0.1, ::1  10.8.0.0/16,")
    for allowed in ("127.0.0.1", "::1", "10.8.3.4", "::ffff:127.0.0.1"):
        assert allow.allows(ipaddress.ip_address(allowed))
    for refused in ("127.0.0.2", "10.9.0.1", "::2"):
        assert not allow.allows(ipaddress.ip_address(refused))
    assert not NONE.allows(ipaddress.ip_address("127.0.0.1"))


@pytest.mark.parametrize("bad", ["localhost", "10.0.0.0/33", "10.0.0.1/8", "1.2.3"])
def test_an_allowlist_item_that_is_not_an_address_or_network_is_named_in_the_error(
    bad: str,
) -> None:
    with pytest.raises(ValueError, match=bad.replace(".", r"\.")):
        Allowlist.parse(f"127.0.0.1, {bad}")


def test_an_allowlisted_address_passes_but_only_that_one() -> None:
    check_url("http://127.0.0.1:8080/hook", LOOPBACK, never_asked)
    with pytest.raises(TargetRefused, match="loopback"):
        check_url("http://127.0.0.2:8080/hook", LOOPBACK, never_asked)


def test_a_name_that_rebinds_to_loopback_after_the_check_is_refused_when_sent_unconnected(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    answers = iter([[PUBLIC], ["127.0.0.1"]])
    asked: list[str] = []

    def rebinding(host: str, port: int) -> list[str]:
        asked.append(host)
        return next(answers)

    check_url("https://hooks.example/hook", NONE, rebinding)
    monkeypatch.setattr(socket, "create_connection", never_connect)
    with pytest.raises(TargetRefused, match=r"resolves to 127\.0\.0\.1, which is a loopback"):
        post("https://hooks.example/hook", b"{}", {}, NONE, resolve=rebinding)
    assert asked == ["hooks.example", "hooks.example"]


@contextlib.contextmanager
def unanswered() -> Iterator[Resolver]:
    """A resolver whose name server never answers (until the test ends)."""
    released = threading.Event()

    def resolve(host: str, port: int) -> list[str]:
        released.wait(30)
        return [PUBLIC]

    try:
        yield resolve
    finally:
        released.set()


def test_a_name_server_that_never_answers_is_given_up_on_within_the_lookup_time() -> None:
    with unanswered() as resolve:
        began = time.monotonic()
        with pytest.raises(
            LookupFailed, match=r"hooks\.example could not be looked up within 0\.2 s"
        ):
            checked_addresses("hooks.example", 443, NONE, resolve, 0.2)
        assert time.monotonic() - began < 1.0


def failing(errno: int) -> Resolver:
    def resolve(host: str, port: int) -> list[str]:
        raise socket.gaierror(errno, "the resolver's failure")

    return resolve


@pytest.mark.parametrize(
    "errno", [socket.EAI_AGAIN, socket.EAI_FAIL, socket.EAI_MEMORY, socket.EAI_SYSTEM]
)
def test_a_failure_of_the_name_servers_is_not_a_refusal_of_the_target(errno: int) -> None:
    with pytest.raises(LookupFailed, match="a failure of the name servers") as raised:
        check_url("https://hooks.example/hook", NONE, failing(errno))
    assert isinstance(raised.value, DeliveryFailed)
    assert not isinstance(raised.value, TargetRefused)


@pytest.mark.parametrize("errno", [socket.EAI_NONAME, socket.EAI_NODATA])
def test_a_name_that_does_not_exist_or_has_no_address_is_refused(errno: int) -> None:
    with pytest.raises(TargetRefused, match="does not resolve to any address"):
        check_url("https://hooks.example/hook", NONE, failing(errno))


def test_names_that_never_answer_hold_at_most_the_lookup_threads_and_fail_fast_beyond() -> None:
    """Player after player naming a host whose name server never answers: every check ends
    within its own time, those beyond LOOKUP_THREADS at once, and the stuck lookups hold at
    most LOOKUP_THREADS threads of the process (counted among all its threads); once the
    resolver gives up on them, names are looked up again."""
    failures: list[float] = []

    def check(resolve: Resolver) -> None:
        began = time.monotonic()
        with contextlib.suppress(LookupFailed):
            checked_addresses("slow.example", 443, NONE, resolve, 0.5)
            return
        failures.append(time.monotonic() - began)

    before = threading.active_count()
    with unanswered() as resolve:
        checkers = [threading.Thread(target=check, args=(resolve,)) for _ in range(40)]
        for checker in checkers:
            checker.start()
        for checker in checkers:
            checker.join(5)
        assert len(failures) == 40 and max(failures) < 1.5
        assert sum(took < 0.25 for took in failures) >= 40 - LOOKUP_THREADS  # no thread: at once
        assert threading.active_count() - before <= LOOKUP_THREADS
        with pytest.raises(LookupBusy, match="too many look-ups under way on this server"):
            checked_addresses("hooks.example", 443, NONE, answering(PUBLIC), 0.5)
    deadline = time.monotonic() + 5
    while threading.active_count() > before:  # the resolver gave up: the threads end
        assert time.monotonic() < deadline
        time.sleep(0.01)
    assert checked_addresses("hooks.example", 443, NONE, answering(PUBLIC), 5) == [PUBLIC]


def test_a_process_ends_without_waiting_for_a_lookup_that_never_answers(tmp_path: Path) -> None:
    script = (
        "import time\n"
        "from outbound.targets import Allowlist, LookupFailed, checked_addresses\n"
        "try:\n"
        "    never = lambda host, port: time.sleep(60)\n"
        "    checked_addresses('slow.example', 443, Allowlist(), never, 0.1)\n"
        "except LookupFailed:\n"
        "    print('given up')\n"
    )
    began = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", script], check=False, capture_output=True, text=True, timeout=30,
        cwd=Path(__file__).parents[2],
    )  # fmt: skip
    assert done.returncode == 0 and done.stdout.strip() == "given up", done.stderr
    assert time.monotonic() - began < 10


def test_the_event_loop_waits_for_a_lookup_without_taking_a_thread_of_its_executor() -> None:
    """Setting a URL in the API: while its name server does not answer, the loop's own
    threads (e-mail, readiness, metrics) serve others at once."""

    async def meanwhile(resolve: Resolver) -> tuple[float, float]:
        loop = asyncio.get_running_loop()
        loop.set_default_executor(ThreadPoolExecutor(1))
        setting = [
            asyncio.create_task(checked_url(f"https://slow{n}.example/", NONE, resolve, 0.5))
            for n in range(4)
        ]
        await asyncio.sleep(0.05)
        began = time.monotonic()
        await loop.run_in_executor(None, lambda: None)
        other = time.monotonic() - began
        results = await asyncio.gather(*setting, return_exceptions=True)
        assert all(isinstance(result, LookupFailed) for result in results), results
        return other, time.monotonic() - began

    with unanswered() as resolve:
        other, setting = asyncio.run(meanwhile(resolve))
    assert other < 0.2 and setting < 1.5


# The sink: a real HTTP server on loopback.


@dataclass(frozen=True)
class Hit:
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Sink:
    port: int
    hits: list[Hit] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    sink: Sink


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def do_POST(self) -> None:
        sink = cast(_Server, self.server).sink
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        headers = {k.lower(): v for k, v in self.headers.items()}
        sink.hits.append(Hit(self.path, headers, body))
        with contextlib.suppress(OSError):  # the client hung up (as it does on a huge answer)
            self._answer(sink)

    def _answer(self, sink: Sink) -> None:
        if self.path == "/silent":
            sink.release.wait(10)  # never answers while the test runs
            return
        if self.path == "/redirect":
            self.send_response(302)
            self.send_header("Location", "/elsewhere")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        size = {"/huge": 1_000_000, "/drip": 100}.get(self.path, 6)
        self.send_response(200)
        self.send_header("Content-Length", str(size))
        self.end_headers()
        if self.path == "/drip":  # a byte every 50 ms: each read is quick, the whole 5 s
            for _ in range(size):
                if sink.release.wait(0.05):
                    return
                self.wfile.write(b"x")
        elif self.path == "/huge":
            for _ in range(size // 10_000):
                self.wfile.write(b"x" * 10_000)
        else:
            self.wfile.write(b"thanks")


@pytest.fixture
def sink() -> Iterator[Sink]:
    server = _Server(("127.0.0.1", 0), _Handler)
    server.sink = Sink(server.server_address[1])
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    yield server.sink
    server.sink.release.set()
    server.shutdown()
    server.server_close()
    thread.join()


SIGNED = {
    "content-type": "application/json",
    "webhook-id": "msg_2Lh9",
    "webhook-timestamp": "1767225600",
    "webhook-signature": "v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=",
}


def test_a_post_arrives_with_its_body_and_headers(sink: Sink) -> None:
    delivered = post(sink.url("/hook?game=g1"), b'{"type":"moved"}', SIGNED, LOOPBACK)
    assert delivered == Delivered(status=200, body=b"thanks")
    assert delivered.ok
    [hit] = sink.hits
    assert hit.path == "/hook?game=g1"
    assert hit.body == b'{"type":"moved"}'
    assert {k: hit.headers[k] for k in SIGNED} == SIGNED
    assert hit.headers["host"] == f"127.0.0.1:{sink.port}"


def test_the_host_header_is_always_the_urls_host(sink: Sink) -> None:
    post(sink.url("/hook"), b"{}", {"Host": "admin.internal"}, LOOPBACK)
    assert sink.hits[0].headers["host"] == f"127.0.0.1:{sink.port}"


def test_post_connects_to_the_address_it_checked_without_a_second_lookup(sink: Sink) -> None:
    # `hooks.example` resolves nowhere but in this resolver: had the connection looked the
    # name up again, it would have failed.
    asked: list[str] = []

    def resolve(host: str, port: int) -> list[str]:
        asked.append(host)
        return ["127.0.0.1"]

    url = f"http://hooks.example:{sink.port}/hook"
    assert post(url, b"{}", SIGNED, LOOPBACK, resolve=resolve).ok
    assert asked == ["hooks.example"]
    assert sink.hits[0].headers["host"] == f"hooks.example:{sink.port}"


def test_a_redirect_is_not_followed_and_is_not_ok(sink: Sink) -> None:
    delivered = post(sink.url("/redirect"), b"{}", SIGNED, LOOPBACK)
    assert delivered.status == 302
    assert not delivered.ok
    assert [hit.path for hit in sink.hits] == ["/redirect"]


def test_a_huge_answer_is_read_only_up_to_max_body(sink: Sink) -> None:
    assert post(sink.url("/huge"), b"{}", SIGNED, LOOPBACK).body == b"x" * 65536
    assert post(sink.url("/huge"), b"{}", SIGNED, LOOPBACK, max_body=100).body == b"x" * 100


def test_a_server_that_never_answers_fails_at_the_read_time_out(sink: Sink) -> None:
    started = time.monotonic()
    with pytest.raises(DeliveryFailed, match="did not answer in time") as failed:
        post(sink.url("/silent"), b"{}", SIGNED, LOOPBACK, read_timeout=0.3)
    assert time.monotonic() - started < 3
    assert failed.value.reason == str(failed.value)


def test_a_server_dripping_its_answer_fails_at_the_read_time_out_in_all(sink: Sink) -> None:
    started = time.monotonic()
    with pytest.raises(DeliveryFailed, match="did not answer in time"):
        post(sink.url("/drip"), b"{}", SIGNED, LOOPBACK, read_timeout=0.5)
    assert time.monotonic() - started < 3


def test_without_the_allowlist_the_loopback_sink_is_refused(sink: Sink) -> None:
    with pytest.raises(TargetRefused, match="loopback"):
        post(sink.url("/hook"), b"{}", SIGNED, NONE)
    assert sink.hits == []


def test_a_port_where_nothing_listens_fails_to_deliver() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(DeliveryFailed, match="failed"):
        post(f"http://127.0.0.1:{port}/hook", b"{}", SIGNED, LOOPBACK)


def test_tls_verifies_the_certificate_for_the_host_name_sent_by_sni(tmp_path: Path) -> None:
    context = self_signed(tmp_path, "DNS:hooks.example").server_context()
    names: list[str | None] = []

    def sni(_socket: ssl.SSLObject, name: str | None, _context: ssl.SSLContext) -> None:
        names.append(name)

    context.sni_callback = sni
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(5)

    def serve() -> None:
        # The handshake fails: the client gives up on the (self-signed) certificate.
        with listener, listener.accept()[0] as raw, contextlib.suppress(OSError):
            context.wrap_socket(raw, server_side=True).close()

    thread = threading.Thread(target=serve)
    thread.start()
    url = f"https://hooks.example:{listener.getsockname()[1]}/hook"
    with pytest.raises(DeliveryFailed, match="certificate verify failed"):
        post(url, b"{}", SIGNED, LOOPBACK, resolve=answering("127.0.0.1"))
    thread.join()
    assert names == ["hooks.example"]

"""A worker's webhook sender keeps its connections open a few seconds: one receiver told of
turn after turn gets them over one connection (and, over https, one TLS handshake), while
every new connection is checked as before (SSRF, DNS rebinding), a connection serves only the
host it was opened for, each POST has its own read time-out, and a kept connection the
receiver closes just as it is used costs no failed delivery.

Real HTTP(S) receivers on loopback (allowed with `Allowlist.parse`), as in
test_webhook_targets.py; a raw socket where the receiver must misbehave on purpose."""

from __future__ import annotations

import contextlib
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, cast

import pytest

from outbound.targets import Allowlist, DeliveryFailed, TargetRefused
from tests.workers.mailbox import self_signed
from workers.webhook_sending import Delivered, WebhookSender

LOOPBACK = Allowlist.parse("127.0.0.1")
JSON = {"content-type": "application/json"}


@dataclass
class Receiver:
    """An HTTP/1.1 receiver that keeps connections open, as aiohttp's and uvicorn's do."""

    port: int
    scheme: str = "http"
    connections: set[tuple[str, int]] = field(default_factory=set)
    hosts: list[str] = field(default_factory=list)
    bodies: list[bytes] = field(default_factory=list)

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"{self.scheme}://{host}:{self.port}{path}"


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    receiver: Receiver


class _KeepAlive(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def do_POST(self) -> None:
        receiver = cast(_Server, self.server).receiver
        receiver.connections.add(self.client_address)
        receiver.hosts.append(self.headers["host"])
        receiver.bodies.append(self.rfile.read(int(self.headers["content-length"])))
        if self.path == "/slow":
            time.sleep(0.2)
        if self.path == "/drip":  # a byte every 50 ms: each read is quick, the whole 5 s
            self.send_response(200)
            self.send_header("content-length", "100")
            self.end_headers()
            with contextlib.suppress(OSError):
                for _ in range(100):
                    self.wfile.write(b"x")
                    self.wfile.flush()
                    time.sleep(0.05)
            return
        size = 1_000 if self.path == "/big" else 6
        self.send_response(200)
        self.send_header("content-length", str(size))
        self.end_headers()
        with contextlib.suppress(OSError):  # the sender hung up on a big answer
            self.wfile.write(b"x" * size if size > 6 else b"thanks")


@contextlib.contextmanager
def _serving(tls: ssl.SSLContext | None = None) -> Iterator[Receiver]:
    server = _Server(("127.0.0.1", 0), _KeepAlive)
    if tls is not None:
        server.socket = tls.wrap_socket(server.socket, server_side=True)
    server.receiver = Receiver(server.server_address[1], "https" if tls else "http")
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield server.receiver
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with _serving() as serving:
        yield serving


def resolving(answers: list[str], asked: list[str] | None = None) -> Any:
    """A resolver answering `answers[0]` (the test may change it) for any name."""

    def resolve(host: str, port: int) -> list[str]:
        if asked is not None:
            asked.append(host)
        return answers[:1]

    return resolve


def test_a_receiver_told_of_turn_after_turn_gets_them_over_one_connection(
    receiver: Receiver,
) -> None:
    with WebhookSender(LOOPBACK) as sender:
        for turn in range(20):
            assert sender.post(receiver.url("/hook"), b'{"turn":%d}' % turn, JSON).ok
        assert sender.connections_made == 1
    assert len(receiver.connections) == 1
    assert receiver.bodies == [b'{"turn":%d}' % turn for turn in range(20)]


def test_over_https_the_connection_and_its_handshake_serve_many_posts(tmp_path: Path) -> None:
    certificate = self_signed(tmp_path, "DNS:hooks.example")
    trusting = ssl.create_default_context(cafile=str(certificate.cert))
    with (
        _serving(certificate.server_context()) as receiver,
        WebhookSender(LOOPBACK, resolve=resolving(["127.0.0.1"]), tls=trusting) as sender,
    ):
        for _ in range(5):
            assert sender.post(receiver.url("/hook", "hooks.example"), b"{}", JSON).ok
        assert sender.connections_made == 1
    assert receiver.hosts == [f"hooks.example:{receiver.port}"] * 5


def test_a_kept_connection_is_used_without_a_new_lookup_and_a_new_one_is_checked_again(
    receiver: Receiver,
) -> None:
    answers, asked = ["127.0.0.1"], list[str]()
    url = receiver.url("/hook", "hooks.example")
    with WebhookSender(LOOPBACK, resolve=resolving(answers, asked), keep_alive=0.3) as sender:
        assert sender.post(url, b"{}", JSON).ok
        assert sender.post(url, b"{}", JSON).ok
        assert asked == ["hooks.example"]
        answers[0] = "10.0.0.1"  # the name now points inside our network
        time.sleep(0.5)  # the kept connection expires: the next needs a new one
        with pytest.raises(TargetRefused, match="private address"):
            sender.post(url, b"{}", JSON)
    assert len(receiver.bodies) == 2


def test_a_connection_serves_only_the_host_it_was_opened_for(receiver: Receiver) -> None:
    with WebhookSender(LOOPBACK, resolve=resolving(["127.0.0.1"])) as sender:
        for host in ("hooks-a.example", "hooks-b.example", "hooks-a.example"):
            assert sender.post(receiver.url("/hook", host), b"{}", JSON).ok
        assert sender.connections_made == 2
    port = receiver.port
    assert receiver.hosts == [f"hooks-{h}.example:{port}" for h in ("a", "b", "a")]


def test_each_post_on_a_kept_connection_has_its_own_read_time_out(receiver: Receiver) -> None:
    with WebhookSender(LOOPBACK) as sender:
        assert sender.post(receiver.url("/hook"), b"{}", JSON, read_timeout=0.5).ok
        time.sleep(0.6)  # longer than a read time-out counted from the connection
        assert sender.post(receiver.url("/hook"), b"{}", JSON, read_timeout=0.5).ok
        with pytest.raises(DeliveryFailed, match="did not answer in time"):
            sender.post(receiver.url("/slow"), b"{}", JSON, read_timeout=0.1)
        assert sender.connections_made == 1


def test_an_answer_dripping_on_a_kept_connection_fails_at_the_read_time_out_in_all(
    receiver: Receiver,
) -> None:
    with WebhookSender(LOOPBACK) as sender:
        assert sender.post(receiver.url("/hook"), b"{}", JSON).ok
        started = time.monotonic()
        with pytest.raises(DeliveryFailed, match="did not answer in time"):
            sender.post(receiver.url("/drip"), b"{}", JSON, read_timeout=0.5)
        assert time.monotonic() - started < 3
        assert sender.connections_made == 1


def test_a_connection_whose_answer_was_cut_at_max_body_is_not_kept(receiver: Receiver) -> None:
    with WebhookSender(LOOPBACK) as sender:
        assert sender.post(receiver.url("/big"), b"{}", JSON, max_body=100).body == b"x" * 100
        assert sender.post(receiver.url("/hook"), b"{}", JSON).ok
        assert sender.connections_made == 2


OK = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok"


class _Scripted:
    """A receiver on a raw socket that plays a script: for each connection in turn, what it
    sends after each request it reads (None: it hangs up instead, unanswered); once a
    connection's part is played, or the sender closed it, it closes that connection."""

    def __init__(self, *connections: list[bytes | None]) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.settimeout(5)
        self.port = self.listener.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}/hook"
        self.requests: list[bytes] = []
        self.thread = threading.Thread(target=self._serve, args=(connections,))
        self.thread.start()

    def _serve(self, connections: tuple[list[bytes | None], ...]) -> None:
        with self.listener:
            for acts in connections:
                connection, _ = self.listener.accept()
                with connection, connection.makefile("rb") as reading:
                    for act in acts:
                        request = self._read(reading)
                        if request is None:
                            break  # the sender closed the connection
                        self.requests.append(request)
                        if act is None:
                            break
                        connection.sendall(act)

    @staticmethod
    def _read(reading: Any) -> bytes | None:
        length, line = 0, reading.readline()
        if not line:
            return None
        while line not in (b"\r\n", b""):
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
            line = reading.readline()
        return bytes(reading.read(length))

    def done(self) -> list[bytes]:
        """The body of each request it read, once its script is played."""
        self.thread.join()
        return self.requests


def test_a_kept_connection_the_receiver_closes_as_it_is_used_sends_again_on_a_new_one() -> None:
    receiver = _Scripted([OK, None], [OK])  # the second POST dropped unanswered, then answered
    with WebhookSender(LOOPBACK) as sender:
        assert sender.post(receiver.url, b"1", JSON).ok
        assert sender.post(receiver.url, b"2", JSON).ok
        assert sender.connections_made == 2
    assert receiver.done() == [b"1", b"2", b"2"]


def test_a_new_connection_closed_unanswered_is_a_failed_delivery_sent_once() -> None:
    # The first connection closed by the receiver after its answer: the second POST needs a
    # new one, however soon it comes (and then, after a kept connection's time, too).
    receiver = _Scripted([OK], [None], [OK], [None])
    with WebhookSender(LOOPBACK, keep_alive=0.3) as sender:
        assert sender.post(receiver.url, b"1", JSON).ok
        with pytest.raises(DeliveryFailed, match="without sending a response"):
            sender.post(receiver.url, b"2", JSON)
        assert sender.post(receiver.url, b"3", JSON).ok
        time.sleep(0.5)
        with pytest.raises(DeliveryFailed, match="without sending a response"):
            sender.post(receiver.url, b"4", JSON)
    assert receiver.done() == [b"1", b"2", b"3", b"4"]


def test_an_answer_begun_and_cut_off_on_a_kept_connection_is_a_failure_never_sent_again() -> None:
    cut = b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nok"  # 2 of 10 bytes, then closed
    receiver = _Scripted([OK, cut])
    with WebhookSender(LOOPBACK) as sender:
        assert sender.post(receiver.url, b"1", JSON).ok
        with pytest.raises(DeliveryFailed, match="complete message body"):
            sender.post(receiver.url, b"2", JSON)
    assert receiver.done() == [b"1", b"2"]


def test_bytes_a_receiver_sends_beyond_its_answer_never_answer_the_next_post() -> None:
    canned = b"HTTP/1.1 418 I'm a teapot\r\ncontent-length: 6\r\n\r\ncanned"
    answer = b"HTTP/1.1 201 Created\r\ncontent-length: 6\r\n\r\nsecond"
    # The first connection stays open; had it been used again, its 418 would answer POST 2.
    receiver = _Scripted([OK + canned, answer], [answer])
    with WebhookSender(LOOPBACK) as sender:
        assert sender.post(receiver.url, b"1", JSON).body == b"ok"
        assert sender.post(receiver.url, b"2", JSON) == Delivered(201, b"second")
        assert sender.connections_made == 2
    assert receiver.done() == [b"1", b"2"]


def test_a_receiver_that_accepts_but_never_finishes_the_tls_handshake_is_told_as_such() -> None:
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(5)
    url = f"https://hooks.example:{listener.getsockname()[1]}/hook"
    with listener, WebhookSender(LOOPBACK, resolve=resolving(["127.0.0.1"])) as sender:
        started = time.monotonic()
        with pytest.raises(DeliveryFailed, match="did not finish the TLS handshake in time"):
            sender.post(url, b"{}", JSON, read_timeout=0.5)
        assert time.monotonic() - started < 3
        listener.accept()[0].close()  # it was accepted, and never spoken to


def test_a_host_whose_name_server_never_answers_fails_within_the_connect_time_out() -> None:
    """The lookup counts in the connect time-out: a player's name server that never answers
    makes a failed delivery (tried again later) in that time, not a worker thread stuck for
    as long as the system's resolver keeps trying."""
    released = threading.Event()

    def unanswered(host: str, port: int) -> list[str]:
        released.wait(30)
        return ["127.0.0.1"]

    try:
        with WebhookSender(LOOPBACK, resolve=unanswered) as sender:
            started = time.monotonic()
            with pytest.raises(DeliveryFailed, match=r"could not be looked up within 0\.3 s"):
                sender.post("http://hooks.example/hook", b"{}", JSON, connect_timeout=0.3)
            assert time.monotonic() - started < 1.5
            assert sender.connections_made == 0
    finally:
        released.set()

"""`patrician serve --server uvicorn|granian`: the same app under either ASGI server, its
start and stop run, its bodies, streams and keep-alive served, SIGTERM ending it cleanly."""

from __future__ import annotations

import os
import random
import signal
import socket
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from server.cli.main import main
from server.transport.serving import SERVERS
from tests.server.client import Api
from tests.server.live import LiveServer, delete_prefix, serving, unique_prefix
from tests.server.sse import read_stream


@pytest.fixture(params=SERVERS)
def served(request: pytest.FixtureRequest, redis_url: str, tmp_path: Path) -> Iterator[LiveServer]:
    """One `patrician serve` under each ASGI server, on the real Redis."""
    yield from serving("serving", tmp_path, redis_url, env={"PATRICIAN_SERVER": request.param})


@pytest.mark.redis
def test_either_server_runs_the_apps_start_and_serves_a_game_over_one_connection(
    served: LiveServer,
) -> None:
    with httpx.Client(base_url=served.url, timeout=30) as http:
        # The startup hook listed the signing key: it ran under this server too.
        assert http.get("/api/keys").json()["keys"], served.log()
        api = Api(http)
        table = api.new_table(2, "towers", (), random.Random(3))
        rng = random.Random(4)
        for _ in range(6):  # POST bodies, one kept-alive connection
            table.step(rng, whole_turn=False)
        too_big = http.post(
            f"{table.path}/commands", content=b"{" + b" " * 2_000_000 + b"}",
            headers={**table.seats[0].auth, "Content-Type": "application/json"},
        )  # fmt: skip
        assert too_big.status_code == 413
        answered = http.get(f"{table.path}/events")
        assert answered.status_code == 200
        assert answered.headers.get("connection", "keep-alive").lower() != "close"


@pytest.mark.redis
def test_either_server_answers_a_body_too_large_with_its_413_every_time(
    served: LiveServer,
) -> None:
    """The refusal is sent once the body is read and dropped (`server.transport.linger`): without
    that, granian reset about one connection in fifty, and the client saw no answer."""
    with httpx.Client(base_url=served.url, timeout=30) as http:
        for path in ("/api/games/gnosuchgame/commands", "/api/players"):
            for _ in range(25):
                answered = http.post(
                    path, content=b"{" + b" " * 2_000_000 + b"}",
                    headers={"Content-Type": "application/json"},
                )  # fmt: skip
                assert answered.status_code == 413, answered.text
                assert answered.json()["error"] == "body_too_large"


@pytest.mark.redis
def test_neither_server_takes_a_forwarded_address_from_a_client_that_is_no_trusted_proxy(
    redis_url: str, tmp_path: Path
) -> None:
    """Without PATRICIAN_TRUSTED_PROXIES the peer is the client: a local client that names
    other addresses in `X-Forwarded-For` is still counted as itself by the rate limits."""
    for server in SERVERS:
        prefix = unique_prefix("forwarded")
        live = LiveServer(
            prefix, tmp_path / server, redis_url,
            env={"PATRICIAN_SERVER": server, "PATRICIAN_RATE_PLAYERS": "3"},
        )  # fmt: skip
        (tmp_path / server).mkdir()
        try:
            live.start()
            with httpx.Client(base_url=live.url, timeout=30) as http:
                statuses = [
                    http.post(
                        "/api/players", json={"name": f"p{number}"},
                        headers={"X-Forwarded-For": f"203.0.113.{number}"},
                    ).status_code
                    for number in range(5)
                ]  # fmt: skip
            assert statuses == [201, 201, 201, 429, 429], (server, statuses)
        finally:
            live.stop()
            delete_prefix(prefix, redis_url)


@pytest.mark.redis
def test_either_server_streams_events_as_they_happen(served: LiveServer) -> None:
    with httpx.Client(base_url=served.url, timeout=30) as http:
        table = Api(http).new_table(2, "towers", (), random.Random(5))
        version = table.version
        table.step(random.Random(6), whole_turn=False)
        seat = table.seats[0].auth
        got = read_stream(http, f"{table.path}/stream?after={version}", until=table.version,
                          headers=seat)  # fmt: skip
        assert [message.id for message in got][-1] == table.version


@pytest.mark.redis
def test_sigterm_stops_either_server_and_its_workers_cleanly(served: LiveServer) -> None:
    process = served.process
    assert process is not None
    workers = _children(process.pid)
    os.kill(process.pid, signal.SIGTERM)
    # uvicorn, once shut down, ends itself by the signal it was sent; granian exits 0.
    assert process.wait(timeout=15) in (0, -signal.SIGTERM), served.log()
    assert not [pid for pid in workers if Path(f"/proc/{pid}").exists()], served.log()
    assert "Traceback" not in served.log()


def test_an_unknown_server_is_refused_naming_the_choices() -> None:
    result = CliRunner().invoke(main, ["serve", "--server", "hypercorn"])
    assert result.exit_code == 2
    assert "'uvicorn'" in result.output and "'granian'" in result.output


def _children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry))
    return found


@pytest.mark.redis
def test_the_default_server_answers_a_client_that_closed_its_side_after_its_request(
    live_server: LiveServer,
) -> None:
    """`shutdown(SHUT_WR)` right after the request, as `nc -N` and some health checkers do:
    the answer (which waits on Redis) still comes, then the close (docs/operations.md)."""
    requests = [b"GET /healthz HTTP/1.1\r\nhost: x\r\n\r\n"] * 10
    body = b'{"name": "half"}'
    requests.append(
        b"POST /api/players HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
        b"content-length: %d\r\n\r\n%s" % (len(body), body)
    )
    answers = []
    for request in requests:
        with socket.create_connection(("127.0.0.1", live_server.port), timeout=10) as client:
            client.sendall(request)
            client.shutdown(socket.SHUT_WR)
            answer = b""
            while chunk := client.recv(65536):  # to the server's close
                answer += chunk
        answers.append(answer.split(b"\r\n", 1)[0])
    assert answers == [b"HTTP/1.1 200 OK"] * 10 + [b"HTTP/1.1 201 Created"], live_server.log()

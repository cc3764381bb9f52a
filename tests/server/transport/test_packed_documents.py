"""Replays and records sent gzipped by their handlers (`server.transport.packed`): to a client that
takes gzip, the gzip bytes themselves (`Content-Encoding: gzip`, compressed once, never by the
app's middleware on top), which decompress to exactly the plain JSON others get; in play
gzipped anew each time, as the document changes; once the game is over made once and kept.
Without gzip in `Accept-Encoding`, plain JSON. Both vary with `Accept-Encoding`."""

from __future__ import annotations

import asyncio
import gzip
import random

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from server.transport.packed import Packer
from tests.server.client import Api, Player, Table

pytestmark = pytest.mark.timeout(120)

DOCUMENTS = ("replay", "record")


def raw(
    client: TestClient[Litestar], path: str, accept: str, player: Player | None = None
) -> tuple[dict[str, str], bytes]:
    """The headers and the bytes on the wire (httpx would decompress them)."""
    headers = {"Accept-Encoding": accept, **(player.auth if player else {})}
    with client.stream("GET", path, headers=headers) as response:
        assert response.status_code == 200
        return dict(response.headers), b"".join(response.iter_raw())


def check_packed(client: TestClient[Litestar], path: str, player: Player | None = None) -> bytes:
    """The gzip answer of `path` decompresses to its plain answer; the gzip bytes."""
    plain_headers, plain = raw(client, path, "identity", player)
    assert "content-encoding" not in plain_headers
    assert plain_headers["vary"] == "Accept-Encoding"
    assert plain.startswith(b"{") and len(plain) > 1024
    headers, packed = raw(client, path, "gzip, deflate, br", player)
    assert headers["content-encoding"] == "gzip"
    assert headers["vary"] == "Accept-Encoding"
    assert headers["content-type"].startswith("application/json")
    # A third at most: a finished record's seal carries some twenty random digests, which
    # no compression shrinks (the rest gzips to about a fifth).
    assert int(headers["content-length"]) == len(packed) < len(plain) // 3
    assert gzip.decompress(packed) == plain, "gzipped once, to the very same JSON"
    return packed


@pytest.fixture
def table(api: Api) -> Table:
    table = api.new_table(3, "towers", ("delegates",), random.Random(11))
    rng = random.Random(11)
    for _ in range(8):
        table.step(rng, whole_turn=True)
    return table


@pytest.mark.parametrize("document", DOCUMENTS)
def test_a_document_in_play_is_gzipped_per_request_to_its_plain_json(
    client: TestClient[Litestar], table: Table, document: str
) -> None:
    path = f"{table.path}/{document}"
    for player in (None, table.seats[0]):
        before = check_packed(client, path, player)
        table.step(random.Random(1), whole_turn=False)
        after = check_packed(client, path, player)
        assert before != after, "the document moved on with the game"


@pytest.mark.parametrize("document", DOCUMENTS)
def test_a_finished_games_document_comes_gzipped_the_same_every_time(
    client: TestClient[Litestar], table: Table, document: str
) -> None:
    table.play_to_end(random.Random(12), whole_turns=1.0)
    path = f"{table.path}/{document}"
    first = check_packed(client, path)
    assert check_packed(client, path) == first
    assert check_packed(client, path, table.seats[1]) != b""


@pytest.mark.parametrize(
    "accept", ["", "identity", "gzip;q=0", "br", "deflate", "gzip;q=0, identity"]
)
@pytest.mark.parametrize("document", DOCUMENTS)
def test_without_gzip_in_accept_encoding_the_answer_is_plain_json(
    client: TestClient[Litestar], table: Table, document: str, accept: str
) -> None:
    headers, body = raw(client, f"{table.path}/{document}", accept)
    assert "content-encoding" not in headers and headers["vary"] == "Accept-Encoding"
    assert body.startswith(b"{") and body.endswith(b"}")


def test_a_finished_documents_gzip_bytes_are_made_once_and_short_ones_never() -> None:
    made: list[bytes] = []

    async def plain(body: bytes) -> bytes:
        made.append(body)
        return body

    async def scenario() -> None:
        packer = Packer(2)
        long = b'{"steps": [' + b'{"x": 1},' * 400 + b"{}]}"
        for _ in range(3):
            kept = await packer.encode(("a",), lambda: plain(long), gzipped=True, final=True)
            assert kept.gzipped and gzip.decompress(kept.body) == long
        assert made == [long], "made once, then answered from the kept bytes"
        anew = await packer.encode(("b",), lambda: plain(long), gzipped=True, final=False)
        again = await packer.encode(("b",), lambda: plain(long), gzipped=True, final=False)
        assert anew == again and len(made) == 3, "in play: made again each time"
        short = await packer.encode(("c",), lambda: plain(b"{}"), gzipped=True, final=True)
        assert short.body == b"{}" and not short.gzipped
        plain_answer = await packer.encode(("a",), lambda: plain(long), gzipped=False, final=True)
        assert plain_answer.body == long and not plain_answer.gzipped

    asyncio.run(scenario())

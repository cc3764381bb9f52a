"""The server's keys over their lives: a key file read or a key made at start, listed once;
a new key file retires every key in use before it, and a key made for one process retires
nothing; the list is every key ever used, oldest first (docs/record.md, "Signatures")."""

from __future__ import annotations

from pathlib import Path

import fakeredis
import pytest

from store.client import EventStore
from workers.signing import (
    KeyFileError,
    announce_op,
    key_list_op,
    load_signer,
    signer_for,
    write_key_file,
)

PREFIX = "keys-test"


@pytest.fixture
def store() -> EventStore:
    return EventStore(fakeredis.FakeRedis(), prefix=PREFIX)


def test_a_new_key_file_retires_the_keys_in_use_before_it(
    store: EventStore, tmp_path: Path
) -> None:
    first = write_key_file(tmp_path / "first.pem")
    assert store.run(announce_op(PREFIX, first, "2026-01-01T00:00:00Z", lasting=True))
    # Each API process and worker of the deployment announces the same key: listed once.
    assert not store.run(announce_op(PREFIX, first, "2026-01-02T00:00:00Z", lasting=True))
    passing = signer_for(None)  # a process without a key file (a test, the embedded server)
    store.run(announce_op(PREFIX, passing, "2026-02-01T00:00:00Z", lasting=False))
    write_key_file(tmp_path / "second.pem")
    second = load_signer(tmp_path / "second.pem")
    store.run(announce_op(PREFIX, second, "2026-03-01T00:00:00Z", lasting=True))
    keys = store.run(key_list_op(PREFIX)).keys
    assert [k.key_id for k in keys] == [first.key_id, passing.key_id, second.key_id]
    assert [k.since for k in keys] == [
        "2026-01-01T00:00:00Z", "2026-02-01T00:00:00Z", "2026-03-01T00:00:00Z"
    ]  # fmt: skip
    assert [k.retired for k in keys] == ["2026-03-01T00:00:00Z"] * 2 + [None]
    assert all(k.algorithm == "Ed25519" and len(bytes.fromhex(k.public_key)) == 32 for k in keys)
    assert keys[0].public_key == first.public.hex()


def test_a_key_file_that_cannot_be_used_is_refused_saying_why(tmp_path: Path) -> None:
    with pytest.raises(KeyFileError, match=r"missing\.pem"):
        load_signer(tmp_path / "missing.pem")
    (tmp_path / "junk.pem").write_text("not a key")
    with pytest.raises(KeyFileError, match=r"junk\.pem"):
        load_signer(tmp_path / "junk.pem")
    with pytest.raises(FileExistsError):
        write_key_file(tmp_path / "junk.pem")


def test_the_same_key_file_signs_the_same_receipt_in_every_process(tmp_path: Path) -> None:
    path = tmp_path / "key.pem"
    write_key_file(path)
    one, other = load_signer(path), load_signer(path)
    assert one.receipt("g1", 7, "ab" * 32, "2026-12-01T00:00:00.000Z") == other.receipt(
        "g1", 7, "ab" * 32, "2026-12-01T00:00:00.000Z"
    )

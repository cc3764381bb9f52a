"""The server's keys over their lives: a key file read or a key made at start, listed once
before it signs; retired by the operator alone, once (a rolling deploy cuts off no process
still signing with the old key), and never signing again; the list is every key ever used,
oldest first (docs/record.md, "Signatures")."""

from __future__ import annotations

from pathlib import Path

import fakeredis
import msgspec
import pytest

from evidence.signatures import key_list_decoder
from evidence.signing_keys import (
    KeyFileError,
    KeyRetired,
    announce_op,
    key_list_op,
    keys_op,
    load_signer,
    retire_op,
    signer_for,
    update_keys_op,
    write_key_file,
)
from store.client import EventStore

PREFIX = "keys-test"


@pytest.fixture
def store() -> EventStore:
    return EventStore(fakeredis.FakeRedis(), prefix=PREFIX)


def test_keys_are_listed_before_they_sign_and_retired_only_by_the_operator(
    store: EventStore, tmp_path: Path
) -> None:
    first = write_key_file(tmp_path / "first.pem")
    assert store.run(announce_op(PREFIX, first, "2026-01-01T00:00:00Z"))
    # Each API process and worker of the deployment announces the same key: listed once.
    assert not store.run(announce_op(PREFIX, first, "2026-01-02T00:00:00Z"))
    passing = signer_for(None)  # a process without a key file (a test, the embedded server)
    store.run(announce_op(PREFIX, passing, "2026-02-01T00:00:00Z"))
    # A rolling deploy: the new key starts while processes with the old one still sign.
    second = write_key_file(tmp_path / "second.pem")
    store.run(announce_op(PREFIX, second, "2026-03-01T00:00:00Z"))
    keys = store.run(key_list_op(PREFIX)).keys
    assert [k.key_id for k in keys] == [first.key_id, passing.key_id, second.key_id]
    assert [k.retired for k in keys] == [None, None, None], "no key retires another"
    # Once every process signs with the new key, the operator retires the old one.
    retired = store.run(retire_op(PREFIX, first.key_id, "2026-03-02T00:00:00Z"))
    assert retired is not None and retired.retired == "2026-03-02T00:00:00Z"
    again = store.run(retire_op(PREFIX, first.key_id, "2026-04-01T00:00:00Z"))
    assert again is not None and again.retired == "2026-03-02T00:00:00Z", "retired once"
    assert store.run(retire_op(PREFIX, "0" * 16, "2026-04-01T00:00:00Z")) is None
    keys = store.run(key_list_op(PREFIX)).keys
    assert [k.since for k in keys] == [
        "2026-01-01T00:00:00Z", "2026-02-01T00:00:00Z", "2026-03-01T00:00:00Z"
    ]  # fmt: skip
    assert [k.retired for k in keys] == ["2026-03-02T00:00:00Z", None, None]
    assert all(k.algorithm == "Ed25519" and len(bytes.fromhex(k.public_key)) == 32 for k in keys)
    # A rollback to the old key file: the process refuses to sign with it.
    with pytest.raises(KeyRetired, match=first.key_id):
        store.run(announce_op(PREFIX, load_signer(tmp_path / "first.pem"), "2026-05-01T00:00:00Z"))


def test_a_key_description_a_newer_server_wrote_is_read_still(store: EventStore) -> None:
    """Stored data is read leniently: a field added later (a revocation, say) is passed over
    where the list is stored, never where an audit is handed a list."""
    signer = signer_for(None)
    store.run(announce_op(PREFIX, signer, "2026-01-01T00:00:00Z"))
    raw = store.run(keys_op(PREFIX))[signer.key_id]
    widened = msgspec.json.encode({**msgspec.json.decode(raw), "revoked": True})
    store.run(update_keys_op(PREFIX, {signer.key_id: widened}))
    assert store.run(key_list_op(PREFIX)).keys[0].key_id == signer.key_id
    assert not store.run(announce_op(PREFIX, signer, "2026-01-02T00:00:00Z"))
    with pytest.raises(msgspec.ValidationError, match="revoked"):
        key_list_decoder.decode(b'{"keys": [%s]}' % widened)


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

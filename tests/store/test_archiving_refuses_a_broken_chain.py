"""Archiving verifies the live chain before it writes anything: a finished game one of whose
events was rewritten behind the store's back (its bytes changed, its stored chain hash kept)
is refused, by `archive_game` and by the workers' sweep alike, with no archive written (no
archive key, no file in the archive folder) and every live key as it was (docs/store.md,
"Archive": step 1 builds the archive and verifies it, the live chain, before any write)."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec
import pytest

from bench.memory import play_finished_game
from server.config.card_data import load_game_data
from store.archived import archive_key
from store.archiving import archive_game
from store.client import EventStore
from store.command_path import CommandPath
from store.errors import CorruptGame
from tests.store.conftest import BACKENDS
from workers.archiving import archive_finished

A_DAY_LATER = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
"""A day after the games of `play_finished_game` end: long enough for any sweep."""


def _rewrite_a_name(client: Any, store: EventStore, game_id: str) -> int:
    """Rename the last player who joined, in the stream itself: the entry's bytes change, its
    chain hash (and every other field, and every other entry) stays. A stream entry cannot be
    edited in place, so the stream is written again, entry by entry, under the same ids. The
    version rewritten."""
    key = store.keys.game(game_id).events
    entries = client.xrange(key)
    joins = [n for n, (_, fields) in enumerate(entries) if b'"seat_joined"' in fields[b"d"]]
    entry_id, fields = entries[joins[-1]]
    event = msgspec.json.decode(fields[b"d"])
    event["name"] = "Mallory"
    entries[joins[-1]] = (entry_id, {**fields, b"d": msgspec.json.encode(event)})
    pipe = client.pipeline(transaction=True)
    pipe.delete(key)
    for each_id, each_fields in entries:
        pipe.xadd(key, each_fields, id=each_id)
    pipe.execute()
    return joins[-1] + 1


def _dump(client: Any, prefix: str) -> dict[bytes, bytes]:
    """Every key of the test's prefix, each as DUMP serializes it (its type and contents)."""
    return {key: client.dump(key) for key in client.scan_iter(match=f"{prefix}:*", count=1000)}


def _files(folder: Path) -> list[Path]:
    """Every file under `folder`, a temporary one too (none when it was never made)."""
    return sorted(path for path in folder.rglob("*") if path.is_file())


@pytest.mark.parametrize("kept", ["in-redis", "in-a-folder"])
@pytest.mark.parametrize("backend", BACKENDS, indirect=True)
def test_a_finished_game_with_a_rewritten_event_is_refused_and_left_as_it_was(
    store: EventStore, client: Any, prefix: str, tmp_path: Path, kept: str
) -> None:
    play_finished_game(
        store, CommandPath(store.context, load_game_data()), "g", seats=2, modules=(), seed=14
    )
    version = _rewrite_a_name(client, store, "g")
    assert b"Mallory" in store.read("g", after=version - 1, to=version)[0].data
    folder = tmp_path / "archives"
    archiver = EventStore(
        client, prefix=prefix, archive_dir=str(folder) if kept == "in-a-folder" else None
    )
    before = _dump(client, prefix)
    assert store.keys.game("g").events.encode() in before
    with pytest.raises(CorruptGame, match=f"version {version}"):
        archive_game(archiver, "g")
    assert archive_finished(archiver, 0, clock=lambda: A_DAY_LATER) == Counter(failed=1)
    assert _files(folder) == []
    assert not client.exists(archive_key(store.keys.game("g")))
    assert _dump(client, prefix) == before

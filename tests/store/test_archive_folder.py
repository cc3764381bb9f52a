"""Archives kept in a folder (`PATRICIAN_ARCHIVE_DIR`, `store.shelf`): a finished game then
takes a reference of some hundred bytes in Redis, every read answers as it did live, appends
are refused as before, and a file that is missing, swapped or damaged is refused, never read
(docs/store.md, "Archive in a folder")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bench.memory import play_finished_game
from server.config.card_data import load_game_data
from store.archive import unpack
from store.archived import Archived, archive_key
from store.archiving import archive_game, archive_game_op
from store.client import EventStore
from store.command_path import CommandPath
from store.errors import CorruptGame
from store.memory import game_memory
from store.protocol import Eval
from store.shelf import REFERENCE, Shelf
from tests.store.conftest import BACKENDS
from tests.store.test_archive import _answer, _reads, _step, late_calls


def _shelved(store: EventStore, folder: Path) -> EventStore:
    """A store on the same Redis and prefix that keeps its archives in `folder`."""
    return EventStore(store.client, prefix=store.keys.prefix, archive_dir=str(folder))


def _files(folder: Path) -> list[Path]:
    return sorted(folder.glob("*/*.archive"))


@pytest.fixture
def path(store: EventStore) -> CommandPath:
    return CommandPath(store.context, load_game_data())


@pytest.mark.parametrize("backend", BACKENDS, indirect=True)
def test_a_game_archived_to_a_folder_reads_as_it_did_live_and_keeps_a_reference_in_redis(
    store: EventStore, path: CommandPath, client: Any, tmp_path: Path, backend: str
) -> None:
    play_finished_game(store, path, "fold-1", seats=3, modules=("delegates",), seed=6)
    before = _reads(store, "fold-1")
    shelved = _shelved(store, tmp_path)
    assert archive_game(shelved, "fold-1") == "archived"
    keys = store.keys.game("fold-1")
    assert [client.exists(key) for key in (keys.events, keys.commands, keys.snapshot)] == [0] * 3
    reference = client.get(archive_key(keys))
    assert reference.startswith(REFERENCE) and len(reference) < 100
    [file] = _files(tmp_path)
    assert file.name == reference.removeprefix(REFERENCE).decode() + ".archive"
    assert unpack(file.read_bytes(), "fold-1").version == before[3].version
    if backend != "fakeredis":  # which has no MEMORY USAGE
        assert (
            game_memory(client, store.keys, "fold-1")["total"] < 1_000
        )  # bytes of Redis memory, not KB
    reader = _shelved(store, tmp_path)  # a process that never saw it live
    assert _reads(reader, "fold-1") == before


@pytest.mark.parametrize("backend", BACKENDS, indirect=True)
def test_a_game_archived_to_a_folder_refuses_appends_as_the_live_game_would(
    store: EventStore, path: CommandPath, tmp_path: Path
) -> None:
    play_finished_game(store, path, "fold-2", seats=2, modules=(), seed=7)
    head, calls = store.head("fold-2"), late_calls(store, "fold-2")
    live = [_answer(store, "fold-2", call) for call in calls]
    assert archive_game(_shelved(store, tmp_path), "fold-2") == "archived"
    assert [_answer(_shelved(store, tmp_path), "fold-2", call) for call in calls] == live
    with pytest.raises(Archived):
        _shelved(store, tmp_path).append("fold-2", head.version, [b'{"type":"late"}'], "late")
    with pytest.raises(Archived):  # a process without the folder still sees it archived
        EventStore(store.client, prefix=store.keys.prefix).append(
            "fold-2", head.version, [b'{"type":"late"}'], "late"
        )
    assert _shelved(store, tmp_path).head("fold-2") == head


@pytest.mark.parametrize(
    "damage",
    ["removed", "flipped", "swapped"],
)
@pytest.mark.parametrize("backend", ["fakeredis"], indirect=True)
def test_an_archive_file_that_is_missing_damaged_or_swapped_is_refused_never_read(
    store: EventStore, path: CommandPath, client: Any, tmp_path: Path, damage: str
) -> None:
    game_id, other = f"fold-{damage}", f"fold-{damage}-other"
    play_finished_game(store, path, game_id, seats=2, modules=(), seed=10)
    play_finished_game(store, path, other, seats=2, modules=(), seed=11)
    shelved = _shelved(store, tmp_path)
    assert archive_game(shelved, game_id) == archive_game(shelved, other) == "archived"
    reference = client.get(archive_key(store.keys.game(game_id)))
    shelf = Shelf(tmp_path)
    file = shelf.path(reference.removeprefix(REFERENCE).decode())
    if damage == "removed":
        file.unlink()
    elif damage == "flipped":
        packed = file.read_bytes()
        file.write_bytes(packed[:-1] + bytes([packed[-1] ^ 1]))
    else:  # the other game's archive put in its place
        other_reference = client.get(archive_key(store.keys.game(other)))
        other_file = shelf.path(other_reference.removeprefix(REFERENCE).decode())
        file.write_bytes(other_file.read_bytes())
    with pytest.raises(CorruptGame, match="archive file"):
        _shelved(store, tmp_path).read(game_id)


@pytest.mark.parametrize("backend", ["fakeredis"], indirect=True)
def test_a_process_given_no_folder_says_the_archive_is_in_one_rather_than_reading_nothing(
    store: EventStore, path: CommandPath, tmp_path: Path
) -> None:
    play_finished_game(store, path, "fold-3", seats=2, modules=(), seed=12)
    assert archive_game(_shelved(store, tmp_path), "fold-3") == "archived"
    with pytest.raises(CorruptGame, match="kept in a folder"):
        EventStore(store.client, prefix=store.keys.prefix).read("fold-3")


@pytest.mark.parametrize("backend", ["fakeredis"], indirect=True)
def test_archiving_to_a_folder_stopped_before_its_last_step_leaves_the_game_live_and_runs_again(
    store: EventStore, path: CommandPath, client: Any, tmp_path: Path
) -> None:
    play_finished_game(store, path, "fold-4", seats=2, modules=(), seed=13)
    before = _reads(store, "fold-4")
    shelved = _shelved(store, tmp_path)
    op = archive_game_op(shelved.context, "fold-4")
    request = next(op)
    while not (isinstance(request, Eval) and request.script == "retire"):
        request = _step(op, client, request)
    op.close()  # the worker dies here: file written, reference set, live keys still there
    assert len(_files(tmp_path)) == 1 and client.exists(store.keys.game("fold-4").events)
    assert _reads(_shelved(store, tmp_path), "fold-4") == before  # the live keys answer
    assert archive_game(shelved, "fold-4") == "archived"  # the same file, written again
    assert len(_files(tmp_path)) == 1
    assert _reads(_shelved(store, tmp_path), "fold-4") == before

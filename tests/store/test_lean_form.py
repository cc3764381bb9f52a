"""New games are stored in the lean form, and games stored before it read, load, play on and
make the same record as if they had been stored lean (docs/store.md, "Stream entries")."""

from __future__ import annotations

import random
from typing import Any

import msgspec
import pytest

from bench.memory import play_finished_game
from domain.legal import legal_commands
from evidence.appends import command_of
from evidence.record import LoggedEvent, build_record
from server.config.card_data import load_game_data
from store.appending import default_digest
from store.client import EventStore
from store.command_path import CommandPath
from store.errors import CommandIdReused, DuplicateCommand
from store.games import execute_op
from store.loading import load_game
from store.reads import batches_op, current_op, log_op
from store.stored import AppendMeta, command_key, meta_decoder
from tests.store.conftest import BACKENDS
from tests.store.old_form import write_old_game

pytestmark = pytest.mark.parametrize("backend", BACKENDS, indirect=True)

NOW = "2026-12-01T12:00:00.000Z"


@pytest.fixture
def path(store: EventStore) -> CommandPath:
    return CommandPath(store.context, load_game_data())


def _record(store: EventStore, path: CommandPath, game_id: str) -> bytes:
    """The game's record as the server builds it, under one name whatever the game's id."""
    fresh = CommandPath(store.context, path.game_data)  # no cached state: read from Redis
    state = store.run(current_op(fresh, game_id))
    log = [LoggedEvent(*entry) for entry in store.run(log_op(fresh, game_id))]
    commands = [command_of(batch) for batch in store.run(batches_op(fresh, game_id))]
    return msgspec.json.encode(build_record("the-game", state, log, commands, None))


def test_a_new_game_keeps_raw_hashes_compact_metadata_and_lean_command_memos(
    store: EventStore, path: CommandPath, client: Any
) -> None:
    play_finished_game(store, path, "g", seats=2, modules=(), seed=3)
    keys = store.keys.game("g")
    entries = client.xrange(keys.events)
    _first_id, first = entries[0]
    assert sorted(first) == [b"H", b"M", b"c", b"d"] and len(first[b"H"]) == 32
    assert all(sorted(fields) in ([b"H", b"d"], [b"H", b"M", b"c", b"d"]) for _, fields in entries)
    commands = [fields for _, fields in entries if fields.get(b"c", b"").startswith(b"~")]
    assert commands, "the command path's ids are kept short beside their player"
    records = client.hgetall(keys.commands)
    head = records.pop(b"")
    assert head == f"{len(entries)} ".encode() + entries[-1][1][b"H"]
    batches = store.batches("g")
    assert sorted(records) == sorted(command_key(batch.command_id) for batch in batches)
    assert all(b.command_id.startswith(("cmd:", "create", "join:")) for b in batches)
    assert all(isinstance(meta_decoder.decode(b.metadata), AppendMeta) for b in batches)
    assert store.verify("g").version == len(entries)
    assert not client.exists(keys.snapshot), "a finished game keeps no snapshot"


def test_a_game_stored_before_the_lean_form_reads_and_records_as_the_same_game_stored_lean(
    store: EventStore, path: CommandPath
) -> None:
    play_finished_game(store, path, "lean", seats=3, modules=("trade_routes",), seed=4)
    write_old_game(store, "old", store.read("lean"), store.batches("lean"))

    assert store.read("old") == store.read("lean")
    assert store.read("old", after=7, to=20) == store.read("lean", after=7, to=20)
    assert store.batches("old") == store.batches("lean")
    assert store.last_batch("old") == store.last_batch("lean")
    assert store.head("old") == store.head("lean") == store.verify("old")
    for batch in store.batches("lean"):
        assert store.command_result("old", batch.command_id) == store.command_result(
            "lean", batch.command_id
        )
    assert load_game(store, "old").state == load_game(store, "lean").state
    assert _record(store, path, "old") == _record(store, path, "lean")


def test_a_game_stored_before_the_lean_form_plays_on_and_knows_its_old_commands(
    store: EventStore, path: CommandPath
) -> None:
    play_finished_game(store, path, "lean", seats=2, modules=(), seed=5)
    batches = store.batches("lean")
    write_old_game(store, "old", store.read("lean"), batches[:40])  # stored before the upgrade

    upgraded = CommandPath(store.context, path.game_data)
    state = store.run(current_op(upgraded, "old"))
    rng = random.Random(1)
    for number in range(30):  # played on after the upgrade: appended in the lean form
        assert state.pending is not None
        seat = state.pending.seat
        state = store.run(
            execute_op(
                upgraded, "old", player=state.players[state.seat_players[seat]],
                expected_version=state.version, command_id=f"after-{number}",
                commands=[rng.choice(legal_commands(state, seat))], now=NOW,
            )
        ).state  # fmt: skip
    assert store.verify("old").version == state.version
    assert load_game(store, "old").state == state
    assert store.batches("old")[:40] == batches[:40]

    old = batches[5]
    datas = [e.data for e in store.read("old", after=old.first_version - 1, to=old.last_version)]
    with pytest.raises(DuplicateCommand) as again:
        store.append("old", old.first_version - 1, datas, old.command_id)
    assert again.value.first_result == store.command_result("old", old.command_id)
    assert store.command_memo("old", old.command_id) == (
        again.value.first_result,
        default_digest(old.first_version - 1, datas),
    )
    with pytest.raises(CommandIdReused):
        store.append("old", state.version, [b'{"type":"other"}'], old.command_id)

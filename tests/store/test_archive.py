"""Archiving a finished game: every read of the store answers the same from its archive as from
its live keys, an append is refused as the live game would refuse it, and the archiving is
safe to stop or race at any step (docs/store.md, "Archive")."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime
from typing import Any

import pytest
from redis.exceptions import ResponseError

from bench.memory import play_finished_game
from server.config.card_data import load_game_data
from store import streams
from store.archive import unpack
from store.archived import Archived, archive_key
from store.archiving import archive_game, archive_game_op
from store.client import EventStore
from store.command_path import CommandPath
from store.errors import CorruptGame, StoreError
from store.loading import load_game
from store.protocol import Eval, dispatch
from tests.store.conftest import BACKENDS, WITH_CLUSTER
from tests.store.old_form import write_old_game
from workers.archiving import archive_after_seconds, archive_finished


def _reads(store: EventStore, game_id: str) -> list[Any]:
    """What every read of the store gives for a game."""
    shelf = store.context.shelf  # the folder of its archives, if it has one
    folder = None if shelf is None else str(shelf.folder)
    fresh = EventStore(store.client, prefix=store.keys.prefix, archive_dir=folder)  # own caches
    batches = fresh.batches(game_id)
    return [
        fresh.read(game_id),
        fresh.read(game_id, after=10, to=25),
        fresh.read(game_id, after=fresh.head(game_id).version),
        fresh.head(game_id),
        fresh.verify(game_id),
        batches,
        fresh.last_batch(game_id),
        fresh.run(streams.batches_around(fresh.context, game_id, 20, 30)),
        fresh.run(streams.batches_around(fresh.context, game_id, 0, 3)),
        [fresh.run(streams.metadata_at(fresh.context, game_id, b.first_version)) for b in batches],
        [fresh.command_memo(game_id, b.command_id) for b in batches],
        fresh.command_result(game_id, "no-such-command"),
        list(fresh.follow(game_id, after=30, timeout=0)),
        load_game(fresh, game_id).state,
        sorted(fresh.game_ids()),
    ]


@pytest.fixture
def path(store: EventStore) -> CommandPath:
    return CommandPath(store.context, load_game_data())


@pytest.mark.parametrize("backend", WITH_CLUSTER, indirect=True)
def test_an_archived_game_reads_as_it_did_live_and_keeps_only_its_archive(
    store: EventStore, path: CommandPath, client: Any
) -> None:
    play_finished_game(store, path, "g", seats=2, modules=("delegates",), seed=6)
    before = _reads(store, "g")
    assert before[9] == [batch.metadata for batch in before[5]]  # each append's own
    assert archive_game(store, "g") == "archived"
    keys = store.keys.game("g")
    assert [client.exists(key) for key in (keys.events, keys.commands, keys.snapshot)] == [0] * 3
    assert unpack(client.get(archive_key(keys)), "g").version == before[3].version
    assert _reads(store, "g") == before


def _step(op: Any, client: Any, request: Any) -> Any:
    """Carry one request of an operation to Redis by hand, as a store does: its next request."""
    try:
        reply = dispatch(client, request)
    except ResponseError as error:
        return op.throw(error)
    return op.send(reply)


def _finish(op: Any, client: Any, request: Any) -> Any:
    """Carry an operation's requests from `request` on to its end (a script may meet NOSCRIPT
    first, on a server that never ran it); its result."""
    try:
        while True:
            request = _step(op, client, request)
    except StopIteration as done:
        return done.value


def _answer(store: EventStore, game_id: str, call: tuple[Any, ...]) -> Any:
    expected, datas, command_id, request_digest = call
    try:
        return store.append(game_id, expected, datas, command_id, request_digest=request_digest)
    except StoreError as refused:
        said = (getattr(refused, name, None) for name in ("first_result", "current"))
        return type(refused).__name__, str(refused), *said


def late_calls(store: EventStore, game_id: str) -> list[tuple[Any, ...]]:
    """Appends a finished game refuses: its last append sent again, its command id for other
    content, a command on a version long gone."""
    last = store.batches(game_id)[-1]
    known = store.command_memo(game_id, last.command_id)
    assert known is not None
    datas = [e.data for e in store.read(game_id, after=last.first_version - 1)]
    return [
        (last.first_version - 1, datas, last.command_id, known[1]),  # sent again
        (last.first_version - 1, datas, last.command_id, None),  # the id, for other content
        (3, [b'{"type":"late"}'], "late", None),  # on a version long gone
    ]


@pytest.mark.parametrize("backend", BACKENDS, indirect=True)
def test_an_archived_game_refuses_appends_as_it_did_live(
    store: EventStore, path: CommandPath
) -> None:
    play_finished_game(store, path, "g", seats=2, modules=(), seed=7)
    head, calls = store.head("g"), late_calls(store, "g")
    live = [_answer(store, "g", call) for call in calls]
    assert [answer[0] for answer in live] == [
        "DuplicateCommand",
        "CommandIdReused",
        "VersionConflict",
    ]
    assert archive_game(store, "g") == "archived"
    assert [_answer(store, "g", call) for call in calls] == live
    with pytest.raises(Archived):  # live, this one would have been appended
        store.append("g", head.version, [b'{"type":"late"}'], "late")
    assert store.head("g") == head


@pytest.mark.parametrize("backend", BACKENDS, indirect=True)
def test_a_game_stored_before_the_lean_form_archives_and_reads_the_same(
    store: EventStore, path: CommandPath
) -> None:
    play_finished_game(store, path, "lean", seats=2, modules=(), seed=11)
    write_old_game(store, "old", store.read("lean"), store.batches("lean"))
    before = _reads(store, "old")
    assert archive_game(store, "old") == "archived"
    assert _reads(store, "old") == before


@pytest.mark.parametrize("backend", BACKENDS, indirect=True)
def test_a_game_that_changes_while_it_is_archived_stays_live_and_loses_the_stale_archive(
    store: EventStore, path: CommandPath, client: Any
) -> None:
    play_finished_game(store, path, "g", seats=2, modules=(), seed=8)
    op = archive_game_op(store.context, "g")
    request = next(op)
    while not (isinstance(request, Eval) and request.script == "retire"):
        request = _step(op, client, request)
    keys = store.keys.game("g")
    assert client.exists(archive_key(keys)) and client.exists(keys.events)  # both, for now
    before = _reads(store, "g")
    store.append("g", store.head("g").version, [b'{"type":"late"}'], "late")  # meanwhile
    assert _finish(op, client, request) == "changed"
    assert not client.exists(archive_key(keys))
    assert store.read("g")[:-1] == before[0] and store.head("g").version == before[3].version + 1


@pytest.mark.parametrize("backend", BACKENDS, indirect=True)
def test_a_game_archived_by_two_workers_at_once_is_archived_once(
    store: EventStore, path: CommandPath, client: Any
) -> None:
    play_finished_game(store, path, "g", seats=2, modules=(), seed=9)
    before = _reads(store, "g")
    first, second = archive_game_op(store.context, "g"), archive_game_op(store.context, "g")
    steps: list[Any] = [(first, next(first)), (second, next(second))]
    outcomes = []
    while steps:  # in lockstep: each step of one, then the same step of the other
        going = []
        for op, request in steps:
            try:
                going.append((op, _step(op, client, request)))
            except StopIteration as done:
                outcomes.append(done.value)
        steps = going
    assert sorted(outcomes) == ["archived", "gone"]
    assert _reads(store, "g") == before


@pytest.mark.parametrize("backend", BACKENDS, indirect=True)
def test_a_damaged_archive_is_refused_never_read(
    store: EventStore, path: CommandPath, client: Any
) -> None:
    play_finished_game(store, path, "g", seats=2, modules=(), seed=10)
    assert archive_game(store, "g") == "archived"
    key = archive_key(store.keys.game("g"))
    packed = client.get(key)
    client.set(key, packed[:-1] + bytes([packed[-1] ^ 1]))
    with pytest.raises(CorruptGame, match="archive"):
        EventStore(client, prefix=store.keys.prefix).read("g")


@pytest.mark.parametrize("backend", BACKENDS, indirect=True)
def test_a_sweep_archives_the_games_finished_long_enough_ago_and_leaves_the_others(
    store: EventStore, path: CommandPath, client: Any
) -> None:
    play_finished_game(store, path, "over", seats=2, modules=(), seed=12)  # ended at NOW
    store.append("still-on", 0, [b'{"type":"note"}'], "c1")
    a_day_later = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
    assert archive_finished(store, 2 * 86400, clock=lambda: a_day_later) == Counter()
    assert archive_finished(store, 3600, clock=lambda: a_day_later) == Counter(archived=1)
    assert not client.exists(store.keys.game("over").events)
    assert client.exists(store.keys.game("still-on").events)
    assert sorted(store.game_ids()) == ["over", "still-on"]
    assert list(store.game_ids(archived=False)) == ["still-on"]
    assert archive_finished(store, 0, clock=lambda: a_day_later) == Counter()


def test_the_archiving_age_is_seconds_at_least_zero_seven_days_unless_told() -> None:
    assert archive_after_seconds({}) == 7 * 86400
    assert archive_after_seconds({"PATRICIAN_ARCHIVE_AFTER_SECONDS": "0"}) == 0
    assert archive_after_seconds({"PATRICIAN_ARCHIVE_AFTER_SECONDS": "90.5"}) == 90.5
    for wrong in ("-1", "soon", "nan"):
        with pytest.raises(ValueError, match="PATRICIAN_ARCHIVE_AFTER_SECONDS"):
            archive_after_seconds({"PATRICIAN_ARCHIVE_AFTER_SECONDS": wrong})

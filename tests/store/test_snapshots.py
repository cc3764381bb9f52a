"""Snapshots and loading: a load costs the events after the latest usable snapshot, and a
snapshot from other rules, another State layout or another chain is ignored, never trusted."""

from __future__ import annotations

import random
from typing import Any

import pytest

from domain.events import Event, encoder
from domain.evolve import fold
from domain.state import NEW_GAME
from server.cli.simulation import random_game
from server.config.card_data import load_game_data
from store.client import EventStore
from store.errors import StoreError
from store.loading import (
    SnapshotPolicy,
    encode_state,
    load_game,
    load_op,
    load_snapshot,
    save_snapshot,
    save_state,
    snapshot_if_due,
    snapshot_tag,
)
from store.stored import Snapshot
from tests.store.conftest import BACKENDS, AsyncStoreFactory, run_async

pytestmark = pytest.mark.parametrize("backend", BACKENDS, indirect=True)


@pytest.fixture(scope="module")
def log() -> list[Event]:
    _state, events = random_game(random.Random(7), load_game_data(), 3, "towers", ())
    return events[:120]


def _append_all(store: EventStore, game_id: str, events: list[Event], every: int = 0) -> None:
    state = NEW_GAME
    policy = SnapshotPolicy(every) if every else None
    version = 0
    for start in range(0, len(events), 3):  # batches of three, as commands make them
        batch = events[start : start + 3]
        result = store.append(game_id, version, [encoder.encode(e) for e in batch], f"c{start}")
        version = result.last_version
        state = fold(batch, state)
        if policy is not None:
            snapshot_if_due(store, game_id, result, state, policy)


def test_the_latest_snapshot_is_kept_and_an_older_one_does_not_replace_it(
    store: EventStore,
) -> None:
    store.append("g1", 0, [b"1", b"2", b"3"], "c1")
    assert store.run(save_snapshot(store.context, "g1", 3, "r1", b"three"))
    assert not store.run(save_snapshot(store.context, "g1", 2, "r1", b"two"))
    assert store.run(load_snapshot(store.context, "g1", "r1")) == Snapshot(
        3, store.head("g1").hash, "r1", b"three"
    )


def test_a_snapshot_of_other_rules_is_not_returned(store: EventStore) -> None:
    store.append("g1", 0, [b"1"], "c1")
    store.run(save_snapshot(store.context, "g1", 1, "r1", b"one"))
    assert store.run(load_snapshot(store.context, "g1", "r2")) is None
    assert store.run(load_snapshot(store.context, "missing", "r1")) is None


def test_a_snapshot_of_a_version_that_does_not_exist_is_refused(store: EventStore) -> None:
    store.append("g1", 0, [b"1"], "c1")
    with pytest.raises(StoreError, match="no version 5"):
        store.run(save_snapshot(store.context, "g1", 5, "r1", b"five"))


def test_loading_without_a_snapshot_folds_every_event(store: EventStore, log: list[Event]) -> None:
    _append_all(store, "g1", log)
    loaded = load_game(store, "g1")
    assert loaded.state == fold(log)
    assert (loaded.version, loaded.snapshot_version, loaded.events_folded) == (120, 0, 120)
    assert loaded.head_hash == store.head("g1").hash


def test_loading_with_snapshots_folds_only_the_events_after_the_latest(
    store: EventStore, log: list[Event]
) -> None:
    _append_all(store, "g1", log, every=50)
    loaded = load_game(store, "g1")
    assert loaded.state == fold(log)
    assert loaded.snapshot_version == 102  # the append that crossed 100 ended at 102
    assert loaded.events_folded == 18


def test_a_game_with_no_events_loads_as_a_new_game(store: EventStore) -> None:
    loaded = load_game(store, "nothing")
    assert loaded.state == NEW_GAME
    assert loaded.version == 0


def test_a_snapshot_of_another_state_layout_is_ignored(store: EventStore, log: list[Event]) -> None:
    _append_all(store, "g1", log)
    store.run(save_snapshot(store.context, "g1", 60, "rules1-stateOLDLAYOUT", b'{"not":"a state"}'))
    loaded = load_game(store, "g1")
    assert loaded.snapshot_version == 0
    assert loaded.state == fold(log)


def test_a_snapshot_that_does_not_decode_is_ignored(store: EventStore, log: list[Event]) -> None:
    _append_all(store, "g1", log)
    store.run(save_snapshot(store.context, "g1", 60, snapshot_tag(), b'{"version": "sixty"}'))
    loaded = load_game(store, "g1")
    assert loaded.snapshot_version == 0
    assert loaded.state == fold(log)


def test_a_snapshot_off_the_chain_is_ignored(
    store: EventStore, client: Any, log: list[Event]
) -> None:
    _append_all(store, "g1", log)
    wrong = fold(log[:59])  # a state that claims version 60 but is not the game's
    key = store.keys.game("g1").snapshot
    header = f"60 {'ab' * 32} {snapshot_tag()}\n".encode()
    client.set(key, header + encode_state(wrong))
    loaded = load_game(store, "g1")
    assert loaded.snapshot_version == 0
    assert loaded.state == fold(log)


def test_a_saved_state_is_what_a_load_starts_from(store: EventStore, log: list[Event]) -> None:
    _append_all(store, "g1", log)
    assert save_state(store, "g1", fold(log))
    loaded = load_game(store, "g1")
    assert (loaded.snapshot_version, loaded.events_folded) == (120, 0)
    assert loaded.state == fold(log)


def test_the_async_load_is_the_sync_one(
    store: EventStore, async_store: AsyncStoreFactory, log: list[Event]
) -> None:
    async def scenario() -> None:
        async with async_store() as astore:
            version = 0
            for start in range(0, len(log), 3):
                batch = [encoder.encode(e) for e in log[start : start + 3]]
                version = (await astore.append("g1", version, batch, f"c{start}")).last_version
            loaded = await astore.run(load_op(astore.context, "g1"))
            assert loaded.state == fold(log)

    run_async(scenario())

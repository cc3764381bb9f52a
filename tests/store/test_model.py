"""The store against a plain in-memory model: Hypothesis drives random sequences of appends
(right, stale and ahead of time, retried, with reused command ids), reads, snapshots and
look-ups, and every answer must be the model's."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test

from store.appending import default_digest
from store.chain import ZERO_HASH, extend, verify
from store.client import EventStore
from store.errors import CommandIdReused, DuplicateCommand, StoreError, VersionConflict
from store.loading import load_snapshot, save_snapshot
from store.stored import AppendResult, Snapshot
from tests.store.conftest import BACKENDS, unique_prefix

pytestmark = pytest.mark.parametrize("backend", BACKENDS, indirect=True)

GAMES = st.sampled_from(["a", "b"])
COMMANDS = st.sampled_from([f"cmd-{n}" for n in range(6)])
EVENTS = st.lists(st.binary(min_size=1, max_size=8), min_size=1, max_size=3)
TAGS = st.sampled_from(["r1", "r2"])


class Model:
    def __init__(self) -> None:
        self.events: dict[str, list[tuple[bytes, str]]] = {"a": [], "b": []}
        self.commands: dict[tuple[str, str], tuple[str, AppendResult, bytes]] = {}
        self.snapshots: dict[str, Snapshot] = {}


def _machine(client: Any) -> type[RuleBasedStateMachine]:
    class StoreMachine(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.prefix = unique_prefix()
            self.store = EventStore(client, prefix=self.prefix)
            self.model = Model()

        def teardown(self) -> None:
            for key in list(client.scan_iter(match=f"{self.prefix}:*")):
                client.delete(key)

        def head(self, game: str) -> tuple[int, str]:
            log = self.model.events[game]
            return len(log), log[-1][1] if log else ZERO_HASH

        @rule(game=GAMES, events=EVENTS, command=COMMANDS, offset=st.sampled_from([0, 0, 0, -1, 1]))
        def append(self, game: str, events: list[bytes], command: str, offset: int) -> None:
            version, head_hash = self.head(game)
            expected = max(0, version + offset)
            digest = default_digest(expected, events)
            seen = self.model.commands.get((game, command))
            if seen is not None:
                error = DuplicateCommand if seen[0] == digest else CommandIdReused
                with pytest.raises(error) as raised:
                    self.store.append(game, expected, events, command)
                assert raised.value.first_result == seen[1]  # type: ignore[attr-defined]
            elif expected != version:
                with pytest.raises(VersionConflict) as conflict:
                    self.store.append(game, expected, events, command)
                assert conflict.value.current == version
            else:
                metadata = command.encode()
                result = self.store.append(game, expected, events, command, metadata)
                hashes = extend(head_hash, version + 1, events)
                assert result == AppendResult(version + 1, version + len(events), hashes[-1])
                self.model.events[game] += zip(events, hashes, strict=True)
                self.model.commands[(game, command)] = (digest, result, metadata)

        @rule(game=GAMES, after=st.integers(0, 12), span=st.none() | st.integers(0, 6))
        def read(self, game: str, after: int, span: int | None) -> None:
            to = None if span is None else after + span
            expected = [
                (version, data, hash_hex)
                for version, (data, hash_hex) in enumerate(self.model.events[game], 1)
                if version > after and (to is None or version <= to)
            ]
            got = self.store.read(game, after=after, to=to)
            assert [(e.version, e.data, e.hash) for e in got] == expected

        @rule(game=GAMES, command=COMMANDS)
        def command_result(self, game: str, command: str) -> None:
            seen = self.model.commands.get((game, command))
            assert self.store.command_result(game, command) == (seen and seen[1])

        @rule(game=GAMES)
        def batches(self, game: str) -> None:
            expected = sorted(
                (result.first_version, result.last_version, command, metadata)
                for (owner, command), (_d, result, metadata) in self.model.commands.items()
                if owner == game
            )
            got = [
                (b.first_version, b.last_version, b.command_id, b.metadata)
                for b in self.store.batches(game)
            ]
            assert got == expected

        @rule(game=GAMES, back=st.integers(0, 3), tag=TAGS, state=st.binary(max_size=8))
        def save_snapshot(self, game: str, back: int, tag: str, state: bytes) -> None:
            version, _hash = self.head(game)
            at = version - back
            if at < 1:  # then try a version the game does not have yet
                with pytest.raises(StoreError):
                    self.store.run(save_snapshot(self.store.context, game, version + 1, tag, state))
                return
            kept = self.model.snapshots.get(game)
            saved = self.store.run(save_snapshot(self.store.context, game, at, tag, state))
            should = kept is None or kept.rules_version != tag or kept.version < at
            assert saved == should
            if saved:
                self.model.snapshots[game] = Snapshot(
                    at, self.model.events[game][at - 1][1], tag, state
                )

        @rule(game=GAMES, tag=TAGS)
        def load_snapshot(self, game: str, tag: str) -> None:
            kept = self.model.snapshots.get(game)
            expected = kept if kept is not None and kept.rules_version == tag else None
            assert self.store.run(load_snapshot(self.store.context, game, tag)) == expected

        @invariant()
        def heads_match_and_chains_verify(self) -> None:
            for game in ("a", "b"):
                version, head_hash = self.head(game)
                head = self.store.head(game)
                assert (head.version, head.hash) == (version, head_hash)
                assert verify(self.store.read(game)) == head_hash

    return StoreMachine


def test_the_store_behaves_as_the_in_memory_model(client: Any, backend: str) -> None:
    run_state_machine_as_test(
        _machine(client),
        settings=settings(
            max_examples=40 if backend == "fakeredis" else 25,
            stateful_step_count=30,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow],
        ),
    )

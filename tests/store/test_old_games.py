"""Old games still play on: a game created by rules version 2 before the upgrade to version 3
is played on to its end through the command path, by its own rules and in its own shape
(docs/rules-versions.md).

Its log stays version-2 shaped (`city_scored` stores `"bonus"`, never `"trade_bonus"`), version
2's R45 applies to it (a seat whose empty supply, R41, left no floor placed still built in its
played card's city), and its record is re-decided, byte for byte, by the audit's
`evidence.redecide.redecide`. A card file with few floors per seat makes R41 happen in a
real game (`--card-file` plays with any valid one); the Architetto, with all its floors, still
completes cities, so that some are scored.
"""

from __future__ import annotations

import random

import msgspec
import pytest

from domain.board import RULES_VERSION
from domain.commands import Command, MoveFloor, TakeCard
from domain.errors import CommandRefused
from domain.events import CityScored, GameCreated, event_decoder
from domain.gamedata import GameData
from domain.legal import legal_commands
from domain.shapes import stored_bytes
from domain.state import State
from evidence.appends import command_of
from evidence.checks import Refusal
from evidence.record import LoggedEvent, Record, RecordEvent, build_record
from evidence.redecide import redecide
from server.config.card_data import load_game_data
from store.client import EventStore
from store.command_path import CommandPath
from store.games import execute_op
from store.loading import SnapshotPolicy, load_game
from store.reads import batches_op, current_op, log_op
from store.tables import create_op, invite_code_of, join_op
from tests.server.records import as_json, verify_record
from tests.store.conftest import BACKENDS

pytestmark = pytest.mark.parametrize("backend", BACKENDS, indirect=True)

SEED = bytes(range(32))
NOW = "2026-11-30T12:00:00.000Z"


def _few_floors() -> GameData:
    """The shipped card file with 15 floors per seat in 2-seat `towers` (the Architetto keeps
    its own count), so that both seats run out of floors while cards are still face up."""
    data = load_game_data()
    pieces = data.tower_pieces
    fewer = {**pieces.towers_of_influence, "2": 15}
    return msgspec.structs.replace(
        data, tower_pieces=msgspec.structs.replace(pieces, towers_of_influence=fewer)
    )


def _create(store: EventStore, path: CommandPath, game_id: str, rules_version: int) -> None:
    created = store.run(
        create_op(
            path, game_id, player="anna", name="Anna", edition="towers", seats=2,
            modules=("trade_routes",), entropy="a", server_seed=SEED, now=NOW,
            rules_version=rules_version,
        )
    )  # fmt: skip
    code = invite_code_of(created.state)
    store.run(
        join_op(path, game_id, player="bert", name="Bert", invite_code=code, entropy="b", now=NOW)
    )


def _player(state: State, seat: int) -> str:
    return state.players[state.seat_players[seat]]


def _send(
    store: EventStore, path: CommandPath, game_id: str, state: State, command: Command
) -> State:
    seat = state.pending.seat if state.pending is not None else -1
    return store.run(
        execute_op(
            path, game_id, player=_player(state, seat), expected_version=state.version,
            command_id=f"c{state.version}", commands=[command], now=NOW,
        )
    ).state  # fmt: skip


class R45Seen:
    """What the game showed of R45 at the decisions where R41 had left no floor placed,
    checked by the game's own rules version."""

    def __init__(self) -> None:
        self.takes = 0
        self.moves = 0

    def check(self, store: EventStore, path: CommandPath, game_id: str, state: State) -> None:
        """Version 2 (R45): the played card's city is the city built in, even with no floor
        placed; a card taken elsewhere is refused through the command path. Version 3: the
        seat built in no city and may take any face-up card."""
        pending = state.pending
        if pending is None or pending.step not in ("take_card", "move_floor"):
            return
        if state.placed or state.supply[state.active]:
            return
        built = state.played_card().city
        name = state.board.cities[built]
        legal = legal_commands(state, pending.seat)
        if state.board.rules_version == 3:
            if pending.step == "take_card":
                names = state.board.cities
                assert legal == [TakeCard(names[c]) for c, up in enumerate(state.face_up) if up]
                self.takes += 1
            return
        if pending.step == "move_floor":
            assert all(c.city != name for c in legal if isinstance(c, MoveFloor))
            self.moves += 1
            return
        elsewhere = [city for city, up in enumerate(state.face_up) if up and city != built]
        if state.face_up[built] is None or not elsewhere:
            return
        assert legal == [TakeCard(name)]
        other = TakeCard(state.board.cities[elsewhere[0]])
        with pytest.raises(CommandRefused) as refused:
            _send(store, path, game_id, state, other)
        assert refused.value.error.code == "must_take_built_city"
        self.takes += 1


def _play(
    store: EventStore,
    path: CommandPath,
    game_id: str,
    rng: random.Random,
    *,
    seen: R45Seen,
    moves: int | None = None,
) -> State:
    """Random legal commands through the command path, until the end (or `moves` of them)."""
    state = store.run(current_op(path, game_id))
    while state.pending is not None and moves != 0:
        seen.check(store, path, game_id, state)
        command = rng.choice(legal_commands(state, state.pending.seat))
        state = _send(store, path, game_id, state, command)
        moves = None if moves is None else moves - 1
    return state


def _record(store: EventStore, path: CommandPath, game_id: str) -> Record:
    """The game's record as the server builds it (`server.services.games`), read back from its
    JSON as the audit reads it."""
    state = store.run(current_op(path, game_id))
    log = store.run(log_op(path, game_id))
    commands = [command_of(batch) for batch in store.run(batches_op(path, game_id))]
    record = build_record(game_id, state, [LoggedEvent(*entry) for entry in log], commands, None)
    return msgspec.json.decode(msgspec.json.encode(record), type=Record)


def _redecided(record: Record) -> State:
    return redecide(record, [event_decoder.decode(e.data) for e in record.events], SEED)


def test_a_version_2_game_plays_on_after_the_upgrade_by_its_own_rules_and_in_its_own_shape(
    store: EventStore,
) -> None:
    data = _few_floors()
    before = CommandPath(store.context, data, snapshots=SnapshotPolicy(every=20))
    _create(store, before, "old", rules_version=2)
    seen = R45Seen()
    rng = random.Random(7)
    halfway = _play(store, before, "old", rng, seen=seen, moves=60)
    assert halfway.pending is not None, "the game is still on at the upgrade"

    # The upgrade: another process (no cache), loading from the latest snapshot.
    after = CommandPath(store.context, data, snapshots=SnapshotPolicy(every=20))
    assert load_game(store, "old").snapshot_version > 0
    loaded = store.run(current_op(after, "old"))
    assert loaded == halfway and loaded.board.rules_version == 2 < RULES_VERSION
    over = _play(store, after, "old", rng, seen=seen)
    assert over.phase == "over"
    assert seen.takes and seen.moves, "R41 left no floor placed at a take and at a move"

    log = store.run(log_op(after, "old"))
    created = log[0][1]
    assert isinstance(created, GameCreated) and created.rules_version == 2
    scorings = [(event, data) for _, event, data, _ in log if isinstance(event, CityScored)]
    assert scorings, "some city was scored"
    for event, stored in scorings:
        assert b'"bonus":' in stored and b"trade_bonus" not in stored
        assert stored.endswith(b',"bonus":%d}' % event.trade_bonus)
    assert all(stored == stored_bytes(event, 2) for _, event, stored, _ in log)

    record = _record(store, after, "old")
    assert record.rules_version == 2
    assert _redecided(record) == over
    assert verify_record(as_json(record)) == over.result  # as docs/rules-versions.md tells


def test_the_record_of_a_version_2_game_is_compared_in_version_2s_shape(
    store: EventStore,
) -> None:
    path = CommandPath(store.context, _few_floors())
    _create(store, path, "old", rules_version=2)
    _play(store, path, "old", random.Random(7), seen=R45Seen())
    record = _record(store, path, "old")
    at = next(i for i, e in enumerate(record.events) if b'"city_scored"' in e.data.encode())
    respelled = record.events[at].data.replace('"bonus":', '"trade_bonus":')
    events = list(record.events)
    events[at] = RecordEvent(events[at].version, events[at].hash, respelled)
    with pytest.raises(Refusal, match=rf"version {at + 1} \(commands\[\d+\]\): the record says"):
        _redecided(msgspec.structs.replace(record, events=tuple(events)))


def test_a_game_created_after_the_upgrade_is_of_the_current_version_and_shape(
    store: EventStore,
) -> None:
    path = CommandPath(store.context, _few_floors())
    _create(store, path, "new", rules_version=RULES_VERSION)
    seen = R45Seen()
    over = _play(store, path, "new", random.Random(7), seen=seen)
    assert seen.takes, "R41 left no floor placed at a take"
    log = store.run(log_op(path, "new"))
    stored = [data for _, event, data, _ in log if isinstance(event, CityScored)]
    assert stored and all(b'"trade_bonus":' in data and b'"bonus"' not in data for data in stored)
    record = _record(store, path, "new")
    assert record.rules_version == RULES_VERSION
    assert _redecided(record) == over

"""`patrician check-rules` before a deploy: every stored game, of rules version 2 or 3, in
play or over, decided again by the code about to run, and the games it would no longer
explain named with why: a change of an event's stored shape, a snapshot that is not its log,
a broken chain (docs/rules-versions.md, "Before deploying")."""

from __future__ import annotations

import random

import msgspec
import pytest
from click.testing import CliRunner

from domain.legal import legal_commands
from domain.playout import pick
from domain.shapes import stored_bytes
from domain.state import State
from evidence.rules_check import check_games, chosen
from server.cli.main import main
from server.config.card_data import load_game_data
from store.client import EventStore
from store.command_path import CommandPath
from store.games import execute_op
from store.loading import SnapshotPolicy, save_state
from store.tables import create_op, invite_code_of, join_op
from tests.store.conftest import BACKENDS

each_backend = pytest.mark.parametrize("backend", BACKENDS, indirect=True)
redis_only = pytest.mark.parametrize(
    "backend", [pytest.param("redis", marks=pytest.mark.redis)], indirect=True
)

NOW = "2026-12-01T12:00:00.000Z"


def _game(store: EventStore, path: CommandPath, game_id: str, version: int, moves: int) -> State:
    """A two-seat game of rules `version`, `moves` random commands in (or to its end)."""
    rng = random.Random(game_id)
    created = store.run(
        create_op(
            path, game_id, player="anna", name="Anna", edition="towers", seats=2,
            modules=("trade_routes",), entropy="a", server_seed=rng.randbytes(32), now=NOW,
            rules_version=version,
        )
    )  # fmt: skip
    code = invite_code_of(created.state)
    state = store.run(
        join_op(path, game_id, player="bert", name="Bert", invite_code=code, entropy="b", now=NOW)
    ).state
    for _ in range(moves):
        if state.pending is None:
            break
        seat = state.pending.seat
        state = store.run(
            execute_op(
                path, game_id, player=state.players[state.seat_players[seat]],
                expected_version=state.version, command_id=f"c{state.version}",
                commands=[pick(legal_commands(state, seat), rng)], now=NOW,
            )
        ).state  # fmt: skip
    return state


@pytest.fixture
def games(store: EventStore) -> CommandPath:
    path = CommandPath(store.context, load_game_data(), snapshots=SnapshotPolicy(20))
    _game(store, path, "old-over", 2, 10_000)
    _game(store, path, "old-on", 2, 60)
    _game(store, path, "new-over", 3, 10_000)
    _game(store, path, "new-on", 3, 45)
    return path


@each_backend
def test_a_store_of_old_and_new_games_in_play_and_over_holds_up(
    store: EventStore, games: CommandPath
) -> None:
    assert chosen(store, None) == ["new-on", "new-over", "old-on", "old-over"]
    assert list(check_games(store, games, chosen(store, None))) == []
    assert len(chosen(store, 2, seed=1)) == 2


@each_backend
def test_code_that_would_store_another_shape_is_told_which_old_games_it_breaks(
    store: EventStore, games: CommandPath, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As if an upgrade dropped the version-2 spelling of `city_scored`: the version-2 games
    with a city scored are named, at the version of that event; version-3 games are not."""
    monkeypatch.setattr(
        "evidence.redecide.stored_bytes", lambda event, _version: stored_bytes(event, 3)
    )
    found = {f.game_id: f.reason for f in check_games(store, games, chosen(store, None))}
    assert set(found) <= {"old-over", "old-on"} and "old-over" in found
    assert "the record says" in found["old-over"] and "version " in found["old-over"]


@each_backend
def test_a_snapshot_that_is_not_its_log_is_named(store: EventStore, games: CommandPath) -> None:
    unsnapped = CommandPath(store.context, load_game_data(), snapshots=SnapshotPolicy(10**6))
    state = _game(store, unsnapped, "stale", 3, 30)
    assert save_state(store, "stale", msgspec.structs.replace(state, names=("Eve", "Mallory")))
    found = list(check_games(store, games, chosen(store, None)))
    assert [f.game_id for f in found] == ["stale"]
    assert "snapshot" in found[0].reason and f"version {state.version}" in found[0].reason


@redis_only
def test_the_command_says_what_it_found_and_exits_by_it(
    backend: str, store: EventStore, games: CommandPath, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = store.client.connection_pool.connection_kwargs
    monkeypatch.setenv("PATRICIAN_PREFIX", store.keys.prefix)
    address = f"redis://{url['host']}:{url['port']}/{url.get('db', 0)}"
    held = CliRunner().invoke(main, ["check-rules", "--redis-url", address])
    assert held.exit_code == 0, held.output
    assert "checked 4 games: none the code no longer explains" in held.output
    monkeypatch.setattr(
        "evidence.redecide.stored_bytes", lambda event, _version: stored_bytes(event, 3)
    )
    broken = CliRunner().invoke(main, ["check-rules", "--redis-url", address, "--sample", "4"])
    assert broken.exit_code == 1 and broken.output.startswith("old-")

"""The command path's reads (store/games.py): a game in play is read fresh from Redis every
time, so that several server processes behave as one; a game that is over is final and is
served from the cache without a round trip."""

from __future__ import annotations

import random
from typing import Any

import pytest

from domain.legal import legal_commands
from server.config.card_data import load_game_data
from store.client import EventStore
from store.command_path import CommandPath
from store.games import execute_op
from store.reads import current_op
from store.tables import create_op, invite_code_of, join_op
from tests.store.conftest import BACKENDS

pytestmark = pytest.mark.parametrize("backend", BACKENDS, indirect=True)


class _Counting:
    """A client that counts the calls made through it."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.calls = 0

    def get_encoder(self) -> Any:
        return self.client.get_encoder()

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.client, name)

        def call(*args: Any, **kwargs: Any) -> Any:
            self.calls += 1
            return method(*args, **kwargs)

        return call


def _server(client: Any, prefix: str) -> tuple[EventStore, CommandPath, _Counting]:
    counting = _Counting(client)
    store = EventStore(counting, prefix=prefix)
    return store, CommandPath(store.context, load_game_data()), counting


def _start(store: EventStore, games: CommandPath) -> None:
    created = store.run(
        create_op(
            games, "g1", player="anna", name="Anna", edition="towers", seats=2, modules=(),
            entropy="", server_seed=bytes(32), now="2026-11-30T12:00:00.000Z",
        )
    )  # fmt: skip
    assert created.state.phase == "waiting"
    code = invite_code_of(created.state)
    store.run(
        join_op(games, "g1", player="bert", name="Bert", invite_code=code, entropy="", now="t")
    )


def _play(store: EventStore, games: CommandPath, moves: int | None = None) -> None:
    """Random legal commands until the game is over (or `moves` of them)."""
    rng = random.Random(5)
    state = store.run(current_op(games, "g1"))
    while state.pending is not None and moves != 0:
        seat = state.pending.seat
        player = state.players[state.seat_players[seat]]
        assert state.seat_of(player) == seat
        command = rng.choice(legal_commands(state, seat))
        state = store.run(
            execute_op(
                games, "g1", player=player, expected_version=state.version,
                command_id=f"c{state.version}", commands=[command], now="t",
            )
        ).state  # fmt: skip
        moves = None if moves is None else moves - 1


def test_a_game_in_play_is_read_fresh_so_another_process_move_shows_at_once(
    client: Any, prefix: str
) -> None:
    first, first_games, _ = _server(client, prefix)
    second, second_games, counting = _server(client, prefix)
    _start(first, first_games)
    before = second.run(current_op(second_games, "g1"))
    _play(first, first_games, moves=3)
    calls = counting.calls
    after = second.run(current_op(second_games, "g1"))
    assert counting.calls > calls, "a game in play costs a read"
    assert after.version > before.version
    assert after == first.run(current_op(first_games, "g1"))


def test_a_finished_game_is_served_from_the_cache_without_a_round_trip(
    client: Any, prefix: str
) -> None:
    store, games, counting = _server(client, prefix)
    _start(store, games)
    _play(store, games)
    over = store.run(current_op(games, "g1"))
    assert over.phase == "over"
    calls = counting.calls
    assert store.run(current_op(games, "g1")) is over
    assert counting.calls == calls

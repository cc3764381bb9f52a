"""A seat handed to a bot for good (R7, `store.handovers`): its player acts no more, whatever
they send and whenever the hand-over lands; a bot acts for the seat; a command accepted
before is still answered; and on a single Redis the check rides with the append (one round
trip a command), on a cluster it is asked before."""

from __future__ import annotations

from typing import Any

import pytest

from domain.commands import Command
from domain.errors import IllegalCommand
from domain.legal import legal_commands
from domain.state import State
from server.carddata import load_game_data
from store import appending
from store.client import EventStore
from store.errors import HandedOver, VersionConflict
from store.games import CommandPath, Outcome, execute_op
from store.handovers import hand_over_op
from store.reads import current_op
from tests.store.conftest import BACKENDS, WITH_CLUSTER
from tests.store.test_command_path import _Counting, _start


def _started(store: EventStore) -> tuple[CommandPath, State, str, Command]:
    """A 2-seat game started on the store: its command path, its head, the player to move
    and a legal command of theirs."""
    games = CommandPath(store.context, load_game_data())
    _start(store, games)
    return games, *_turn(store, games)


def _turn(store: EventStore, games: CommandPath) -> tuple[State, str, Command]:
    """The game's head, the player to move and a legal command of theirs."""
    state = store.run(current_op(games, "g1"))
    assert state.pending is not None
    seat = state.pending.seat
    return state, state.players[state.seat_players[seat]], legal_commands(state, seat)[0]


def _send(  # noqa: PLR0917 (a test's shorthand)
    store: EventStore,
    games: CommandPath,
    player: str,
    version: int,
    command: Command,
    command_id: str,
    by: str = "",
) -> Outcome:
    return store.run(
        execute_op(
            games, "g1", player=player, expected_version=version, command_id=command_id,
            commands=[command], now="2026-12-03T08:00:00.000Z", by=by,
        )
    )  # fmt: skip


def _hand_over(store: EventStore, player: str) -> None:
    store.run(hand_over_op(store.keys.prefix, "g1", player, "greedy"))


@pytest.mark.parametrize("backend", WITH_CLUSTER, indirect=True)
def test_a_player_who_handed_their_seat_over_is_refused_and_nothing_is_appended(
    store: EventStore,
) -> None:
    games, state, player, command = _started(store)
    _hand_over(store, player)
    with pytest.raises(IllegalCommand) as refused:
        _send(store, games, player, state.version, command, "after")
    assert (refused.value.code, refused.value.rule) == ("seat_handed_over", "R7")
    assert store.run(current_op(games, "g1")).version == state.version
    # The bot that took the seat plays it, through the same path, as the seat.
    played = _send(store, games, player, state.version, command, "bot", by="bot:greedy")
    assert played.first_version == state.version + 1


@pytest.mark.parametrize("backend", WITH_CLUSTER, indirect=True)
def test_a_command_accepted_before_the_hand_over_and_sent_again_gets_its_first_answer(
    store: EventStore,
) -> None:
    games, state, player, command = _started(store)
    first = _send(store, games, player, state.version, command, "before")
    _hand_over(store, player)
    again = _send(store, games, player, state.version, command, "before")
    assert (again.first_version, again.last_version) == (first.first_version, first.last_version)


@pytest.mark.parametrize("backend", WITH_CLUSTER, indirect=True)
def test_a_handed_over_player_hears_of_a_stale_version_first_and_of_the_hand_over_before_rules(
    store: EventStore,
) -> None:
    games, state, mover, command = _started(store)
    other = next(player for player in state.players if player != mover)
    _hand_over(store, other)
    with pytest.raises(VersionConflict):
        _send(store, games, other, state.version - 1, command, "stale")
    # The mover's command sent by the other seat: the rules refuse it (not their decision),
    # and the hand-over is what they are told, as when the rules would take it.
    with pytest.raises(IllegalCommand) as refused:
        _send(store, games, other, state.version, command, "not theirs")
    assert refused.value.code == "seat_handed_over"
    assert store.run(current_op(games, "g1")).version == state.version


@pytest.mark.parametrize("backend", BACKENDS, indirect=True)
def test_on_a_single_redis_a_players_command_costs_one_round_trip_hand_over_check_included(
    client: Any, prefix: str
) -> None:
    counting = _Counting(client)
    store = EventStore(counting, prefix=prefix)
    games, state, player, command = _started(store)
    calls = counting.calls
    _send(store, games, player, state.version, command, "one trip")
    assert counting.calls == calls + 1
    state, player, command = _turn(store, games)
    _hand_over(store, player)
    calls = counting.calls
    with pytest.raises(IllegalCommand):
        _send(store, games, player, state.version, command, "refused in the same trip")
    assert counting.calls == calls + 1


@pytest.mark.parametrize("backend", BACKENDS, indirect=True)
def test_the_append_script_tells_a_stale_head_before_the_hand_over(store: EventStore) -> None:
    """The script's own order, the command path's cached state aside: a stale expected
    version is a conflict even for a player who handed their seat over; at the head, the
    hand-over refuses the append and nothing is written."""
    games, state, player, _command = _started(store)
    _hand_over(store, player)

    def append(version: int, command_id: str) -> object:
        return store.run(
            appending.append(
                store.context, "g1", version, [b"{}"], command_id, unless_handed_over=player
            )
        )

    with pytest.raises(VersionConflict):
        append(state.version - 1, "stale")
    with pytest.raises(HandedOver):
        append(state.version, "at the head")
    assert store.run(current_op(games, "g1")).version == state.version

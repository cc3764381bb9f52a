"""A seat handed to a bot for good (R7, `store.handovers`): its player acts no more, whatever
they send and whenever the hand-over lands, on a single Redis and on a cluster; a bot acts
for the seat; a command accepted before is still answered; the check rides with the append
(one round trip a command on a single Redis); and hand-overs kept where they were before they
moved into the game's slot still count, until they are moved there too (then a cluster asks
the old place no more)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any, TypeVar

import pytest
from click.testing import CliRunner
from redis.exceptions import ResponseError

from domain.commands import Command
from domain.errors import IllegalCommand
from domain.legal import legal_commands
from domain.state import State
from server.cli.main import main
from server.config.card_data import load_game_data
from store import appending
from store.archived import archive_key
from store.client import EventStore
from store.command_path import CommandPath
from store.errors import HandedOver, VersionConflict
from store.games import Outcome, execute_op
from store.handovers import (
    earlier_moved_op,
    hand_over_op,
    handed_over_op,
    handovers_moved_key,
    handovers_op,
    legacy_handovers_key,
    move_earlier,
)
from store.protocol import Call, Eval, Op, Request
from store.reads import current_op
from tests.store.conftest import BACKENDS, WITH_CLUSTER
from tests.store.test_command_path import _Counting, _start

T = TypeVar("T")


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
    store.run(hand_over_op(store.keys, "g1", player, "greedy"))


def _hand_over_before_they_moved(store: EventStore, player: str) -> None:
    """A hand-over as a server of before they moved into the game's slot kept it."""
    store.client.hset(legacy_handovers_key(store.keys.prefix, "g1"), player, "greedy")


def _watching(op: Op[T], seen: Callable[[Request], object]) -> Op[T]:
    """`op`, `seen` called with each request it makes before the request is sent."""
    reply: Any = None
    error: ResponseError | None = None
    while True:
        try:
            request = op.send(reply) if error is None else op.throw(error)
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]
        seen(request)
        try:
            reply, error = (yield request), None
        except ResponseError as refused:
            reply, error = None, refused


def _acting_before_the_append(op: Op[T], act: Callable[[], None]) -> Op[T]:
    """`op`, with `act` done just before its append script is sent: after every question
    the command path asks first and every decision it makes."""
    return _watching(op, lambda r: act() if isinstance(r, Eval) and r.script == "append" else 0)


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


def _trips(counting: _Counting, action: Callable[[], object]) -> tuple[int, object]:
    """The round trips to Redis `action` makes, and what it returns (or the `IllegalCommand`
    that refuses it)."""
    calls = counting.calls
    try:
        answer = action()
    except IllegalCommand as refused:
        answer = refused
    return counting.calls - calls, answer


@pytest.mark.parametrize("backend", BACKENDS, indirect=True)
def test_on_a_single_redis_a_players_command_costs_one_round_trip_hand_over_check_included(
    client: Any, prefix: str
) -> None:
    counting = _Counting(client)
    store = EventStore(counting, prefix=prefix)
    games, state, player, command = _started(store)
    trips, _sent = _trips(
        counting, lambda: _send(store, games, player, state.version, command, "one trip")
    )
    assert trips == 1
    state, player, command = _turn(store, games)
    _hand_over(store, player)
    trips, refused = _trips(
        counting,
        lambda: _send(store, games, player, state.version, command, "refused in the same trip"),
    )
    assert trips == 1 and isinstance(refused, IllegalCommand)


@pytest.mark.parametrize("backend", WITH_CLUSTER, indirect=True)
def test_a_hand_over_landing_after_the_command_was_decided_still_refuses_it(
    store: EventStore,
) -> None:
    """The race a check before the append would lose: the player's command decided, their
    hand-over lands, then their append arrives. The script refuses it, on a cluster too."""
    games, state, player, command = _started(store)
    op = execute_op(
        games, "g1", player=player, expected_version=state.version, command_id="racing",
        commands=[command], now="2026-12-03T08:00:00.000Z",
    )  # fmt: skip
    with pytest.raises(IllegalCommand) as refused:
        store.run(_acting_before_the_append(op, lambda: _hand_over(store, player)))
    assert refused.value.code == "seat_handed_over"
    assert store.run(current_op(games, "g1")).version == state.version


@pytest.mark.parametrize("backend", WITH_CLUSTER, indirect=True)
def test_a_hand_over_kept_where_it_was_before_they_moved_still_refuses_and_still_counts(
    store: EventStore,
) -> None:
    games, state, player, command = _started(store)
    _hand_over_before_they_moved(store, player)
    with pytest.raises(IllegalCommand) as refused:
        _send(store, games, player, state.version, command, "after an old hand-over")
    assert refused.value.code == "seat_handed_over"
    assert store.run(current_op(games, "g1")).version == state.version
    assert store.run(handovers_op(store.keys, "g1")) == {player: "greedy"}
    # Handed over again (a second resign), it stays the first level, and stays where it is.
    assert store.run(hand_over_op(store.keys, "g1", player, "other")) == "greedy"
    assert not store.client.exists(store.keys.game("g1").handed)


@pytest.mark.parametrize("backend", WITH_CLUSTER, indirect=True)
def test_a_hand_over_is_kept_where_the_version_before_looks_too_during_a_rolling_upgrade(
    store: EventStore,
) -> None:
    """A server of the version before, still running beside this one, refuses the player
    (its script asks `<prefix>:handed:<game>`) and lets the bot play the seat (its workers
    read it there)."""
    _games, _state, player, _command = _started(store)
    _hand_over(store, player)
    assert store.client.hget(store.keys.game("g1").handed, player) == b"greedy"
    earlier = legacy_handovers_key(store.keys.prefix, "g1")
    assert store.client.hget(earlier, player) == b"greedy"


@pytest.mark.parametrize("backend", BACKENDS, indirect=True)
def test_on_a_single_redis_an_old_hand_over_is_checked_in_the_same_round_trip(
    client: Any, prefix: str
) -> None:
    counting = _Counting(client)
    store = EventStore(counting, prefix=prefix)
    games, state, player, command = _started(store)
    _hand_over_before_they_moved(store, player)
    trips, refused = _trips(
        counting,
        lambda: _send(store, games, player, state.version, command, "refused in one trip"),
    )
    assert trips == 1 and isinstance(refused, IllegalCommand)


@pytest.mark.parametrize("backend", WITH_CLUSTER, indirect=True)
def test_whether_a_seat_was_handed_over_is_told_wherever_the_hand_over_is_kept(
    store: EventStore,
) -> None:
    """What a preview asks before deciding: yes for a hand-over in the game's slot or where
    it was kept before, no for a player who handed nothing over."""
    _games, state, mover, _command = _started(store)
    other = next(player for player in state.players if player != mover)
    assert store.run(handed_over_op(store.context, "g1", mover)) is False
    _hand_over(store, mover)
    _hand_over_before_they_moved(store, other)
    assert store.run(handed_over_op(store.context, "g1", mover)) is True
    assert store.run(handed_over_op(store.context, "g1", other)) is True
    assert store.run(handed_over_op(store.context, "g1", "nobody")) is False


@pytest.mark.parametrize("backend", BACKENDS, indirect=True)
def test_on_a_single_redis_asking_whether_a_seat_was_handed_over_is_one_round_trip(
    client: Any, prefix: str
) -> None:
    counting = _Counting(client)
    store = EventStore(counting, prefix=prefix)
    _games, _state, player, _command = _started(store)
    _hand_over_before_they_moved(store, player)
    store.run(handed_over_op(store.context, "g1", player))  # the script loaded, if it was not
    for asked, told in ((player, True), ("nobody", False)):
        op = handed_over_op(store.context, "g1", asked)
        assert _trips(counting, partial(store.run, op)) == (1, told)


@pytest.mark.parametrize("backend", WITH_CLUSTER, indirect=True)
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


def _old_place_asked(asked: list[Request], prefix: str) -> bool:
    old = legacy_handovers_key(prefix, "g1")
    return any(isinstance(r, Call) and old in r.args for r in asked)


@pytest.mark.parametrize("backend", WITH_CLUSTER, indirect=True)
def test_moving_the_hand_overs_of_before_puts_each_in_its_games_slot_and_marks_the_store(
    store: EventStore,
) -> None:
    games, state, player, command = _started(store)
    other = next(each for each in state.players if each != player)
    _hand_over_before_they_moved(store, player)
    # Both places name `other`, differently (a line of before resigned them meanwhile): the
    # level of before is the one that plays, and stays so.
    store.client.hset(store.keys.game("g1").handed, other, "ismcts")
    store.client.hset(legacy_handovers_key(store.keys.prefix, "g1"), other, "greedy")
    playing = store.run(handovers_op(store.keys, "g1"))
    assert not store.client.exists(handovers_moved_key(store.keys.prefix))
    assert move_earlier(store.client, store.run, store.keys) == (1, 2, [])
    moved = store.client.hgetall(store.keys.game("g1").handed)
    assert moved == {player.encode(): b"greedy", other.encode(): b"greedy"}
    assert store.run(handovers_op(store.keys, "g1")) == playing
    assert store.client.exists(handovers_moved_key(store.keys.prefix))
    assert store.client.exists(legacy_handovers_key(store.keys.prefix, "g1"))  # for lines before
    assert move_earlier(store.client, store.run, store.keys) == (1, 2, [])  # again: the same
    with pytest.raises(IllegalCommand, match="handed this seat to a bot"):
        _send(store, games, player, state.version, command, "after the move")


@pytest.mark.parametrize("backend", WITH_CLUSTER, indirect=True)
def test_once_the_hand_overs_moved_a_command_asks_the_old_place_no_more(
    store: EventStore, backend: str
) -> None:
    """On a cluster a command asked the old place before its append (its script cannot reach
    it); a process that learns they moved asks it no more, and the script alone refuses a
    player whose old hand-over moved. On a single Redis the script asked it all along."""
    games, state, player, command = _started(store)
    asked: list[Request] = []
    store.run(_watching(_turn_op(games, state, player, command, "before the move"), asked.append))
    assert _old_place_asked(asked, store.keys.prefix) == (backend == "cluster")
    state, player, command = _turn(store, games)
    _hand_over_before_they_moved(store, player)
    move_earlier(store.client, store.run, store.keys)
    started_after = EventStore(store.client, prefix=store.keys.prefix)  # a process started now
    games = CommandPath(started_after.context, load_game_data())
    asked.clear()
    with pytest.raises(IllegalCommand, match="handed this seat to a bot"):
        started_after.run(_watching(_turn_op(games, state, player, command, "after"), asked.append))
    assert not _old_place_asked(asked, store.keys.prefix)
    assert [r.script for r in asked if isinstance(r, Eval)][-1] == "append"  # it refused


@pytest.mark.parametrize("backend", BACKENDS, indirect=True)
def test_a_process_running_before_the_move_learns_of_it_within_256_commands(
    store: EventStore,
) -> None:
    assert store.run(earlier_moved_op(store.context)) is False  # asked: not yet
    move_earlier(store.client, store.run, store.keys)
    told = [store.run(earlier_moved_op(store.context)) for _ in range(256)]
    assert told == [False] * 255 + [True]
    # The mark taken away (a rollback; a store restored from before the move): seen as soon.
    store.client.delete(handovers_moved_key(store.keys.prefix))
    told = [store.run(earlier_moved_op(store.context)) for _ in range(256)]
    assert told == [True] * 255 + [False]


@pytest.mark.parametrize("backend", WITH_CLUSTER, indirect=True)
def test_the_move_reaches_every_game_wherever_it_lives_and_marks_only_when_all_moved(
    store: EventStore,
) -> None:
    """Games in every slot (on a cluster: every master); a key under the old name that is no
    game's hand-overs is named, left, and keeps the store unmarked, the others moved."""
    ids = [f"g{number}" for number in range(40)]
    for game_id in ids:
        store.client.set(archive_key(store.keys.game(game_id)), b"an archive")
        store.client.hset(legacy_handovers_key(store.keys.prefix, game_id), "p1", "greedy")
    store.client.set(legacy_handovers_key(store.keys.prefix, "g-odd"), b"not a hash")
    store.client.hset(legacy_handovers_key(store.keys.prefix, "no game!"), "p1", "greedy")
    moved = move_earlier(store.client, store.run, store.keys)
    assert (moved.games, moved.handovers) == (40, 40)
    assert sorted(problem.split(": ")[0] for problem in moved.problems) == [
        legacy_handovers_key(store.keys.prefix, "g-odd"),
        legacy_handovers_key(store.keys.prefix, "no game!"),
    ]
    assert all(store.client.hget(store.keys.game(g).handed, "p1") == b"greedy" for g in ids)
    assert not store.client.exists(handovers_moved_key(store.keys.prefix))


@pytest.mark.parametrize("backend", WITH_CLUSTER, indirect=True)
def test_a_move_with_a_shard_count_not_the_deployments_copies_nothing_and_marks_nothing(
    store: EventStore,
) -> None:
    _games, _state, player, _command = _started(store)
    _hand_over_before_they_moved(store, player)
    elsewhere = EventStore(store.client, prefix=store.keys.prefix, shards=100)
    moved = move_earlier(elsewhere.client, elsewhere.run, elsewhere.keys)
    assert (moved.games, moved.handovers) == (0, 0)
    [problem] = moved.problems
    assert "neither events nor an archive" in problem and "100 shards" in problem
    assert not store.client.exists(handovers_moved_key(store.keys.prefix))
    assert not store.client.exists(elsewhere.keys.game("g1").handed)


@pytest.mark.parametrize("backend", [p for p in WITH_CLUSTER if p.id != "fakeredis"], indirect=True)
def test_the_move_handovers_command_moves_them_and_says_how_many(
    store: EventStore, backend: str, request: pytest.FixtureRequest,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    _games, _state, player, _command = _started(store)
    _hand_over_before_they_moved(store, player)
    if backend == "cluster":
        url = f"redis+cluster://127.0.0.1:{request.getfixturevalue('cluster_port')}"
    else:
        url = request.getfixturevalue("redis_url")
    monkeypatch.setenv("PATRICIAN_PREFIX", store.keys.prefix)
    monkeypatch.setenv("PATRICIAN_SHARDS", "100")  # not the deployment's: nothing is moved
    refused = CliRunner().invoke(main, ["move-handovers", "--redis-url", url])
    assert refused.exit_code == 1
    assert "100 shards" in refused.output and "the store is not marked" in refused.output
    assert not store.client.exists(handovers_moved_key(store.keys.prefix))
    monkeypatch.delenv("PATRICIAN_SHARDS")
    done = CliRunner().invoke(main, ["move-handovers", "--redis-url", url])
    assert done.exit_code == 0, done.output
    assert done.output == (
        f"prefix {store.keys.prefix!r}, 16 shards\n"
        "moved into their games' slots: 1 hand-over(s) of 1 game(s)\n"
    )
    assert store.client.hget(store.keys.game("g1").handed, player) == b"greedy"
    assert store.client.exists(handovers_moved_key(store.keys.prefix))


def _turn_op(
    games: CommandPath, state: State, player: str, command: Command, command_id: str
) -> Op[Outcome]:
    return execute_op(
        games, "g1", player=player, expected_version=state.version, command_id=command_id,
        commands=[command], now="2026-12-03T08:00:00.000Z",
    )  # fmt: skip

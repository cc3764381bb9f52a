"""The follow-up of an append (`workers.follow_up`): one gather, then its steps in their order,
the webhooks last. The steps run with the context they are given, outside any RQ job (another
driver than `game_moved` may run them), and the gather of a move costs the round trips to
Redis it always has: two, and two more for the clocks of a timed game (`projections.timekeeping`:
the appends' times, then the vacations)."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest
from litestar.testing import TestClient

from server.config.card_data import load_game_data
from server.config.settings import Settings
from store.inbox import inbox_op
from store.reads import current_op
from tests.server.client import Api, Json, Player
from tests.server.live import REDIS_URL, build_app, delete_prefix, redis_client, unique_prefix
from workers import context as worker_context
from workers.bot_play import levels_of
from workers.context import WorkerContext
from workers.follow_up import STEPS, gather, run_steps
from workers.settings import context_for

pytestmark = pytest.mark.redis


@pytest.fixture
def served() -> Iterator[tuple[Api, WorkerContext]]:
    """The server on the real Redis (which runs no workers: the test follows each append
    itself) and a worker context on the same keys."""
    prefix = unique_prefix("follow-up")
    settings = Settings(redis_url=REDIS_URL, prefix=prefix)
    context = context_for(redis_client(), load_game_data(None), settings.workers())
    try:
        with TestClient(build_app(settings), timeout=30) as client:
            yield Api(client), context
    finally:
        context.webhooks.close()
        delete_prefix(prefix)


def _against_a_bot(api: Api, clock: Json = None) -> tuple[Player, str]:
    me = api.create_player("Ada")
    body: Json = {"seats": 2, "bots": [{"level": "greedy"}], "entropy": "e"}
    if clock is not None:
        body["clock"] = clock
    created = api.ok(api.request("POST", "/api/games", player=me, json=body), 201)
    return me, str(created["game_id"])


def _round_trips(client: Any, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The round trips `client` makes from now on: a command each, or a pipeline each."""
    trips: list[str] = []
    execute, pipeline = client.execute_command, client.pipeline

    def command(*args: Any, **kwargs: Any) -> Any:
        trips.append(str(args[0]))
        return execute(*args, **kwargs)

    def pipelined(*args: Any, **kwargs: Any) -> Any:
        made = pipeline(*args, **kwargs)
        run = made.execute

        def sent(*args: Any, **kwargs: Any) -> Any:
            trips.append(f"pipeline of {len(made.command_stack)}")
            return run(*args, **kwargs)

        made.execute = sent
        return made

    monkeypatch.setattr(client, "execute_command", command)
    monkeypatch.setattr(client, "pipeline", pipelined)
    return trips


def test_the_steps_follow_an_append_in_their_order_the_webhooks_last() -> None:
    assert [step.__name__ for step in STEPS] == [
        "name_notices",
        "write_inboxes",
        "set_timers",
        "rate_finished_game",
        "keep_reliability",
        "analyse_finished_game",
        "play_bot_seat",
        "send_first_webhooks",
    ]


def test_the_steps_run_with_the_context_they_are_given_outside_any_job(
    served: tuple[Api, WorkerContext], monkeypatch: pytest.MonkeyPatch
) -> None:
    api, context = served
    monkeypatch.setattr(worker_context, "_current", [])  # no job's context to fall back on
    me, game_id = _against_a_bot(api)
    rng, followed, outcomes = random.Random(4), 0, list[str]()
    for _ in range(40):
        for append in api.record(game_id)["commands"]:
            if append["last_version"] > followed:
                first, followed = append["first_version"], append["last_version"]
                follow_up = gather(context, game_id, first, followed)
                outcomes.append("moved on" if follow_up is None else run_steps(context, follow_up))
        if {"greedy played", "a person decides"} <= set(outcomes):
            break  # the bot played, and it was the person's turn again
        board = api.board(game_id, me)
        if board["pending"]["seat"] == board["viewer"]:
            command = rng.choice(board["legal_commands"])
            api.ok(api.send(game_id, me, board["version"], [command]))
    assert {"greedy played", "a person decides"} <= set(outcomes), outcomes
    by = {c["by"] for c in api.record(game_id)["commands"] if c["kind"] == "commands"}
    assert by == {"", "bot:greedy"}, "the bot played its seat, through the command path"
    inbox = context.store.run(inbox_op(context.accounts.prefix, me.player_id))
    assert [(e.game_id, e.version) for e in inbox] == [(game_id, followed)], "the inbox kept"


@pytest.mark.parametrize(("clock", "trips"), [(None, 2), ({"per_move_hours": 24}, 4)])
def test_the_gather_of_a_move_costs_two_round_trips_and_two_for_the_clocks(
    served: tuple[Api, WorkerContext], monkeypatch: pytest.MonkeyPatch, clock: Json, trips: int
) -> None:
    api, context = served
    _me, game_id = _against_a_bot(api, clock)
    last = api.record(game_id)["commands"][-1]
    state = context.store.run(current_op(context.path, game_id))
    levels_of(context, game_id, state)  # the players' levels, known from then on
    made = _round_trips(context.store.client, monkeypatch)
    follow_up = gather(context, game_id, last["first_version"], last["last_version"])
    assert follow_up is not None and not follow_up.moved_on
    assert (follow_up.clock is not None) == (clock is not None)
    assert len(made) == trips, made

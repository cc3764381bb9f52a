"""What a notification tells, over whole games of three played through the server, each append
followed by the workers' own steps (`workers.follow_up`) and each notification's document made
as its first webhook attempt makes it (`workers.notice_documents.document_of`): every copy of
`game.ended` tells the end, the mover's too; a player the clock plays for is told only what
they were not told already, so their notifications do not grow with the game; a turn a bot
played for a seat is said once, not before each of its commands; and two reminders of one
turn, however close, are two notifications with two ids."""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from itertools import pairwise

import pytest
from litestar.testing import TestClient

from projections.notices import NoticeDocument
from server.config.card_data import load_game_data
from server.config.settings import Settings
from store.reads import batches_op, current_op
from store.stored import meta_decoder
from tests.server.client import Api, Json, Player
from tests.server.live import REDIS_URL, build_app, delete_prefix, redis_client, unique_prefix
from workers import context as worker_context
from workers.context import WorkerContext
from workers.deadlines import fire_due, remind, timed_out
from workers.follow_up import STEPS, gather, send_first_webhooks
from workers.notice_documents import document_of
from workers.settings import context_for

pytestmark = pytest.mark.redis

PUBLIC = "https://play.example"
NOWHERE = "http://127.0.0.1:9/hook"
"""A webhook URL the steps name notices for; nothing is sent to it (the test makes each
document itself, as the first attempt would)."""


class FakeClock:
    def __init__(self) -> None:
        self.now = datetime(2026, 12, 4, 9, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


@dataclass
class Told:
    version: int
    document: NoticeDocument


@dataclass
class Table:
    """The server on the real Redis (running no workers) and a worker context on its keys,
    which follows each append itself and keeps each player's notifications in order."""

    api: Api
    context: WorkerContext
    clock: FakeClock
    followed: dict[str, int] = field(default_factory=dict)
    told: dict[str, list[NoticeDocument]] = field(default_factory=dict)

    def players(self, *names: str, **more: Json) -> list[Player]:
        made = [self.api.create_player(name) for name in names]
        for player in made:
            body = {"webhook": {"url": NOWHERE}, **more}
            self.api.ok(self.api.request("PUT", "/api/me/notifications", player=player, json=body))
        return made

    def follow(self, game_id: str) -> None:
        """Follow every append not followed yet (a bot's move among them), as the workers
        do, and make the document of each notification named."""
        while True:
            batches = self.context.store.run(batches_op(self.context.path, game_id))
            fresh = [b for b in batches if b.last_version > self.followed.get(game_id, 0)]
            if not fresh:
                return
            for batch in fresh:
                self.followed[game_id] = batch.last_version
                follow_up = gather(self.context, game_id, batch.first_version, batch.last_version)
                if follow_up is None:
                    continue
                for step in STEPS:
                    if step is not send_first_webhooks:
                        follow_up = step(self.context, follow_up)
                for _id, notice, _channels in follow_up.first_attempts:
                    document = document_of(self.context, notice, game_id, batch.last_version)
                    self.told.setdefault(notice.player_id, []).append(document)

    def of(self, player: Player, kind: str | None = None) -> list[NoticeDocument]:
        return [d for d in self.told.get(player.player_id, []) if kind in (None, d.type)]


@pytest.fixture
def table(monkeypatch: pytest.MonkeyPatch) -> Iterator[Table]:
    prefix = unique_prefix("notice-telling")
    clock = FakeClock()
    settings = Settings(
        redis_url=REDIS_URL, prefix=prefix, public_url=PUBLIC, webhook_allow="127.0.0.1"
    )
    context = context_for(redis_client(), load_game_data(None), settings.workers(), clock)
    monkeypatch.setattr(worker_context, "_current", [context])  # the clock's job runs here
    try:
        with TestClient(build_app(settings, clock=clock), timeout=30) as client:
            yield Table(Api(client), context, clock)
    finally:
        context.webhooks.close()
        delete_prefix(prefix)


def _game(table: Table, players: list[Player], **more: Json) -> str:
    body = {"seats": len(players), "entropy": "e", **more}
    api = table.api
    created = api.ok(api.request("POST", "/api/games", player=players[0], json=body), 201)
    for player in players[1:]:
        api.join(player, created["game_id"], created["invite_code"])
    table.follow(created["game_id"])
    return str(created["game_id"])


def _play(
    table: Table, game_id: str, players: list[Player], silent: Player | None = None, seed: int = 1
) -> Json:
    """Play the game to its end with random legal commands, each followed; `silent` never
    acts: the clock plays its turns (a day and a second after each began)."""
    api, rng = table.api, random.Random(seed)
    seats = {api.board(game_id, p)["viewer"]: p for p in players}
    while (board := api.board(game_id))["phase"] == "playing":
        mover = seats[board["pending"]["seat"]]
        if mover == silent:
            table.clock.advance(24 * 3600 + 1)
            assert timed_out(game_id, board["version"]) == "played"
        else:
            mine = api.board(game_id, mover)
            command = rng.choice(mine["legal_commands"])
            api.ok(api.send(game_id, mover, mine["version"], [command]))
            table.clock.advance(60)
        table.follow(game_id)
    return board


def test_every_player_is_told_the_end_and_the_scores_the_one_whose_move_ended_it_too(
    table: Table,
) -> None:
    players = table.players("Ada", "Bea", "Cyd")
    game_id = _game(table, players)
    board = _play(table, game_id, players)
    last = table.context.store.run(batches_op(table.context.path, game_id))[-1]
    for player in players:
        (ended,) = table.of(player, "game.ended")
        assert ended.version == board["version"] and ended.winners
        told = "\n".join(ended.happened)
        assert "The game is over." in told and "Winner:" in told, (player.name, ended.happened)
        for name in ("Ada", "Bea", "Cyd"):
            assert f"{name} (seat" in told.partition("The game is over.")[2], "the scores"
        assert ended.since_version < last.first_version, "the move that ended it is told"


def test_a_silent_player_is_told_only_what_they_were_not_told_already(table: Table) -> None:
    players = table.players("Ada", "Bea", "Cyd")
    cyd = players[2]
    game_id = _game(table, players, clock={"per_move_hours": 24, "hand_over_after": 100})
    _play(table, game_id, players, silent=cyd)
    told = table.of(cyd)
    timed = [d for d in told if d.type == "turn.timed_out"]
    assert len(timed) >= 3, "the clock played several turns of Cyd's"
    for before, document in pairwise(told):
        if document.version > before.version:  # (several of one append start alike)
            assert document.since_version == before.version, (before.type, document.type)
    for document in timed:
        clock_told = [line for line in document.happened if "ran out" in line]
        assert len(clock_told) == 1 and document.happened[0] == clock_told[0], document.happened
    longest = max(len(d.happened) for d in told[2:])
    assert longest < 40, "a notification tells a round at most, not the game so far"


def _bot_turns(table: Table, game_id: str, after: int, to: int) -> int:
    """How many turns a bot played in the versions after `after` up to `to`: runs of appends
    by a bot for one seat."""
    runs, last = 0, None
    for batch in table.context.store.run(batches_op(table.context.path, game_id)):
        meta = meta_decoder.decode(batch.metadata)
        mover = (meta.seat, meta.by) if meta.kind == "commands" else None
        if after < batch.first_version <= to and meta.by.startswith("bot:") and mover != last:
            runs += 1
        last = mover
    return runs


def test_a_turn_a_bot_played_for_a_seat_is_said_once_not_before_each_of_its_commands(
    table: Table,
) -> None:
    players = table.players("Ada", "Bea")
    game_id = _game(table, players, seats=3, bots=[{"level": "greedy"}])
    _play(table, game_id, players)
    turns = [d for p in players for d in table.of(p, "turn.started")]
    said = 0
    for document in turns:
        lines = [line for line in document.happened if "bot played for" in line]
        assert len(lines) == _bot_turns(table, game_id, document.since_version, document.version)
        said += len(lines)
    assert said >= 10, "the bot's turns were told"


def test_two_reminders_within_one_minute_are_two_notifications_with_two_ids(table: Table) -> None:
    players = table.players("Ada", "Bea", reminder_hours=[0.008, 0.004])  # 29 s and 14 s
    game_id = _game(table, players, clock={"per_move_hours": 1})
    version = table.context.store.run(current_op(table.context.path, game_id)).version
    table.clock.advance(3600 - 10)  # both are due, the deadline is not
    queue = table.context.queue
    assert fire_due(table.context) == 2
    reminders = [queue.fetch_job(i) for i in queue.job_ids if i.startswith("remind")]
    assert len({job.id for job in reminders if job is not None}) == 2, queue.job_ids
    for job in reminders:
        assert job is not None and job.args[:2] == [game_id, version]
        assert remind(*job.args) == "reminded"
    sent = [i for i in queue.job_ids if i.startswith("turn-reminder")]
    assert len(sent) == len(set(sent)) == 2, sent
    assert {i.rsplit("-", 2)[1] for i in sent} == {"29s", "14s"}

"""docs/architecture.md says which files a command, a notification and a replay go through:
each journey is run here (the app in this process, on its embedded store) and the files of
ours whose code runs are listed as they are first entered, and the page must say exactly
that. A file on the path hands the work on to another of our files; a file the journey only
asks for a value (a key name, the time, a hash, a struct, a log line) is listed apart.

`pytest tests/test_architecture.py -s` prints the sections the page should hold.
"""

from __future__ import annotations

import sys
import uuid
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

import pytest
from litestar import Litestar
from litestar.di import Provide
from litestar.testing import TestClient

from server.config.card_data import load_game_data
from server.config.settings import Settings
from tests.server.client import Api, Player
from tests.server.live import build_app
from tests.workers.sink import Sink
from workers import context as worker_context
from workers.runner import follower_of
from workers.settings import WorkerSettings, context_for

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "architecture.md"
OURS = ("domain", "bots", "store", "outbound", "evidence", "projections", "workers", "server")
PATH_TARGET = 12
"""The most files a command's path may hand the work through, request to answer."""


class Journey:
    """The files of ours a piece of work enters, in order, and which of them hand it on."""

    def __init__(self, title: str) -> None:
        self.title = title
        self.entered: list[str] = []
        self.handing_on: set[str] = set()

    def profile(self, frame: FrameType, event: str, _arg: Any) -> None:
        if event != "call":
            return
        here = _ours(frame)
        if here is None:
            return
        if here not in self.entered:
            self.entered.append(here)
        caller = frame.f_back
        while caller is not None and _ours(caller) is None:
            caller = caller.f_back
        if caller is not None and (there := _ours(caller)) != here:
            self.handing_on.add(str(there))

    @property
    def path(self) -> list[str]:
        """The files that hand the work on, outside the rules (the domain is one room here:
        what it does inside is the game, not the journey)."""
        return [name for name in self.entered if name in self.handing_on and not _rules(name)]

    @property
    def asked(self) -> list[str]:
        return sorted(
            name for name in self.entered if name not in self.handing_on and not _rules(name)
        )

    def section(self) -> str:
        """The journey as docs/architecture.md tells it."""
        path = " ->\n".join(f"  `{name}`" for name in self.path)
        asked = ", ".join(f"`{name}`" for name in self.asked)
        return (
            f"### {self.title}\n\n"
            f"On the path ({len(self.path)} files):\n\n{path}\n\n"
            "Beside them, whichever rules of `domain/` the game calls for.\n\n"
            f"Asked on the way ({len(self.asked)} files): {asked}.\n"
        )


def _rules(name: str) -> bool:
    return name.startswith("domain/")


def _ours(frame: FrameType) -> str | None:
    name = frame.f_code.co_filename
    if not name.startswith(str(ROOT)):
        return None
    relative = Path(name).relative_to(ROOT).as_posix()
    return relative if relative.split("/")[0] in OURS else None


def _traced_in_app(
    client: TestClient[Litestar], journey: Journey, request: Callable[[], Any]
) -> None:
    """Make one request with the journey profiling the app's own thread (where the app runs
    under the test client)."""

    async def on() -> None:
        sys.setprofile(journey.profile)

    async def off() -> None:
        sys.setprofile(None)

    client.blocking_portal.call(on)
    try:
        request()
    finally:
        client.blocking_portal.call(off)


def _to_move(api: Api, game_id: str, players: list[Player]) -> tuple[Player, Any]:
    """The player whose decision it is, and their board."""
    for player in players:
        board = api.board(game_id, player)
        if board["pending"] and board["pending"]["seat"] == board["viewer"]:
            return player, board
    raise AssertionError("nobody decides")


def _move(api: Api, game_id: str, players: list[Player]) -> Any:
    player, board = _to_move(api, game_id, players)
    return api.ok(api.send(game_id, player, board["version"], [board["legal_commands"][0]]))


@pytest.fixture(scope="module")
def journeys() -> list[Journey]:
    command, replay, notice = (
        Journey("A command: `POST /api/games/{game_id}/commands`"),
        Journey("A replay: `GET /api/games/{game_id}/replay` of a game in play"),
        Journey("A notification: the follow-up of a move, to the next player's webhook"),
    )
    app = build_app(Settings(embedded_workers=False, webhook_allow="127.0.0.1"))
    with Sink() as sink, TestClient(app, timeout=30) as client:
        api = Api(client)
        players = [api.create_player(name) for name in ("Ada", "Bea")]
        for player in players:
            _subscribe(api, sink, player)
        created = api.create_game(players[0], 2)
        game_id = created["game_id"]
        api.join(players[1], game_id, created["invite_code"])
        _move(api, game_id, players)  # warm: the state cached, the key listed
        player, board = _to_move(api, game_id, players)
        body = {
            "expected_version": board["version"],
            "command_id": uuid.uuid4().hex,
            "commands": [board["legal_commands"][0]],
        }
        _traced_in_app(
            client,
            command,
            lambda: client.post(f"/api/games/{game_id}/commands", json=body, headers=player.auth),
        )
        client.get(f"/api/games/{game_id}/replay")  # warm
        _move(api, game_id, players)
        _traced_in_app(client, replay, lambda: client.get(f"/api/games/{game_id}/replay"))
        _follow_up_traced(app, api, game_id, players, notice)
        assert any(message["type"] == "turn.started" for message in _all(sink)), "told"
    return [command, notice, replay]


def _all(sink: Sink) -> list[Any]:
    return [message for messages in sink.received.values() for message in messages]


def _subscribe(api: Api, sink: Sink, player: Player) -> None:
    path = f"/{player.name}"
    body = {"webhook": {"url": sink.url(path)}}
    answer = api.ok(api.request("PUT", "/api/me/notifications", player=player, json=body))
    sink.secrets[path] = answer["webhook"]["secret"]


def _follow_up_traced(
    app: Litestar, api: Api, game_id: str, players: list[Player], journey: Journey
) -> None:
    """Follow the notices of a move in this thread, as a follower runs them, on a worker
    context over the app's own embedded store; the ones before it warm the context."""
    import fakeredis

    provide = app.dependencies["services"]
    assert isinstance(provide, Provide)
    services = provide.dependency()
    server = services.games.store.client.connection_pool.connection_kwargs["server"]
    settings = WorkerSettings(webhook_allow="127.0.0.1")
    context = context_for(fakeredis.FakeRedis(server=server), load_game_data(), settings)
    before = list(worker_context._current)
    worker_context.configure(context)
    follower = follower_of(context, "map")
    follower.ensure_groups()
    try:
        _move(api, game_id, players)
        follower.step()  # warm: every notice so far followed
        mover, _board = _to_move(api, game_id, players)
        _move(api, game_id, players)
        while _to_move(api, game_id, players)[0] == mover:  # the move that ends a turn
            _move(api, game_id, players)
        sys.setprofile(journey.profile)
        try:
            follower.step()
        finally:
            sys.setprofile(None)
    finally:
        worker_context._current[:] = before


def test_the_map_says_each_journey_as_it_is_measured(journeys: list[Journey]) -> None:
    text = DOC.read_text()
    for journey in journeys:
        print(journey.section())
    stale = [journey.title for journey in journeys if journey.section() not in text]
    assert not stale, f"docs/architecture.md no longer says these journeys as they run: {stale}"


def test_a_command_hands_its_work_through_at_most_twelve_files(journeys: list[Journey]) -> None:
    command = journeys[0]
    assert len(command.path) <= PATH_TARGET, command.path

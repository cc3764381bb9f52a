"""An archived game reads exactly as it did live: every answer of the HTTP API about a finished
game, byte for byte, before its archiving and after it, from a server that never saw it live
(docs/store.md, "Archive"). On the real Redis, under a unique prefix."""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
import redis
from click.testing import CliRunner
from litestar import Litestar
from litestar.testing import TestClient

from server.cli.main import main
from server.config.settings import Settings
from store.archived import archive_key
from store.archiving import archive_game
from store.client import EventStore
from store.clock import Clock, system_clock
from store.memory import game_memory
from tests.server.client import Api, Player
from tests.server.live import build_app
from tests.server.sealing import KEY_FILE

pytestmark = pytest.mark.redis

NOON = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
REQUEST_ID = re.compile(rb'"request_id":"[0-9a-f]+"')
"""Each answer names its own request (a refusal says it in its body): left out of the compared."""


def _app(redis_url: str, prefix: str, clock: Clock = lambda: NOON) -> Litestar:
    settings = Settings(redis_url=redis_url, prefix=prefix, signing_key_file=str(KEY_FILE))
    return build_app(settings, clock=clock)


@pytest.fixture
def sync_client(redis_url: str) -> Iterator[Any]:
    client = redis.Redis.from_url(redis_url)
    yield client
    client.close()


def _answers(api: Api, game_id: str, players: list[Player], commands: list[Any]) -> list[Any]:
    """Every answer about a finished game, as (what was asked, status, body bytes)."""
    asked: list[tuple[str, str, Player | None, Any]] = []
    for who in [None, *players]:
        for path in ("", "/events", "/events?after=37", "/replay", "/notation", "/record",
                     "/at/1", "/at/40", "/at/40?as=1", "/talk", "/stream?after=30"):  # fmt: skip
            asked.append(("GET", f"/api/games/{game_id}{path}", who, None))
    for player in players:
        asked.append(("GET", "/api/me/games", player, None))
    for player, body in commands:  # sent again, sent on the finished game, a join
        asked.append(("POST", f"/api/games/{game_id}/commands", player, body))
    answers = []
    for method, path, who, sent in asked:
        response = api.request(method, path, player=who, json=sent)
        body = REQUEST_ID.sub(b"", response.content)
        answers.append((method, path, who and who.name, response.status_code, body))
    record = api.request("GET", f"/api/games/{game_id}/record").content
    audited = api.request(
        "POST", "/api/audit", content=record, headers={"content-type": "application/json"}
    )
    answers.append(("POST", "/api/audit", None, audited.status_code, audited.content))
    return answers


def _finished_game(api: Api) -> tuple[str, list[Player], list[Any]]:
    rng = random.Random(5)
    table = api.new_table(3, modules=("trade_routes", "delegates"), rng=rng)
    first_seat = table.seats[table.pending or 0]
    board = api.board(table.game_id, first_seat)
    first = {
        "expected_version": board["version"],
        "command_id": "first-move",
        "commands": [board["legal_commands"][0]],
    }
    sent = api.request(
        "POST", f"/api/games/{table.game_id}/commands", player=first_seat, json=first
    )
    assert sent.status_code == 200, sent.text
    table.note(table.pending or 0, sent.json())
    table.play_to_end(rng, whole_turns=0.7)
    late = {**first, "expected_version": table.version, "command_id": "late"}
    return table.game_id, table.seats, [(first_seat, first), (table.seats[1], late)]


def test_every_answer_about_an_archived_game_is_the_one_it_gave_live(
    redis_url: str, redis_prefix: str, sync_client: Any
) -> None:
    with TestClient(_app(redis_url, redis_prefix), timeout=30) as live:
        api = Api(live)
        game_id, players, commands = _finished_game(api)
        before = _answers(api, game_id, players, commands)

    store = EventStore(sync_client, prefix=redis_prefix)
    keys = store.keys.game(game_id)
    assert archive_game(store, game_id) == "archived"
    assert not sync_client.exists(keys.events, keys.commands, keys.snapshot)
    assert sync_client.exists(archive_key(keys))
    assert game_memory(sync_client, store.keys, game_id)["total"] <= 40_000

    with TestClient(_app(redis_url, redis_prefix), timeout=30) as cold:  # never saw it live
        after = _answers(Api(cold), game_id, players, commands)
    for was, now in zip(before, after, strict=True):
        assert now == was, f"{was[0]} {was[1]} as {was[2]} changed"


def test_a_game_still_on_is_left_live_and_a_game_archived_twice_is_archived_once(
    redis_url: str, redis_prefix: str, sync_client: Any
) -> None:
    with TestClient(_app(redis_url, redis_prefix), timeout=30) as live:
        api = Api(live)
        table = api.new_table(2, rng=random.Random(2))
        store = EventStore(sync_client, prefix=redis_prefix)
        assert archive_game(store, table.game_id) == "unfinished"
        assert sync_client.exists(store.keys.game(table.game_id).events)
        table.play_to_end(random.Random(3), whole_turns=0.8)
        assert archive_game(store, table.game_id) == "archived"
        assert archive_game(store, table.game_id) == "gone"
        assert api.board(table.game_id)["phase"] == "over"


def test_the_archive_command_archives_what_is_finished_and_says_so(
    redis_url: str, redis_prefix: str, sync_client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    with TestClient(_app(redis_url, redis_prefix, system_clock), timeout=30) as live:
        api = Api(live)  # the game ends now: the command's default age is days
        table = api.new_table(2, rng=random.Random(4))
        table.play_to_end(random.Random(4), whole_turns=0.8)
        waiting = api.create_game(api.create_player("Ida"), 3)["game_id"]
    monkeypatch.setenv("PATRICIAN_PREFIX", redis_prefix)
    monkeypatch.setenv("PATRICIAN_ARCHIVE_AFTER_SECONDS", "soon")
    refused = CliRunner().invoke(main, ["archive", "--redis-url", redis_url])
    assert refused.exit_code == 2 and "PATRICIAN_ARCHIVE_AFTER_SECONDS" in refused.output
    monkeypatch.delenv("PATRICIAN_ARCHIVE_AFTER_SECONDS")
    young = CliRunner().invoke(main, ["archive", "--redis-url", redis_url])  # 7 days
    assert young.exit_code == 0 and young.output.startswith("archived 0 finished games")
    done = CliRunner().invoke(main, ["archive", "--redis-url", redis_url, "--older-than", "0"])
    assert done.exit_code == 0 and done.output.startswith("archived 1 finished games"), done.output
    store = EventStore(sync_client, prefix=redis_prefix)
    assert list(store.game_ids(archived=False)) == [waiting]
    assert sorted(store.game_ids()) == sorted([waiting, table.game_id])
    checked = CliRunner().invoke(main, ["check-rules", "--redis-url", redis_url])
    assert checked.exit_code == 0, checked.output  # the archived game decided again too
    assert "checked 2 games: none the code no longer explains" in checked.output


def test_with_an_archive_folder_the_archive_command_moves_the_game_there_and_it_reads_the_same(
    redis_url: str, redis_prefix: str, sync_client: Any, monkeypatch: pytest.MonkeyPatch,
    tmp_path: Any,
) -> None:  # fmt: skip
    with TestClient(_app(redis_url, redis_prefix), timeout=30) as live:
        api = Api(live)
        game_id, players, commands = _finished_game(api)
        before = _answers(api, game_id, players, commands)
    folder = tmp_path / "archives"
    monkeypatch.setenv("PATRICIAN_PREFIX", redis_prefix)
    monkeypatch.setenv("PATRICIAN_ARCHIVE_DIR", str(folder))
    done = CliRunner().invoke(main, ["archive", "--redis-url", redis_url, "--older-than", "0"])
    assert done.exit_code == 0 and done.output.startswith("archived 1 finished games"), done.output
    assert len(list(folder.glob("*/*.archive"))) == 1
    keys = EventStore(sync_client, prefix=redis_prefix).keys
    assert game_memory(sync_client, keys, game_id)["total"] < 1_000  # a reference, not the archive
    settings = Settings.from_environment()
    assert settings.archive_dir == str(folder)
    cold_settings = Settings(
        redis_url=redis_url, prefix=redis_prefix, signing_key_file=str(KEY_FILE),
        archive_dir=settings.archive_dir,
    )  # fmt: skip
    with TestClient(build_app(cold_settings, clock=lambda: NOON), timeout=30) as cold:
        after = _answers(Api(cold), game_id, players, commands)
    for was, now in zip(before, after, strict=True):
        assert now == was, f"{was[0]} {was[1]} as {was[2]} changed"

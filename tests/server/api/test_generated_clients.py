"""Clients generated from the served OpenAPI document work: the standard Python generator
(`openapi-python-client`) makes a typed client without a single warning, and that client plays
a whole game; the TypeScript generator (`openapi-typescript`, run only where Node.js is)
accepts the document too."""

from __future__ import annotations

import contextlib
import importlib
import json
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from litestar import Litestar
from litestar.testing import TestClient

from tests.server.live import LiveServer

GENERATOR = Path(sys.executable).parent / "openapi-python-client"


def _document(client: TestClient[Litestar], directory: Path) -> Path:
    path = directory / "openapi.json"
    path.write_text(client.get("/schema/openapi.json").text)
    return path


@pytest.mark.redis
@pytest.mark.timeout(300)
def test_a_python_client_generated_from_the_document_plays_a_whole_game(
    client: TestClient[Litestar], live_server: LiveServer, tmp_path: Path
) -> None:
    with _generated(client, tmp_path) as generated:
        _play(generated, live_server.url)


@pytest.mark.redis
@pytest.mark.timeout(300)
def test_a_record_a_generated_client_read_is_sent_back_to_the_audit_and_holds_up(
    client: TestClient[Litestar], live_server: LiveServer, tmp_path: Path
) -> None:
    """The generated models read a record and write it again as it was (a member of the
    delegates is named `D`, which the generator's own variable `d` must not overwrite), so a
    client can hand the audit the very record it was served."""
    with _generated(client, tmp_path) as generated:
        _send_a_record_back(generated, live_server.url)


@contextlib.contextmanager
def _generated(client: TestClient[Litestar], directory: Path) -> Iterator[Any]:
    """The package openapi-python-client generates from the served document, imported."""
    document = _document(client, directory)
    environment = {"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin"}
    done = subprocess.run(
        [str(GENERATOR), "generate", "--path", str(document), "--meta", "none",
         "--output-path", str(directory / "patrician_client")],
        capture_output=True, text=True, check=False, env=environment, timeout=240,
    )  # fmt: skip
    said = done.stdout + done.stderr
    assert done.returncode == 0, said
    assert "Warning" not in said and "error" not in said.lower(), said
    sys.path.insert(0, str(directory))
    try:
        yield importlib.import_module("patrician_client")
    finally:
        sys.path.remove(str(directory))
        for name in [m for m in sys.modules if m.startswith("patrician_client")]:
            del sys.modules[name]


def _send_a_record_back(generated: Any, url: str) -> None:
    """A finished game (a towers game with the delegates, called off before it starts: its
    record is complete and signed), its record read into the generated `Record` and sent to
    `POST /api/audit` as that model writes it."""
    models = importlib.import_module("patrician_client.models")
    operation = "patrician_client.api.{}".format
    create_player = importlib.import_module(operation("players.create_player"))
    create_game = importlib.import_module(operation("games.create_game"))
    cancel_game = importlib.import_module(operation("games.cancel_game"))
    get_record = importlib.import_module(operation("games.get_record"))
    audit_record = importlib.import_module(operation("records.audit_record"))
    with generated.Client(base_url=url) as anonymous:
        made = create_player.sync(client=anonymous, body=models.NewPlayer(name="Ada"))
        with generated.AuthenticatedClient(base_url=url, token=made.token) as ada:
            options = models.NewGame(seats=3, modules=["delegates"])
            created = create_game.sync(client=ada, body=options)
            cancel_game.sync(created.game_id, client=ada)
        record = get_record.sync(created.game_id, client=anonymous)
        assert isinstance(record, models.Record), record
        assert record.complete and record.game_data.delegates.d is not None
        served = httpx.get(f"{url}/api/games/{created.game_id}/record").json()
        assert record.to_dict() == served, "written again as it was served"
        audited = audit_record.sync(client=anonymous, body=record.to_dict())
    assert isinstance(audited, models.AuditResult), audited
    assert audited.ok, [check.to_dict() for check in audited.checks]


def _play(generated: Any, url: str) -> None:
    """Two players make a game and play it to the end with nothing but the generated code:
    its operations by their operation ids, its models for every body."""
    models = importlib.import_module("patrician_client.models")
    create_player = importlib.import_module("patrician_client.api.players.create_player")
    with contextlib.ExitStack() as clients:
        anonymous = clients.enter_context(generated.Client(base_url=url))
        seats = {}
        for name in ("Ada", "Bo"):
            made = create_player.sync(client=anonymous, body=models.NewPlayer(name=name))
            seats[made.player_id] = clients.enter_context(
                generated.AuthenticatedClient(base_url=url, token=made.token)
            )
        _play_to_the_end(models, anonymous, seats)


def _play_to_the_end(models: Any, anonymous: Any, seats: dict[str, Any]) -> None:
    create_game = importlib.import_module("patrician_client.api.games.create_game")
    join_game = importlib.import_module("patrician_client.api.games.join_game")
    get_board = importlib.import_module("patrician_client.api.games.get_board")
    send_commands = importlib.import_module("patrician_client.api.games.send_commands")
    first, second = seats.values()
    request_id = uuid.uuid4().hex
    created = create_game.sync(client=first, body=models.NewGame(seats=2, command_id=request_id))
    assert isinstance(created, models.CreatedGame), created
    joined = join_game.sync(
        created.game_id, client=second, body=models.JoinGame(invite_code=created.invite_code)
    )
    assert isinstance(joined, models.Joined) and joined.started
    for _ in range(2000):
        board = get_board.sync(created.game_id, client=anonymous)
        assert isinstance(board, models.View), board
        if board.phase == "over":
            break
        seat = board.pending.seat
        mover = next(
            client for player_id, client in seats.items() if player_id == board.players[seat].player
        )
        mine = get_board.sync(created.game_id, client=mover)
        request = models.SendCommands(
            expected_version=mine.version,
            command_id=uuid.uuid4().hex,
            commands=[mine.legal_commands[0]],
        )
        accepted = send_commands.sync(created.game_id, client=mover, body=request)
        assert isinstance(accepted, models.CommandsAccepted), accepted
    assert board.phase == "over" and board.result is not None


@pytest.mark.skipif(shutil.which("npx") is None, reason="Node.js is not installed")
def test_the_typescript_generator_accepts_the_document(
    client: TestClient[Litestar], tmp_path: Path
) -> None:
    document = _document(client, tmp_path)
    out = tmp_path / "patrician.ts"
    done = subprocess.run(
        ["npx", "--yes", "openapi-typescript@7.9.1", str(document), "-o", str(out)],
        capture_output=True, text=True, check=False, timeout=240, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "⚠" not in done.stdout + done.stderr, done.stdout + done.stderr
    typed = out.read_text()
    assert '"/api/games/{game_id}/commands"' in typed and "CreatedGame" in typed
    assert json.loads(document.read_text())["openapi"].startswith("3.")

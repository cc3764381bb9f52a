"""`POST /api/audit` answers what `patrician audit --json` prints, for any body: a record that
holds up, one that does not (a 200 naming the first failed check), a body that is no record
at all (the `shape` check); only the media type and the size are refused before reading."""

from __future__ import annotations

import json
import random
from pathlib import Path

from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from litestar import Litestar
from litestar.testing import TestClient

from evidence.audit import audit_result
from server.api.audit import MAX_RECORD
from server.cli.main import main
from tests.server.client import Api


def test_the_audit_endpoint_answers_as_the_command_does(
    client: TestClient[Litestar], api: Api, tmp_path: Path
) -> None:
    table = api.new_table(2, "towers", rng=random.Random(3))
    table.play_to_end(random.Random(3))
    raw = client.get(f"/api/games/{table.game_id}/record").content
    answer = client.post("/api/audit", content=raw, headers={"Content-Type": "application/json"})
    assert answer.status_code == 200
    assert answer.json()["ok"] is True and answer.json()["exit_code"] == 0
    (tmp_path / "game.json").write_bytes(raw)
    (tmp_path / "keys.json").write_bytes(client.get("/api/keys").content)
    printed = CliRunner().invoke(
        main,
        ["audit", "--json", "--keys", str(tmp_path / "keys.json"), str(tmp_path / "game.json")],
    )
    assert json.loads(printed.output) == answer.json()
    assert "(the server's)" in answer.json()["checks"][1]["detail"]

    forged = json.loads(raw)
    forged["result"]["winners"] = [1 - forged["result"]["winners"][0]]
    refused = client.post("/api/audit", json=forged).json()
    assert refused["ok"] is False and refused["exit_code"] != 0
    assert refused["checks"][-1]["ok"] is False


def test_a_body_that_is_not_json_or_too_large_is_refused_before_it_is_read(
    client: TestClient[Litestar],
) -> None:
    as_text = client.post("/api/audit", content=b"{}", headers={"Content-Type": "text/plain"})
    assert as_text.status_code == 415
    too_large = client.post(
        "/api/audit",
        content=b" " * (MAX_RECORD + 1),
        headers={"Content-Type": "application/json"},
    )
    assert too_large.status_code == 413


@settings(max_examples=60, deadline=None)
@given(body=st.binary(max_size=300) | st.text(max_size=300).map(str.encode))
def test_any_body_gets_a_shape_check_and_never_a_server_error(body: bytes) -> None:
    result = audit_result(body)
    assert not result.ok
    assert result.checks[0].name in ("shape", "internal")

"""The OpenAPI document says what the server does: every error it documents has the shape the
server sends, with a real example, and every limit is the same in the code, the document and
docs/api.md."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import pytest
from litestar import Litestar
from litestar.testing import TestClient

from domain.names import MAX_NAME
from domain.setup import MAX_ENTROPY
from server.schema import errors, limits
from tests.server.client import Api
from tests.server.sse import asgi_stream

DOCS = Path(__file__).parents[3] / "docs"
ERROR_REF = "#/components/schemas/ErrorBody"


@pytest.fixture
def document(client: TestClient[Litestar]) -> dict[str, Any]:
    return dict(client.get("/schema/openapi.json").json())


def _operations(document: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (method.upper(), path, operation)
        for path, operations in document["paths"].items()
        for method, operation in operations.items()
    ]


def test_every_documented_error_is_the_error_body_with_a_real_example(
    document: dict[str, Any],
) -> None:
    """(But the unknown link of an e-mail: a page for the person who followed it.)"""
    fields = set(errors.ErrorBody.__struct_fields__)
    for method, path, operation in _operations(document):
        for status, response in operation["responses"].items():
            if not status.startswith(("4", "5")):
                continue
            where = f"{method} {path} {status}"
            if path.startswith("/api/email/") and status == "404":
                assert set(response["content"]) == {"text/html"}, where
                continue
            content = response["content"]["application/json"]
            assert content["schema"] == {"$ref": ERROR_REF}, where
            (example,) = content["examples"].values()
            body = example["value"]
            assert set(body) <= fields, where
            decoded = msgspec.convert(body, errors.ErrorBody)
            assert decoded.status == int(status), where
            assert decoded.error and decoded.message and decoded.request_id, where
    component = document["components"]["schemas"]["ErrorBody"]
    assert "examples" not in component, "no made-up examples"


def test_the_errors_the_server_sends_are_documented_for_their_operation(
    api: Api, client: TestClient[Litestar], app: Litestar, document: dict[str, Any]
) -> None:
    mary = api.create_player("Mary")
    game = api.create_game(mary, 2)
    base = f"/api/games/{game['game_id']}"
    cases = [
        ("GET", f"{base}/events?after=abc", "/api/games/{game_id}/events", 400),
        ("GET", f"{base}/events?after=99999999999999999999", "/api/games/{game_id}/events", 400),
        ("GET", "/api/games/gnone", "/api/games/{game_id}", 404),
        ("GET", "/api/games/gnone/record", "/api/games/{game_id}/record", 404),
        ("GET", f"{base}/at/99", "/api/games/{game_id}/at/{version}", 404),
        ("GET", "/api/players/pnone", "/api/players/{player_id}", 404),
        ("POST", f"{base}/leave", "/api/games/{game_id}/leave", 409),
        ("POST", f"{base}/cancel", "/api/games/{game_id}/cancel", 401),
        ("GET", "/api/me/games", "/api/me/games", 401),
        ("GET", "/api/ratings?limit=0", "/api/ratings", 400),
        ("GET", "/api/ratings?offset=-1", "/api/ratings", 400),
        ("GET", "/api/ratings?limit=x", "/api/ratings", 400),
    ]
    for method, url, template, status in cases:
        headers = mary.auth if url.endswith("/leave") else {}
        answer = client.request(method, url, headers=headers)
        assert answer.status_code == status, (url, answer.text)
        msgspec.json.decode(answer.content, type=errors.ErrorBody)
        documented = document["paths"][template][method.lower()]["responses"]
        assert str(status) in documented, (url, status)
    streamed = client.blocking_portal.call(
        asgi_stream, app, f"{base}/stream", 1, {"Last-Event-ID": "²"}
    )
    assert streamed.status == 400
    msgspec.json.decode(streamed.body, type=errors.ErrorBody)
    stream_doc = document["paths"]["/api/games/{game_id}/stream"]["get"]["responses"]
    assert "400" in stream_doc


def test_the_limits_are_the_same_in_the_code_the_openapi_document_and_the_api_docs(
    document: dict[str, Any],
) -> None:
    assert limits.limits_table() in (DOCS / "api.md").read_text()
    schemas = document["components"]["schemas"]
    commands = schemas["SendCommands"]["properties"]
    assert commands["commands"]["maxItems"] == limits.MAX_COMMANDS
    assert commands["command_id"]["maxLength"] == limits.MAX_COMMAND_ID
    assert commands["expected_version"]["maximum"] == limits.MAX_VERSION
    new_game = schemas["NewGame"]["properties"]
    assert new_game["entropy"]["maxLength"] == MAX_ENTROPY
    join = schemas["JoinGame"]["properties"]
    assert join["invite_code"]["maxLength"] == limits.MAX_INVITE_CODE
    name = schemas["NewPlayer"]["properties"]["name"]
    assert f"1-{MAX_NAME} characters" in name["description"]
    events = document["paths"]["/api/games/{game_id}/events"]["get"]["parameters"]
    (after,) = [p for p in events if p["name"] == "after"]
    assert after["schema"]["maximum"] == limits.MAX_VERSION

"""Schemathesis against the OpenAPI document the server publishes (`/schema/openapi.json`),
100 cases per operation through the ASGI app (embedded fakeredis), authenticated with a real
token made by a fixture, half the game ids and versions pointed at real games so that the
cases reach past the 404.

Checks: every default check of schemathesis (not_a_server_error, status_code_conformance,
content_type_conformance, response_headers_conformance, response_schema_conformance,
negative_data_rejection, missing_required_header, unsupported_method, ignored_auth, ...)
except one that does not fit this API:

- positive_data_acceptance: a request the schema allows is refused by design when the rules
  refuse it: 422 for options the engine checks (`seats: 0`, an edition or module that does not
  exist) and for every command that is not legal now, 409 for a stale version, 403 for a wrong
  invite. The shapes the server refuses are in the document (test_openapi_document_* below).

The live stream (`GET /stream`) is left to the stream tests of test_end_to_end.py: it stays
open while the game goes on, which a generated case cannot wait out.
"""

from __future__ import annotations

from typing import Any, cast

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.generation.case import Case
from schemathesis.python.asgi import get_client
from schemathesis.specs.openapi.checks import positive_data_acceptance

from server.config.settings import Settings
from tests.server.live import build_app

pytestmark = pytest.mark.timeout(120)

APP = build_app(Settings())
schema = schemathesis.openapi.from_asgi("/schema/openapi.json", APP).exclude(path_regex=r"/stream$")
schema.config.generation.update(with_security_parameters=False)

WORLD: dict[str, Any] = {}
"""The real game ids, version and token the cases use (set by the `world` fixture)."""


@pytest.fixture(scope="module", autouse=True)
def world() -> dict[str, Any]:
    """A player (the token every case sends), a game it plays whose decision is its own, and
    an open game it may join; made through the same in-process client schemathesis uses."""
    client = get_client(cast(Any, APP))
    with client:

        def post(path: str, body: Any, token: str | None = None) -> Any:
            headers = {"Authorization": f"Bearer {token}"} if token else {}
            answer = client.post(path, json=body, headers=headers)
            assert answer.status_code in (200, 201), answer.text
            return answer.json()

        mine = post("/api/players", {"name": "fuzz"})["token"]
        other = post("/api/players", {"name": "other"})["token"]
        started = post("/api/games", {"seats": 2}, other)
        post(f"/api/games/{started['game_id']}/join", {"invite_code": started["invite_code"]}, mine)
        opened = post("/api/games", {"seats": 3}, other)
        board = client.get(f"/api/games/{started['game_id']}").json()
        WORLD.update(
            token=mine,
            games=[started["game_id"], opened["game_id"]],
            version=board["version"],
        )
    return WORLD


@schema.hook
def map_path_parameters(
    context: Any, path_parameters: dict[str, Any] | None
) -> dict[str, Any] | None:
    """Half the cases aim at a real game (and a real version of it)."""
    if not path_parameters:
        return path_parameters
    game_id = path_parameters.get("game_id")
    if WORLD and isinstance(game_id, str) and len(game_id) % 2 == 0:
        games: list[str] = WORLD["games"]
        path_parameters["game_id"] = games[len(game_id) % 4 // 2]
        version = path_parameters.get("version")
        if isinstance(version, int):
            path_parameters["version"] = 1 + abs(version) % WORLD["version"]
    return path_parameters


@schema.parametrize()
@settings(
    max_examples=100,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
def test_the_api_conforms_to_its_openapi_document(case: Case[Any]) -> None:
    case.call_and_validate(
        headers={"Authorization": f"Bearer {WORLD['token']}"},
        excluded_checks=[positive_data_acceptance],
    )


# --- what the document says ---------------------------------------------------------------


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    with get_client(cast(Any, APP)) as client:
        found: dict[str, Any] = client.get("/schema/openapi.json").json()
        return found


REQUEST_BODIES = [
    "NewPlayer",
    "NewGame",
    "JoinGame",
    "SendCommands",
    "PlayCard",
    "PlaceFloor",
    "TakeCard",
    "MoveFloor",
    "PlaceTradeRoute",
    "ChooseArchitettoSite",
    "Skip",
]


def test_the_openapi_document_says_request_bodies_refuse_unknown_fields(
    document: dict[str, Any],
) -> None:
    """The server refuses unknown fields (400); the document should say so
    (`additionalProperties: false`), or generated clients and fuzzers send them."""
    schemas = document["components"]["schemas"]
    lax = [
        name for name in REQUEST_BODIES if schemas[name].get("additionalProperties") is not False
    ]
    assert not lax, f"these request bodies allow unknown fields in the document: {lax}"


def test_the_openapi_document_gives_a_signpost_exactly_two_cities(
    document: dict[str, Any],
) -> None:
    cities = document["components"]["schemas"]["PlaceTradeRoute"]["properties"]["cities"]
    assert cities.get("minItems") == 2 and cities.get("maxItems") == 2, cities


def test_the_openapi_document_marks_the_token_optional_on_reads(
    document: dict[str, Any],
) -> None:
    """Reads work without a token (a spectator's view): their security should list the empty
    requirement `{}` beside the bearer scheme."""
    reads = [
        path
        for path, operations in document["paths"].items()
        if path.startswith("/api/games/{game_id}") and "get" in operations
    ]
    assert len(reads) == 8  # board, events, stream, replay, at, record, talk, notation
    required = [
        path for path in reads if {} not in document["paths"][path]["get"].get("security", [{}])
    ]
    assert not required, f"documented as needing a token, served without one: {required}"


def test_the_openapi_document_gives_the_stream_its_event_stream_type(
    document: dict[str, Any],
) -> None:
    """GET /stream answers `text/event-stream` (server-sent events), not JSON."""
    answer = document["paths"]["/api/games/{game_id}/stream"]["get"]["responses"]["200"]
    assert list(answer.get("content", {})) == ["text/event-stream"], answer

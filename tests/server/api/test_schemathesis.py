"""Schemathesis against the OpenAPI document the server publishes (`/schema/openapi.json`),
100 cases per operation through the ASGI app (embedded fakeredis), authenticated with a real
token made by a fixture, half the game ids and versions pointed at real games so that the
cases reach past the 404.

Checks: every default check of schemathesis (not_a_server_error, status_code_conformance,
content_type_conformance, response_headers_conformance, response_schema_conformance,
negative_data_rejection, missing_required_header, unsupported_method, ignored_auth, ...),
positive_data_acceptance among them, wrapped so as to tell the two kinds of refusal of a
request the document allows apart:

- the game's answer, which no schema can give: the rules refuse a command that is not legal
  now (422 with its `rule`), a stale version (409, `current_version`), a wrong invite (403),
  and the checks of options and settings that hang on other fields, on the text once cleaned
  or on the world (422 `invalid_option` or `invalid_setting` with `field`: `bots` beyond
  `seats - 1`, an unknown time zone, a vacation while on one). These pass;
- a schema gap: a 400 (the request is malformed, `field` names what) for a request the
  document allows, or any other refusal. These fail, so that the document and the server
  cannot drift apart again.

The live stream (`GET /stream`) is left to the stream tests of test_end_to_end.py: it stays
open while the game goes on, which a generated case cannot wait out.
"""

from __future__ import annotations

from typing import Any, cast

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.generation.case import Case
from schemathesis.openapi.checks import RejectedPositiveData
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
        additional_checks=[schema_valid_requests_are_accepted_or_refused_by_the_game],
    )


GAME_ANSWERS = frozenset({"invalid_option", "invalid_setting"})
"""The codes of a 422 that checks what no schema can state (see the module's words)."""


def schema_valid_requests_are_accepted_or_refused_by_the_game(
    ctx: Any, response: Any, case: Case[Any]
) -> bool | None:
    """positive_data_acceptance, but for the game's own refusals (its statuses 401, 403, 404,
    409 and 429 it takes already): a 422 of the rules or of the checks of options and
    settings passes, a 400 (or any other refusal) of a request the document allows fails."""
    try:
        return positive_data_acceptance(ctx, response, case)
    except RejectedPositiveData:
        if response.status_code == 422 and _the_games_answer(response):
            return None
        raise


def _the_games_answer(response: Any) -> bool:
    try:
        body = response.json()
    except ValueError:
        return False
    return isinstance(body, dict) and bool(body.get("rule") or body.get("error") in GAME_ANSWERS)


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
    assert len(reads) == 9  # board, events, stream, replay, at, record, talk, notation, analysis
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

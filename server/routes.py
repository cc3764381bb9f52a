"""The HTTP API: thin controllers that parse, authenticate, call the service, answer.

Authentication: `Authorization: Bearer <token>`. Reads accept no token (a spectator's view);
a token that is sent must be valid. Every outbound game document is redacted for the caller's
seat by the service. Errors are answered by `server.errors` (one table for all).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated, Any, cast

import msgspec
from litestar import Controller, Request, Response, get, post
from litestar.di import NamedDependency, Provide
from litestar.exceptions import HTTPException
from litestar.openapi.datastructures import ResponseSpec
from litestar.openapi.spec import Example
from litestar.params import FromPath, JSONBody, QueryParameter
from litestar.response import ServerSentEvent, ServerSentEventMessage
from litestar.types import ControllerRouterHandler

from domain.view import View
from projections.record import Record
from projections.replay import Replay
from server import models
from server.service import Service, Unauthorized

Svc = NamedDependency[Service]
Player = NamedDependency[str]
Viewer = NamedDependency[str | None]
After = Annotated[
    int,
    QueryParameter(ge=0, le=models.MAX_VERSION, description="Only events after this version"),
]

BEARER: list[dict[str, list[str]]] = [{"BearerToken": []}]
OPTIONAL_BEARER: list[dict[str, list[str]]] = [{}, {"BearerToken": []}]
"""Reads: anonymous (a spectator) or with a token (a seat's view)."""


def _token(request: Request[Any, Any, Any]) -> str | None:
    header = request.headers.get("authorization")
    if header is None:
        return None
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthorized("malformed Authorization header")
    return token.strip()


async def provide_player(request: Request[Any, Any, Any], service: Svc) -> str:
    token = _token(request)
    if token is None:
        raise Unauthorized("no token")
    return await service.authenticate(token)


async def provide_viewer(request: Request[Any, Any, Any], service: Svc) -> str | None:
    token = _token(request)
    return None if token is None else await service.authenticate(token)


_strict_decoders: dict[Any, msgspec.json.Decoder[Any]] = {}


async def strict_json_body(request: Request[Any, Any, Any]) -> None:
    """Before a handler that takes a body: the body must be JSON and fit its type exactly,
    a string is not a number ("1" for 1 is refused, 400) and a form is not JSON (415).
    Litestar's own conversion is lenient, so the body is decoded once more, strictly."""
    field = request.route_handler.parsed_fn_signature.parameters.get("data")
    if field is None:
        return
    body = await request.body()
    media_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if body and media_type != "application/json":
        raise HTTPException(status_code=415, detail="send the body as application/json")
    decoder = _strict_decoders.get(field.annotation)
    if decoder is None:
        decoder = _strict_decoders[field.annotation] = msgspec.json.Decoder(field.annotation)
    decoder.decode(body)  # an empty body is "truncated": 400


ERROR_DESCRIPTIONS = {
    400: "Malformed JSON, a wrong type, an unknown field or command type, or a malformed "
    "parameter (a version that is not a whole number from 0 to 2^53 - 1, say)",
    401: "No bearer token, or an unknown one",
    403: "Not your seat, not your decision, not your table, or a wrong invite code",
    404: "No such game, player or version",
    409: "A stale expected_version (the body names the current version), a full or closed "
    "table, or a command_id reused for another request",
    413: "The body is larger than the limit",
    415: "The body is not application/json",
    422: "Refused by the rules (code, ruling, and the index of the refused command) or an "
    "invalid option or name (the field and the reason)",
    503: "The game store is unreachable",
}

ERROR_EXAMPLES: dict[int, models.ErrorBody] = {
    400: models.ErrorBody(
        400,
        "bad_request",
        "a version is a whole number from 0 to 9007199254740991",
        "5f1c09aa00000012",
        field="Last-Event-ID",
    ),
    401: models.ErrorBody(
        401,
        "unauthorized",
        "send Authorization: Bearer <token> of a known player",
        "5f1c09aa00000020",
    ),
    403: models.ErrorBody(
        403,
        "not_your_decision",
        "seat 1 decides now (take_card), not seat 0 (R44)",
        "5f1c09aa00000031",
        rule="R44",
        index=0,
    ),
    404: models.ErrorBody(404, "game_not_found", "no game has this id", "5f1c09aa00000044"),
    409: models.ErrorBody(
        409,
        "version_conflict",
        "the game is at version 57; reload it and decide again",
        "5f1c09aa00000052",
        current_version=57,
    ),
    413: models.ErrorBody(413, "body_too_large", "Request Entity Too Large", "5f1c09aa00000060"),
    415: models.ErrorBody(
        415, "unsupported_media_type", "send the body as application/json", "5f1c09aa00000061"
    ),
    422: models.ErrorBody(
        422,
        "must_take_built_city",
        "take the face-up card of Siena, the city you built in (allowed: Siena) (R14)",
        "5f1c09aa00000077",
        rule="R14",
        index=2,
    ),
    503: models.ErrorBody(
        503, "unavailable", "the game store is unreachable; try again", "5f1c09aa00000090"
    ),
}
"""A real answer per status, as the server sends it: the OpenAPI document's examples."""


def error_response(status: int) -> ResponseSpec:
    example = msgspec.to_builtins(ERROR_EXAMPLES[status])
    return ResponseSpec(
        data_container=models.ErrorBody,
        description=ERROR_DESCRIPTIONS[status],
        generate_examples=False,
        examples=[Example(summary=ERROR_EXAMPLES[status].error, value=example)],
    )


def _errors(*statuses: int) -> dict[int, ResponseSpec]:
    return {status: error_response(status) for status in statuses}


def _json(encoded: bytes) -> Response[bytes]:
    """A document the service keeps encoded, sent as it is; the handler's annotation still
    documents its shape in the OpenAPI document."""
    return Response(content=encoded, media_type="application/json")


_PLAYER = {"player": Provide(provide_player)}
_VIEWER = {"viewer": Provide(provide_viewer)}


class Players(Controller):
    path = "/api/players"
    tags = ("players",)

    @post("/", status_code=201, responses=_errors(400, 413, 415, 422))
    async def create_player(
        self, data: JSONBody[models.NewPlayer], service: Svc
    ) -> models.PlayerCreated:
        """Create a player. The token in the answer is shown once: keep it."""
        return await service.create_player(data.name)

    @get("/{player_id:str}", responses=_errors(400, 404))
    async def get_player(self, player_id: FromPath[str], service: Svc) -> models.PlayerInfo:
        """A player's public face: id and name."""
        return await service.player(player_id)


class Games(Controller):
    path = "/api/games"
    tags = ("games",)

    @post(
        "/",
        status_code=201,
        dependencies=_PLAYER,
        security=BEARER,
        responses=_errors(400, 401, 413, 415, 422),
    )
    async def create_game(
        self, data: JSONBody[models.NewGame], player: Player, service: Svc
    ) -> models.GameCreated:
        """Create a game; you hold its first seat. Share the invite code with the others."""
        return await service.create_game(player, data)

    @post(
        "/{game_id:str}/join",
        status_code=200,
        dependencies=_PLAYER,
        security=BEARER,
        responses=_errors(400, 401, 403, 404, 409, 413, 415, 422),
    )
    async def join_game(
        self, game_id: FromPath[str], data: JSONBody[models.JoinGame], player: Player, service: Svc
    ) -> models.Joined:
        """Take a seat. When the last seat is taken, seats are drawn and the cards dealt."""
        return await service.join(game_id, player, data)

    @post(
        "/{game_id:str}/leave",
        status_code=200,
        dependencies=_PLAYER,
        security=BEARER,
        responses=_errors(400, 401, 403, 404, 409),
    )
    async def leave_game(
        self, game_id: FromPath[str], player: Player, service: Svc
    ) -> models.TableChanged:
        """Give up your place at a table that has not started (the creator cancels instead).
        Sent again after a lost answer, it answers the first time again."""
        return await service.leave(game_id, player)

    @post(
        "/{game_id:str}/cancel",
        status_code=200,
        dependencies=_PLAYER,
        security=BEARER,
        responses=_errors(400, 401, 403, 404, 409),
    )
    async def cancel_game(
        self, game_id: FromPath[str], player: Player, service: Svc
    ) -> models.TableChanged:
        """Call off the game you created, before it starts; its seed is published at once."""
        return await service.cancel(game_id, player)

    @get(
        "/{game_id:str}",
        dependencies=_VIEWER,
        security=OPTIONAL_BEARER,
        responses=_errors(400, 401, 404),
    )
    async def board(self, game_id: FromPath[str], viewer: Viewer, service: Svc) -> View:
        """The board as you may see it: your seat's view, or a spectator's without a token."""
        return cast(View, _json(await service.board(game_id, viewer)))

    @post(
        "/{game_id:str}/commands",
        status_code=200,
        dependencies=_PLAYER,
        security=BEARER,
        responses=_errors(400, 401, 403, 404, 409, 413, 415, 422),
    )
    async def send_commands(
        self,
        game_id: FromPath[str],
        data: JSONBody[models.SendCommands],
        player: Player,
        service: Svc,
    ) -> models.CommandsAccepted:
        """Send one or more commands of your seat (a whole turn at once if you like), decided
        and appended together or not at all. A retried command_id gets its first answer."""
        return await service.execute(game_id, player, data)

    @get(
        "/{game_id:str}/events",
        dependencies=_VIEWER,
        security=OPTIONAL_BEARER,
        responses=_errors(400, 401, 404),
    )
    async def events(
        self,
        game_id: FromPath[str],
        viewer: Viewer,
        service: Svc,
        after: After = 0,
    ) -> models.EventList:
        """The events after a version, as you may see them."""
        return await service.events(game_id, viewer, after)

    @get(
        "/{game_id:str}/stream",
        media_type="text/event-stream",
        dependencies=_VIEWER,
        security=OPTIONAL_BEARER,
        responses=_errors(400, 401, 404),
    )
    async def stream(
        self,
        game_id: FromPath[str],
        request: Request[Any, Any, Any],
        viewer: Viewer,
        service: Svc,
        after: After = 0,
    ) -> ServerSentEvent:
        """Server-sent events: each visible event as it happens (`id` is its version, `event`
        its type, `data` its JSON), a `keep-alive` comment when nothing happens for a while;
        the stream ends after the game's last event. Reconnecting with `Last-Event-ID` resumes
        after it."""
        last = request.headers.get("last-event-id")  # empty: no event seen yet (SSE)
        start = models.parse_version(last, "Last-Event-ID") if last else after
        await service.state(game_id)  # 404 now, before the stream starts

        async def messages() -> AsyncIterator[ServerSentEventMessage]:
            async for item in service.follow(game_id, viewer, start):
                if item is None:  # nothing happened for a while: keep the connection open
                    yield ServerSentEventMessage(data=None, comment="keep-alive")
                elif isinstance(item, models.Revealed):  # no id: Last-Event-ID stays put
                    yield ServerSentEventMessage(
                        data=msgspec.json.encode(item).decode(), event="revealed"
                    )
                else:
                    yield ServerSentEventMessage(
                        data=msgspec.json.encode(item.event).decode(),
                        id=item.version,
                        event=type(item.event).__struct_config__.tag,  # type: ignore[arg-type]
                    )

        return ServerSentEvent(messages())

    @get(
        "/{game_id:str}/replay",
        dependencies=_VIEWER,
        security=OPTIONAL_BEARER,
        responses=_errors(400, 401, 404),
    )
    async def replay(self, game_id: FromPath[str], viewer: Viewer, service: Svc) -> Replay:
        """Every step of the game: each event you may see and your view right after it. Once
        the game is over everyone sees everything, the seed included."""
        return cast(Replay, _json(await service.replay(game_id, viewer)))

    @get(
        "/{game_id:str}/at/{version:int}",
        dependencies=_VIEWER,
        security=OPTIONAL_BEARER,
        responses=_errors(400, 401, 404),
    )
    async def at_version(
        self, game_id: FromPath[str], version: FromPath[int], viewer: Viewer, service: Svc
    ) -> View:
        """The board as you may see it right after event `version`."""
        return await service.view_at(game_id, viewer, version)

    @get(
        "/{game_id:str}/record",
        dependencies=_VIEWER,
        security=OPTIONAL_BEARER,
        responses=_errors(400, 401, 404),
    )
    async def record(self, game_id: FromPath[str], viewer: Viewer, service: Svc) -> Record:
        """The game record (format `patrician-record/1`, see docs/record.md), redacted for you
        while the game is on, complete once it is over."""
        return await service.record(game_id, viewer)


@get("/api/me/games", tags=["players"], dependencies=_PLAYER, security=BEARER,
     responses=_errors(401))  # fmt: skip
async def my_games(player: Player, service: Svc) -> list[models.MyGame]:
    """Your games: those awaiting your decision first (longest waiting first)."""
    return await service.my_games(player)


@get("/api/lobby", tags=["games"])
async def lobby(service: Svc) -> list[models.LobbyGame]:
    """Games waiting for players."""
    return await service.lobby()


@get("/healthz", tags=["health"], responses=_errors(503))
async def healthz(service: Svc) -> models.Health:
    """Alive, and the store answers."""
    await service.check_store()
    return models.Health("ok", "ok")


ROUTES: list[ControllerRouterHandler] = [Players, Games, my_games, lobby, healthz]

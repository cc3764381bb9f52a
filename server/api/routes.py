"""The HTTP API: thin controllers that parse, authenticate, call a service, answer.

Authentication: `Authorization: Bearer <token>`. Reads accept no token (a spectator's view);
a token that is sent must be valid. The live stream also takes a stream ticket
(`server.services.stream_tickets`), for a browser's EventSource, which sends no header. Every
outbound game document is redacted for the caller's seat by the game service. Errors are answered by
`server.api.error_table` (one table for all). Each operation has an `operation_id`, so that
generated clients get readable method names. A game's history has a controller of its own
(`server.api.history`); what every controller declares alike is `server.api.params`.
"""

from __future__ import annotations

from typing import Any, cast

from litestar import (
    Controller,
    HttpMethod,
    Request,
    Response,
    delete,
    get,
    post,
    put,
    route,
)
from litestar.params import FromPath, JSONBody
from litestar.types import ControllerRouterHandler

from domain.view import View
from server.api.browser import BrowserRoutes
from server.api.command_answers import command_answer, wants_board
from server.api.history import HistoryRoutes
from server.api.mail_links import MailLinkRoutes
from server.api.params import BEARER, OPTIONAL_BEARER, PLAYER, Include, PlayerId, Svc
from server.api.profiles import player_profile
from server.api.push import PushRoutes, push_key
from server.api.ratings import ratings
from server.api.reading import provide_player, provide_viewer
from server.api.rematch import RematchRoutes
from server.api.talk import TalkRoutes
from server.schema import answers, requests
from server.schema.errors import error_response, error_responses
from server.transport import packed
from server.transport.rate_limits import RATE_LIMITED
from store.notifications import Delivery


def _json(encoded: bytes) -> Response[bytes]:
    """A document the service keeps encoded, sent as it is; the handler's annotation still
    documents its shape in the OpenAPI document."""
    return Response(content=encoded, media_type="application/json")


RATE_LIMITED_RESPONSE = error_response(
    429,
    RATE_LIMITED,
    "Too many of these from your address for now (docs/api.md, Rate limits), or too many "
    "of your requests in flight at once: try again after `Retry-After` seconds",
)


class PlayerRoutes(Controller):
    path = "/api/players"
    tags = ("players",)

    @post(
        "/",
        status_code=201,
        operation_id="createPlayer",
        responses={**error_responses(400, 413, 415, 422), 429: RATE_LIMITED_RESPONSE},
    )
    async def create_player(
        self, data: JSONBody[requests.NewPlayer], services: Svc
    ) -> answers.PlayerCreated:
        """Create a player. The token in the answer is shown once: keep it."""
        return await services.accounts.create_player(data.name)

    @get("/{player_id:str}", operation_id="getPlayer", responses=error_responses(400, 404))
    async def get_player(self, player_id: FromPath[str], services: Svc) -> answers.PlayerInfo:
        """A player's public face: id, name and rating."""
        return await services.ratings.of(await services.accounts.player(player_id))


class GameRoutes(Controller):
    path = "/api/games"
    tags = ("games",)

    @post(
        "/",
        status_code=201,
        operation_id="createGame",
        dependencies=PLAYER,
        security=BEARER,
        responses={**error_responses(400, 401, 409, 413, 415, 422), 429: RATE_LIMITED_RESPONSE},
    )
    async def create_game(
        self, data: JSONBody[requests.NewGame], player: PlayerId, services: Svc
    ) -> answers.CreatedGame:
        """Create a game; you hold its first seat. Share the invite code with the others."""
        return await services.games.create(player, data)

    @post(
        "/{game_id:str}/join",
        status_code=200,
        operation_id="joinGame",
        dependencies=PLAYER,
        security=BEARER,
        responses={
            **error_responses(400, 401, 403, 404, 409, 413, 415, 422),
            429: RATE_LIMITED_RESPONSE,
        },
    )
    async def join_game(
        self,
        game_id: FromPath[str],
        data: JSONBody[requests.JoinGame],
        player: PlayerId,
        services: Svc,
    ) -> answers.Joined:
        """Take a seat. When the last seat is taken, seats are drawn and the cards dealt."""
        return await services.games.join(game_id, player, data)

    @post(
        "/{game_id:str}/leave",
        status_code=200,
        operation_id="leaveGame",
        dependencies=PLAYER,
        security=BEARER,
        responses=error_responses(400, 401, 403, 404, 409),
    )
    async def leave_game(
        self, game_id: FromPath[str], player: PlayerId, services: Svc
    ) -> answers.TableChanged:
        """Give up your place at a table that has not started (the creator cancels instead).
        Sent again after a lost answer, it answers the first time again."""
        return await services.games.leave(game_id, player)

    @post(
        "/{game_id:str}/resign",
        status_code=200,
        operation_id="resignSeat",
        dependencies=PLAYER,
        security=BEARER,
        responses=error_responses(400, 401, 403, 404, 409),
    )
    async def resign(
        self, game_id: FromPath[str], player: PlayerId, services: Svc
    ) -> answers.Resigned:
        """Hand your seat to a bot for good: it plays your seat's decisions from now on (the
        record's commands say `by: "bot:greedy"`), and the others are told. Sent again, it
        answers the same."""
        return await services.handovers.resign(game_id, player)

    @post(
        "/{game_id:str}/cancel",
        status_code=200,
        operation_id="cancelGame",
        dependencies=PLAYER,
        security=BEARER,
        responses=error_responses(400, 401, 403, 404, 409),
    )
    async def cancel_game(
        self, game_id: FromPath[str], player: PlayerId, services: Svc
    ) -> answers.TableChanged:
        """Call off the game you created, before it starts; its seed is published at once."""
        return await services.games.cancel(game_id, player)

    @get(
        "/{game_id:str}",
        operation_id="getBoard",
        opt=packed.OPT,
        security=OPTIONAL_BEARER,
        responses=error_responses(400, 401, 404),
    )
    async def board(
        self, game_id: FromPath[str], request: Request[Any, Any, Any], services: Svc
    ) -> View:
        """The board as you may see it: your seat's view, or a spectator's without a token."""
        # The viewer is read here rather than injected: the busiest read of all, and each
        # dependency Litestar resolves costs it a few hundredths of its time.
        viewer = await provide_viewer(request, services)
        gzipped = packed.accepts_gzip(request)
        return cast(
            View, packed.response(await services.games.board(game_id, viewer, gzipped=gzipped))
        )

    @post(
        "/{game_id:str}/commands",
        status_code=200,
        operation_id="sendCommands",
        security=BEARER,
        responses=error_responses(400, 401, 403, 404, 409, 413, 415, 422),
    )
    async def send_commands(
        self,
        game_id: FromPath[str],
        data: JSONBody[requests.SendCommands],
        request: Request[Any, Any, Any],
        services: Svc,
        include: Include = None,
    ) -> answers.CommandsAccepted:
        """Send one or more commands of your seat (a whole turn at once if you like), decided
        and appended together or not at all. A retried command_id gets its first answer
        (with `include=board`, the board as it stands now)."""
        # The busiest write: the player is read here rather than injected, and the answer
        # encoded here (the same bytes Litestar would make), each of which Litestar's own
        # way costs it a few hundredths of its time (bench/http.py).
        board = wants_board(request.query_params.getall("include", []))
        del include  # read above, strictly: Litestar's reading of it lets any text through
        player = await provide_player(request, services)
        answer = await command_answer(services, game_id, player, data, board=board)
        return cast(answers.CommandsAccepted, _json(answer))


class MeRoutes(Controller):
    """What is the caller's own: their games, their channels, what was sent to them."""

    path = "/api/me"
    tags = ("players",)
    dependencies = PLAYER
    security = BEARER

    @get("/games", operation_id="listMyGames", responses=error_responses(401))
    async def my_games(self, player: PlayerId, services: Svc) -> list[answers.MyGame]:
        """Your games: those awaiting your decision first, then the others, each group
        longest waiting first."""
        return await services.listings.my_games(player)

    @route("/notifications", http_method=[HttpMethod.OPTIONS], include_in_schema=False,
           status_code=204)  # fmt: skip
    async def allow_notifications(self) -> Response[None]:
        """Litestar 2.25 answers OPTIONS on a path with handlers of two methods from the
        route it made for the first one only (`Allow: GET, OPTIONS`): say both here. (It
        registers a controller's handlers in the order of their names: this one first.)"""
        return Response(None, status_code=204, headers={"Allow": "GET, OPTIONS, PUT"})

    @get("/notifications", tags=["notifications"], operation_id="getMyNotifications",
         responses=error_responses(401))  # fmt: skip
    async def my_notifications(self, player: PlayerId, services: Svc) -> answers.Notifications:
        """How you are told that something happened (the webhook's secret is never shown)."""
        return await services.notifications.get(player)

    @put("/notifications", tags=["notifications"], operation_id="setMyNotifications",
         responses=error_responses(400, 401, 413, 415, 422))  # fmt: skip
    async def set_my_notifications(
        self, data: JSONBody[requests.NotificationSettings], player: PlayerId, services: Svc
    ) -> answers.Notifications:
        """Set your channels (all of them: a channel left out is removed). A new webhook URL
        gets a new signing secret, in this answer only; the same URL keeps its secret."""
        return await services.notifications.put(player, data)

    @route("/vacation", http_method=[HttpMethod.OPTIONS], include_in_schema=False,
           status_code=204)  # fmt: skip
    async def allow_vacation(self) -> Response[None]:
        """All three methods (see `allow_notifications`)."""
        return Response(None, status_code=204, headers={"Allow": "DELETE, GET, OPTIONS, POST"})

    @get("/vacation", operation_id="getMyVacation", responses=error_responses(401))
    async def my_vacation(self, player: PlayerId, services: Svc) -> answers.VacationInfo:
        """Your vacation, if you are on one, and the days of this year's allowance used."""
        return await services.vacations.get(player)

    @post("/vacation", operation_id="startMyVacation", status_code=200,
          responses=error_responses(400, 401, 413, 415, 422))  # fmt: skip
    async def start_my_vacation(
        self, data: JSONBody[requests.VacationRequest], player: PlayerId, services: Svc
    ) -> answers.VacationInfo:
        """Go on vacation from now for `days`: your clocks stand still in every timed game
        (the others see until when)."""
        return await services.vacations.start(player, data.days)

    @delete(
        "/vacation", operation_id="endMyVacation", status_code=200, responses=error_responses(401)
    )
    async def end_my_vacation(self, player: PlayerId, services: Svc) -> answers.VacationInfo:
        """Come back early: your clocks run again from now."""
        return await services.vacations.end(player)

    @get("/deliveries", tags=["notifications"], operation_id="listMyDeliveries",
         responses=error_responses(401))  # fmt: skip
    async def my_deliveries(self, player: PlayerId, services: Svc) -> list[Delivery]:
        """What was sent to you, newest first (the last 50 attempts)."""
        return await services.notifications.deliveries(player)


@get("/api/lobby", tags=["games"], operation_id="listOpenGames")
async def lobby(services: Svc) -> list[answers.LobbyGame]:
    """Games waiting for players."""
    return await services.listings.lobby()


@get("/healthz", tags=["health"], operation_id="health", responses=error_responses(503))
async def healthz(services: Svc) -> answers.Health:
    """Alive, and the store answers."""
    await services.games.check_store()
    return answers.Health("ok", "ok")


ROUTES: list[ControllerRouterHandler] = [
    PlayerRoutes, GameRoutes, HistoryRoutes, BrowserRoutes, TalkRoutes, RematchRoutes, MeRoutes,
    MailLinkRoutes, PushRoutes, push_key, lobby, ratings, healthz, player_profile,
]  # fmt: skip

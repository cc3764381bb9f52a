"""Table talk: a short message thread per game, beside its log (`store.talk`).

The seated players read and write it while the game is on; once it is over anyone may read
it (as anyone may read everything of a finished game). A message is cleaned like a name
(`domain.names.clean_text`: nothing that hides or reorders text; its line breaks kept), at
most `MAX_TALK` characters, and each player may send `RATE` messages a minute per game (429
and `Retry-After` beyond). Clients must escape it wherever they show it, as the e-mails do.
"""

from __future__ import annotations

import re
from typing import Annotated

import msgspec
from litestar import Controller, HttpMethod, Response, get, post, route
from litestar.di import NamedDependency, Provide
from litestar.exceptions import HTTPException
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import FromPath, JSONBody, QueryParameter

from domain.names import clean_text
from server.errors import error_response
from server.models import MAX_TALK, BadParameter, NewMessage
from server.requests import provide_player, provide_viewer
from server.services import Services
from store.clock import iso
from store.errors import NotSeated
from store.talk import TalkMessage, count_message_op, post_op, thread_op

RATE = 5
"""Messages a player may send in one game in `WINDOW_SECONDS`."""
WINDOW_SECONDS = 60
_ID = re.compile(r"[0-9]{1,20}-[0-9]{1,20}")

Svc = NamedDependency[Services]
PlayerId = NamedDependency[str]
ViewerId = NamedDependency[str | None]
After = Annotated[str, QueryParameter(max_length=41, description="Only the messages after this id")]


def _errors(*statuses: int) -> dict[int, ResponseSpec]:
    return {status: error_response(status) for status in statuses}


class TalkRoutes(Controller):
    """A game's table talk."""

    path = "/api/games"
    tags = ("talk",)

    @route("/{game_id:str}/talk", http_method=[HttpMethod.OPTIONS], include_in_schema=False,
           status_code=204)  # fmt: skip
    async def allow_talk(self) -> Response[None]:
        """Both methods (see `MeRoutes.allow_notifications`)."""
        return Response(None, status_code=204, headers={"Allow": "GET, OPTIONS, POST"})

    @post("/{game_id:str}/talk", operation_id="postMessage", status_code=201,
          dependencies={"player": Provide(provide_player)}, security=[{"BearerToken": []}],
          responses=_errors(400, 401, 403, 404, 413, 415, 422, 429))  # fmt: skip
    async def post_message(
        self, game_id: FromPath[str], data: JSONBody[NewMessage], player: PlayerId,
        services: Svc,
    ) -> TalkMessage:  # fmt: skip
        """Say something to the table (only its seated players may, while the game is on)."""
        text = clean_text(data.text, field="text", limit=MAX_TALK, lines=True)
        state = await services.games.state(game_id)
        seat = state.seat_of(player)
        if seat is None:
            raise NotSeated(game_id)
        prefix = services.games.listings.prefix
        sent = await services.games.run(count_message_op(prefix, game_id, player, WINDOW_SECONDS))
        if sent > RATE:
            raise HTTPException(
                status_code=429, detail=f"at most {RATE} messages a minute in one game",
                headers={"Retry-After": str(WINDOW_SECONDS)},
            )  # fmt: skip
        name = await services.accounts.name_of(player)
        now = iso(services.games.clock())
        message = TalkMessage("", seat, name, text, now)
        message_id = await services.games.run(post_op(prefix, game_id, message))
        return msgspec.structs.replace(message, id=message_id)

    @get("/{game_id:str}/talk", operation_id="listMessages",
         dependencies={"viewer": Provide(provide_viewer)},
         security=[{}, {"BearerToken": []}],
         responses=_errors(400, 401, 403, 404))  # fmt: skip
    async def messages(
        self, game_id: FromPath[str], viewer: ViewerId, services: Svc, after: After = "0-0"
    ) -> list[TalkMessage]:
        """The thread, oldest first (at most 100 after `after`): for the seated players, and
        for anyone once the game is over."""
        if not _ID.fullmatch(after):
            raise BadParameter("after", "a message id is two whole numbers joined by '-'")
        state = await services.games.state(game_id)
        if not state.finished and (viewer is None or state.seat_of(viewer) is None):
            raise NotSeated(game_id)
        prefix = services.games.listings.prefix
        return await services.games.run(thread_op(prefix, game_id, after))

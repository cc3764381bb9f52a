"""The HTTP routes of table talk (`server.services.talk`), thin as the others."""

from __future__ import annotations

from typing import Annotated

from litestar import Controller, HttpMethod, Response, get, post, route
from litestar.di import Provide
from litestar.params import FromPath, JSONBody, QueryParameter

from server.api.params import PlayerId, Svc, ViewerId
from server.api.reading import provide_player, provide_viewer
from server.schema.errors import error_responses
from server.schema.limits import MESSAGE_ID
from server.schema.requests import NewMessage
from store.talk import TalkMessage

After = Annotated[
    str,
    QueryParameter(
        max_length=41, pattern=MESSAGE_ID,
        description="Only the messages after this id (a message's `id`: two whole numbers "
        "joined by `-`)",
    ),
]  # fmt: skip


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
          responses=error_responses(400, 401, 403, 404, 413, 415, 422, 429))  # fmt: skip
    async def post_message(
        self, game_id: FromPath[str], data: JSONBody[NewMessage], player: PlayerId,
        services: Svc,
    ) -> TalkMessage:  # fmt: skip
        """Say something to the table (only its seated players may: at the table, during play
        and after the end)."""
        return await services.talk.post(game_id, player, data.text)

    @get("/{game_id:str}/talk", operation_id="listMessages",
         dependencies={"viewer": Provide(provide_viewer)},
         security=[{}, {"BearerToken": []}],
         responses=error_responses(400, 401, 403, 404))  # fmt: skip
    async def messages(
        self, game_id: FromPath[str], viewer: ViewerId, services: Svc, after: After = "0-0"
    ) -> list[TalkMessage]:
        """The thread, oldest first (at most 100 after `after`): for the seated players, and
        for anyone once the game is over."""
        return await services.talk.thread(game_id, viewer, after)

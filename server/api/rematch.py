"""The HTTP route of a rematch (`server.services.rematch`), thin as the others."""

from __future__ import annotations

from litestar import Controller, post
from litestar.params import FromPath

from server.api.params import BEARER, PLAYER, PlayerId, Svc
from server.schema import answers
from server.schema.errors import error_responses


class RematchRoutes(Controller):
    """A new table for the players of a finished game."""

    path = "/api/games"
    tags = ("games",)

    @post(
        "/{game_id:str}/rematch",
        status_code=201,
        operation_id="rematchGame",
        dependencies=PLAYER,
        security=BEARER,
        responses=error_responses(400, 401, 403, 404, 409),
    )
    async def rematch(
        self, game_id: FromPath[str], player: PlayerId, services: Svc
    ) -> answers.RematchCreated:
        """Offer the players of this finished game a new table: the same seats, edition,
        modules, clock and bot levels, you in its first place; the others find the offer, with
        the code that opens the table, on this game's board (`rematch`). One per game: asked
        again, by anyone, it answers the same table (`repeated: true`)."""
        return await services.rematch.rematch(game_id, player)

"""A player's page: their games, their rating's history and their reliability record (public:
it says no more than the seats, names and results of games, and who played each turn, which
anyone may read of any game)."""

from __future__ import annotations

from typing import Annotated

from litestar import get
from litestar.params import FromPath, QueryParameter

from server.api.params import Skip, Svc
from server.schema import answers
from server.schema.errors import error_responses

MAX_GAMES = 100


@get(
    "/api/players/{player_id:str}/profile",
    tags=["players"],
    operation_id="getPlayerProfile",
    responses=error_responses(400, 404),
)
async def player_profile(
    player_id: FromPath[str],
    services: Svc,
    offset: Skip = 0,
    limit: Annotated[
        int, QueryParameter(ge=1, le=MAX_GAMES, description="How many games to list (at most 100)")
    ] = 20,
) -> answers.PlayerProfile:
    """A player's page (docs/api.md, "A player's page"): rating and its history, the
    reliability record, and their games, the latest first."""
    return await services.profiles.profile(player_id, offset, limit)

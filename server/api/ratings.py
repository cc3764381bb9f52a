"""The rating list: every rated player and bot level, from the highest rating down (public:
a rating says no more than the results of finished games, which anyone may read)."""

from __future__ import annotations

from typing import Annotated

from litestar import get
from litestar.params import QueryParameter

from server.api.params import Skip, Svc
from server.schema import answers
from server.schema.errors import error_responses

MAX_PAGE = 200


@get("/api/ratings", tags=["ratings"], operation_id="listRatings", responses=error_responses(400))
async def ratings(
    services: Svc,
    offset: Skip = 0,
    limit: Annotated[
        int, QueryParameter(ge=1, le=MAX_PAGE, description="How many to list (at most 200)")
    ] = 50,
) -> answers.RatingList:
    """The ratings, highest first (docs/api.md, "Ratings")."""
    return await services.ratings.page(offset, limit)

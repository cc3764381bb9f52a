"""What the API's controllers declare alike: the services, the caller (a player who must be
one, or a viewer who may be a spectator), a version to read after, a stream ticket, and the
security of an operation, so that every operation states each of them the same way in the
OpenAPI document."""

from __future__ import annotations

from typing import Annotated

from litestar.di import NamedDependency, Provide
from litestar.params import QueryParameter

from server.api.reading import Svc, provide_player, provide_viewer
from server.schema import limits

__all__ = [
    "BEARER", "OPTIONAL_BEARER", "PLAYER", "VIEWER", "After", "Include", "PlayerId", "Skip",
    "Svc", "Ticket", "ViewerId",
]  # fmt: skip

PlayerId = NamedDependency[str]
ViewerId = NamedDependency[str | None]
After = Annotated[
    int,
    QueryParameter(ge=0, le=limits.MAX_VERSION, description="Only events after this version"),
]
Skip = Annotated[
    int,
    QueryParameter(
        ge=0,
        le=1_000_000,
        description="How many of the list to skip, from its first",
        schema_extra={"minimum": 0},  # Litestar leaves a bound of 0 out (falsy)
    ),
]
"""Where a page of a long list begins (the rating list, a player's games)."""
Ticket = Annotated[
    str | None,
    QueryParameter(
        description="A stream ticket (`POST /api/games/{game_id}/stream-ticket`) instead of a "
        "bearer token, for a browser's EventSource: good for one opening of this game's stream"
    ),
]

Include = Annotated[
    str | None,
    QueryParameter(
        description="`board`: the answer carries your board as it stands once the commands are "
        "appended (as `GET /api/games/{game_id}/board` gives it), so that you need not ask "
        "for it after each command",
        # read by the handler itself, as the command lane reads it (Litestar's own reading
        # of an enum words its refusal otherwise): the document still says the one value
        schema_extra={"enum": ["board"]},
    ),
]

BEARER: list[dict[str, list[str]]] = [{"BearerToken": []}]
OPTIONAL_BEARER: list[dict[str, list[str]]] = [{}, {"BearerToken": []}]
"""Reads: anonymous (a spectator) or with a token (a seat's view)."""

PLAYER = {"player": Provide(provide_player)}
VIEWER = {"viewer": Provide(provide_viewer)}

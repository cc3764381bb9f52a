"""The HTTP API's reads of a game's history: its events (listed, and streamed as they
happen), its replay, a board at a past version, its record and its notation. Thin
controllers over `server.services.history`, each answer redacted for the caller's seat; on the
same path as the game routes (`server.api.routes`), apart because they read the whole log."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated, Any, cast

import msgspec
from litestar import Controller, MediaType, Request, get
from litestar.params import FromPath, Parameter, QueryParameter
from litestar.response import ServerSentEvent, ServerSentEventMessage

from domain.view import View
from evidence.record import Record
from projections.replay import Replay
from server.api.params import OPTIONAL_BEARER, VIEWER, After, Svc, Ticket, ViewerId
from server.api.reading import query_version, stream_viewer
from server.schema import answers, limits
from server.schema.errors import error_responses
from server.transport import packed


class HistoryRoutes(Controller):
    path = "/api/games"
    tags = ("games",)

    @get(
        "/{game_id:str}/events",
        operation_id="listEvents",
        dependencies=VIEWER,
        security=OPTIONAL_BEARER,
        responses=error_responses(400, 401, 404),
    )
    async def events(
        self,
        game_id: FromPath[str],
        request: Request[Any, Any, Any],
        viewer: ViewerId,
        services: Svc,
        after: After = 0,
    ) -> answers.EventList:
        """The events after a version, as you may see them."""
        return await services.history.events(game_id, viewer, query_version(request, after))

    @get(
        "/{game_id:str}/analysis",
        operation_id="getAnalysis",
        responses=error_responses(400, 404, 409),
    )
    async def analysis(self, game_id: FromPath[str], services: Svc) -> answers.GameAnalysis:
        """A finished game's analysis: every decision judged from what its seat could see
        (docs/bots.md, "Analysis"), as far as it is made (`status`); 409 while the game is
        not over."""
        return await services.analysis.of(game_id)

    @get(
        "/{game_id:str}/stream",
        operation_id="followEvents",
        media_type="text/event-stream",
        opt={"uncompressed": True},  # gzip would hold each event back until its buffer fills
        security=OPTIONAL_BEARER,
        responses=error_responses(400, 401, 404),
    )
    async def stream(
        self,
        game_id: FromPath[str],
        request: Request[Any, Any, Any],
        services: Svc,
        after: After = 0,
        ticket: Ticket = None,
    ) -> ServerSentEvent:
        """Server-sent events: each visible event as it happens (`id` is its version, `event`
        its type, `data` its JSON), a `keep-alive` comment when nothing happens for a while;
        the stream ends after the game's last event. Reconnecting with `Last-Event-ID` resumes
        after it. A browser, whose EventSource sends no header, opens it with a `ticket`."""
        last = request.headers.get("last-event-id")  # empty: no event seen yet (SSE)
        start = (
            limits.parse_version(last, "Last-Event-ID") if last else query_version(request, after)
        )
        viewer = await stream_viewer(request, services, game_id, ticket)
        await services.games.state(game_id)  # 404 now, before the stream starts

        async def messages() -> AsyncIterator[ServerSentEventMessage]:
            async for item in services.history.follow(game_id, viewer, start):
                if item is None:  # nothing happened for a while: keep the connection open
                    yield ServerSentEventMessage(data=None, comment="keep-alive")
                elif isinstance(item, answers.Revealed):  # no id: Last-Event-ID stays put
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
        operation_id="getReplay",
        dependencies=VIEWER,
        security=OPTIONAL_BEARER,
        opt=packed.OPT,
        responses=error_responses(400, 401, 404),
    )
    async def replay(
        self,
        game_id: FromPath[str],
        request: Request[Any, Any, Any],
        viewer: ViewerId,
        services: Svc,
    ) -> Replay:
        """Every step of the game: each event you may see and your view right after it. Once
        the game is over everyone sees everything, the seed included."""
        gzipped = packed.accepts_gzip(request)
        return cast(
            Replay, packed.response(await services.history.replay(game_id, viewer, gzipped=gzipped))
        )

    @get(
        "/{game_id:str}/notation",
        operation_id="getNotation",
        media_type=MediaType.TEXT,
        dependencies=VIEWER,
        security=OPTIONAL_BEARER,
        responses=error_responses(400, 401, 404),
    )
    async def notation(self, game_id: FromPath[str], viewer: ViewerId, services: Svc) -> str:
        """The game in notation, one line per turn (docs/notation.md): the commands of the
        record you may see, which parse back into the same commands."""
        return await services.history.notation(game_id, viewer)

    @get(
        "/{game_id:str}/at/{version:str}",
        operation_id="getBoardAt",
        dependencies=VIEWER,
        security=OPTIONAL_BEARER,
        responses=error_responses(400, 401, 403, 404),
    )
    async def at_version(
        self,
        game_id: FromPath[str],
        version: Annotated[
            str,
            Parameter(
                description="A version: ASCII digits, 0 to 2^53 - 1",
                pattern=limits.VERSION_PATTERN,
            ),
        ],
        viewer: ViewerId,
        services: Svc,
        as_seat: Annotated[
            int | None,
            QueryParameter(
                name="as",
                ge=0,
                le=4,
                description="What this seat saw then (of a finished game, for anyone; while "
                "the game is on, only your own seat's)",
                schema_extra={"minimum": 0},  # Litestar leaves a bound of 0 out (falsy)
            ),
        ] = None,
    ) -> View:
        """The board as you may see it right after event `version`; with `as`, as that seat
        saw it then (the live redaction of its seat)."""
        return await services.history.view_at(
            game_id, viewer, limits.parse_version(version, "version"), as_seat
        )

    @get(
        "/{game_id:str}/record",
        operation_id="getRecord",
        dependencies=VIEWER,
        security=OPTIONAL_BEARER,
        opt=packed.OPT,
        responses=error_responses(400, 401, 404),
    )
    async def record(
        self,
        game_id: FromPath[str],
        request: Request[Any, Any, Any],
        viewer: ViewerId,
        services: Svc,
    ) -> Record:
        """The game record (format `patrician-record/1`, see docs/record.md), redacted for you
        while the game is on, complete once it is over."""
        gzipped = packed.accepts_gzip(request)
        return cast(
            Record, packed.response(await services.history.record(game_id, viewer, gzipped=gzipped))
        )

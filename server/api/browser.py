"""The HTTP routes a browser's page needs beside those a bot uses, thin as the others: a stream
ticket (`server.services.stream_tickets`: an EventSource sends no Authorization header) and the
preview of a staged turn (`server.services.previews`: the page shows each next step's legal commands
without a copy of the rules)."""

from __future__ import annotations

from litestar import Controller, post
from litestar.di import Provide
from litestar.params import FromPath, JSONBody

from server.api.params import PlayerId, Svc
from server.api.reading import provide_player
from server.schema import requests
from server.schema.errors import error_responses
from server.services.previews import Preview
from server.services.stream_tickets import StreamTicket


class BrowserRoutes(Controller):
    path = "/api/games"
    tags = ("games",)
    dependencies = {"player": Provide(provide_player)}  # noqa: RUF012 (Litestar's own type)
    security = [{"BearerToken": []}]  # noqa: RUF012

    @post("/{game_id:str}/stream-ticket", status_code=201, operation_id="createStreamTicket",
          responses=error_responses(400, 401, 404))  # fmt: skip
    async def stream_ticket(
        self, game_id: FromPath[str], player: PlayerId, services: Svc
    ) -> StreamTicket:
        """A ticket for one opening of this game's stream (`GET .../stream?ticket=...`)
        within 60 s, which then streams what your token would: for a browser's EventSource,
        which cannot send your token. It is good for nothing else."""
        return await services.tickets.issue(game_id, player)

    @post("/{game_id:str}/preview", status_code=200, operation_id="previewCommands",
          responses=error_responses(400, 401, 403, 404, 409, 413, 415, 422))  # fmt: skip
    async def preview(
        self,
        game_id: FromPath[str],
        data: JSONBody[requests.PreviewCommands],
        player: PlayerId,
        services: Svc,
    ) -> Preview:
        """Your board as it would be after these commands of your seat, sending nothing:
        decided and refused exactly as `sendCommands` would. No board where they turn up a
        hidden card or end the game (`ends_batch`): send them to see what comes."""
        return await services.previews.preview(game_id, player, data)

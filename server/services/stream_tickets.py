"""Stream tickets: a browser's `EventSource` cannot send an `Authorization` header, so a player
asks for a ticket with their token (`POST /api/games/{id}/stream-ticket`) and opens the stream
with it (`GET /api/games/{id}/stream?ticket=...`).

A ticket is a random secret good for one opening of one game's stream, for `TTL_SECONDS`, and
for nothing else: it is no bearer token (no command, no other read), and it shows the stream
its player's token would. It is kept as its SHA-256 only (`store.stream_tickets`) and spent by
the first opening that presents it, wherever that opening is refused (another game's stream
spends it too): a ticket read from a log or a browser's history is worth nothing. Its expiry
is checked against the server's clock, besides Redis's TTL, which only drops it.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from datetime import timedelta

import msgspec

from server.schema.errors import InvalidTicket
from server.services.accounts import new_secret
from server.services.games import GameService
from store.clock import iso
from store.stream_tickets import Grant, grant_op, take_op

TTL_SECONDS = 60
"""How long a ticket is good for: the time it takes a page to open its stream."""


class StreamTicket(msgspec.Struct, frozen=True):
    ticket: str
    """A secret for one opening of this game's stream (`?ticket=`), as your token would
    follow it. Keep it out of logs; it is spent by its first use."""
    expires: str
    """When it is good no more, if still unused (UTC, ISO 8601): 60 s after it was given."""


class StreamTicketService:
    def __init__(
        self,
        games: GameService,
        *,
        token_bytes: Callable[[int], bytes] = secrets.token_bytes,
    ) -> None:
        self.games = games
        self.prefix = games.listings.prefix
        self.token_bytes = token_bytes

    async def issue(self, game_id: str, player: str) -> StreamTicket:
        """A ticket for the player's stream of this game (`GameNotFound` for no game)."""
        await self.games.state(game_id)
        ticket = new_secret(self.token_bytes)
        expires = self.games.clock() + timedelta(seconds=TTL_SECONDS)
        grant = Grant(game_id, player, expires.timestamp())
        await self.games.run(grant_op(self.prefix, ticket, grant, TTL_SECONDS))
        return StreamTicket(ticket, iso(expires))

    async def redeem(self, game_id: str, ticket: str) -> str:
        """The player whose stream of this game the ticket opens, once; `InvalidTicket` for
        a ticket unknown, spent, expired or given for another game (it is spent all the
        same)."""
        grant = await self.games.run(take_op(self.prefix, ticket))
        if (
            grant is None
            or grant.game_id != game_id
            or grant.expires <= self.games.clock().timestamp()
        ):
            raise InvalidTicket()
        return grant.player_id

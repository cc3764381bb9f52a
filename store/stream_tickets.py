"""Stream tickets in Redis: each kept as the SHA-256 of its secret (the key), for the game and
the player it was given for, until when, under a TTL; spent by the one read that takes it
(GETDEL: two openings at once cannot both have it). Store operations in the style of
`store.protocol`; what a ticket is good for is `server.services.stream_tickets`."""

from __future__ import annotations

import msgspec

from store.accounts import token_digest
from store.protocol import Call, Op


class Grant(msgspec.Struct, frozen=True, array_like=True):
    """What a ticket opens: the stream of one game, as one player would follow it."""

    game_id: str
    player_id: str
    expires: float
    """Seconds since the epoch, by the server's clock (Redis's TTL also drops it then)."""


_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder(Grant)


def ticket_key(prefix: str, ticket: str) -> str:
    return f"{prefix}:stream-ticket:{token_digest(ticket)}"


def grant_op(prefix: str, ticket: str, grant: Grant, ttl_seconds: int) -> Op[None]:
    """Keep a new ticket (its hash) for `ttl_seconds`."""
    yield Call("set", (ticket_key(prefix, ticket), _encoder.encode(grant), ttl_seconds))


def take_op(prefix: str, ticket: str) -> Op[Grant | None]:
    """The grant of a ticket, which is gone from then on; None for a ticket unknown, spent
    or dropped by its TTL."""
    found = yield Call("getdel", (ticket_key(prefix, ticket),))
    return None if found is None else _decoder.decode(found)

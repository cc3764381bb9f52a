"""Reading a request, before its handler runs: who sends it (a bearer token, for a player or
a spectator; on a stream, a stream ticket), its JSON body read strictly and once, and
versions named in its query."""

from __future__ import annotations

from typing import Any, TypeVar

import msgspec
from litestar import Request
from litestar.di import NamedDependency
from litestar.exceptions import HTTPException
from litestar.utils.scope.state import ScopeState

from server.schema import errors, limits
from server.schema.errors import Unauthorized
from server.services.bundle import Services
from server.transport.request_ids import raw_header

Svc = NamedDependency[Services]
T = TypeVar("T")


def bearer_token(scope: Any) -> str | None:
    """The bearer token of the request of this ASGI scope (None without an Authorization
    header); `Unauthorized` for a header that is no bearer token."""
    header = raw_header(scope, b"authorization")
    if header is None:
        return None
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthorized("malformed Authorization header")
    return token.strip()


async def provide_player(request: Request[Any, Any, Any], services: Svc) -> str:
    token = bearer_token(request.scope)
    if token is None:
        raise Unauthorized("no token")
    return await services.accounts.authenticate(token)


async def provide_viewer(request: Request[Any, Any, Any], services: Svc) -> str | None:
    token = bearer_token(request.scope)
    return None if token is None else await services.accounts.authenticate(token)


async def stream_viewer(
    request: Request[Any, Any, Any], services: Services, game_id: str, ticket: str | None
) -> str | None:
    """Who follows a game's stream: a stream ticket's player (it is spent now), else as
    `provide_viewer` says. A ticket beside an Authorization header, or beside another
    ticket, is refused (400) before it is looked at: it stays good."""
    if ticket is None:
        return await provide_viewer(request, services)
    if raw_header(request.scope, b"authorization") is not None:
        raise errors.BadParameter("ticket", "send a stream ticket or a bearer token, not both")
    if len(request.query_params.getall("ticket", [])) > 1:
        raise errors.BadParameter("ticket", "send one stream ticket")
    return await services.tickets.redeem(game_id, ticket)


_strict_decoders: dict[Any, msgspec.json.Decoder[Any]] = {}


async def strict_json_body(request: Request[Any, Any, Any]) -> None:
    """Before a handler that takes a body: the body must be JSON and fit its type exactly,
    a string is not a number ("1" for 1 is refused, 400) and a form is not JSON (415).

    Litestar's own conversion is lenient, so the body is decoded here, strictly, once: the
    decoded request is left where Litestar looks for a request's JSON before decoding it
    (its connection state), and its conversion of a value already of the handler's type
    keeps it as it is."""
    field = request.route_handler.parsed_fn_signature.parameters.get("data")
    if request.route_handler.opt.get("own_body"):
        return  # read by the handler itself (a link's form, RFC 8058; a record to audit)
    if field is None:
        if request.method == "POST" and await request.body():
            raise errors.BadParameter("body", "this request takes no body")
        return
    body = await request.body()
    ScopeState.from_scope(request.scope).json = strict_json(
        body, raw_header(request.scope, b"content-type"), strict_decoder(field.annotation)
    )


def strict_decoder(annotation: Any) -> msgspec.json.Decoder[Any]:
    """The one strict decoder of a body type (made once)."""
    decoder = _strict_decoders.get(annotation)
    if decoder is None:
        decoder = _strict_decoders[annotation] = msgspec.json.Decoder(annotation)
    return decoder


def strict_json(body: bytes, content_type: str | None, decoder: msgspec.json.Decoder[T]) -> T:
    """A request's body read strictly: JSON (else 415) of exactly the decoder's type (else
    a `msgspec.DecodeError`, a 400 naming the field; an empty body is "truncated")."""
    media_type = (content_type or "").split(";")[0].strip().lower()
    if body and media_type != "application/json":
        raise HTTPException(status_code=415, detail="send the body as application/json")
    return decoder.decode(body)


def query_version(request: Request[Any, Any, Any], after: int) -> int:
    """`after` as the client wrote it, read by the one strict parser of versions (Litestar's
    reading of an integer would take `1e0` or `2.0`)."""
    raw = request.query_params.get("after")
    return after if raw is None else limits.parse_version(raw, "after")

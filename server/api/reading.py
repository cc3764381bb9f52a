"""Reading a request, before its handler runs: who sends it (a bearer token, for a player or
a spectator; on a stream, a stream ticket), its JSON body read strictly and once, and
versions named in its query.

Strictly, but as JSON Schema reads JSON (the OpenAPI document is the contract): a whole
number is an integer however it is written (`12.0`, `1.2e1`), for JSON has one kind of number
and many clients write every number as a float. What JSON readers read differently is
refused, naming the field: a member named twice in one object (readers keep the first or the
last; the audit refuses it in a record alike) and a lone UTF-16 surrogate (no character)."""

from __future__ import annotations

import json
import re
from typing import Any, TypeVar

import msgspec
from litestar import Request
from litestar.di import NamedDependency
from litestar.exceptions import HTTPException
from litestar.utils.scope.state import ScopeState

from evidence.json_alike import Ambiguous, members_named_once
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
    a `msgspec.DecodeError`, a 400 naming the field; an empty body is "truncated"), a whole
    number written as a float taken as the integer it is, and no member named twice nor lone
    surrogate (`errors.BadParameter` naming where)."""
    media_type = (content_type or "").split(";")[0].strip().lower()
    if body and media_type != "application/json":
        raise HTTPException(status_code=415, detail="send the body as application/json")
    try:
        value = decoder.decode(body)
    except msgspec.DecodeError as refused:  # a ValidationError too
        flaw = _flaw(body)
        if flaw is not None:
            raise flaw from None
        if not isinstance(refused, msgspec.ValidationError):
            raise
        whole: T = _with_whole_numbers(body, decoder.type, refused)
        return whole
    flaw = _flaw(body)  # msgspec keeps the last of a member named twice
    if flaw is not None:
        raise flaw
    return value


def _with_whole_numbers(body: bytes, kind: Any, refused: msgspec.ValidationError) -> Any:
    """The body of type `kind` with each float that has no fraction read as an integer (msgspec
    takes no float for an `int`), or `refused` again if it has no such float."""
    if "got `float`" not in str(refused):
        raise refused
    changed = False

    def whole(value: Any) -> Any:
        nonlocal changed
        if isinstance(value, dict):
            return {key: whole(member) for key, member in value.items()}
        if isinstance(value, list):
            return [whole(item) for item in value]
        if isinstance(value, float) and value.is_integer():
            changed = True
            return int(value)
        return value

    document = whole(msgspec.json.decode(body))
    if not changed:
        raise refused
    return msgspec.convert(document, kind)


class _Twice(dict[str, Any]):
    """An object with a member named twice (`name`), kept where it stood to say where."""

    name = ""


def _marked(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    try:
        return members_named_once(pairs)
    except Ambiguous as twice:
        marked = _Twice(pairs)
        marked.name = twice.name or ""
        return marked


_ONCE = json.JSONDecoder(object_pairs_hook=members_named_once)
"""Made once: `json.loads` with a hook makes a decoder at each call, which costs more than the
reading (a few microseconds, on every body)."""
_MARKING = json.JSONDecoder(object_pairs_hook=_marked)
_SURROGATE = re.compile("[\ud800-\udfff]")
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def _flaw(body: bytes) -> errors.BadParameter | None:
    """What JSON readers read differently in `body`, at the first place it is: a member named
    twice in one object (`evidence.json_alike.members_named_once`), or a lone surrogate, which
    Python's reader keeps and msgspec's calls truncated or malformed JSON. None: neither, or
    no JSON at all."""
    try:
        text = body.decode()
        document = _ONCE.decode(text)
    except Ambiguous:
        return _first_flaw(_MARKING.decode(text), "")
    except (ValueError, RecursionError):
        return None
    if _SURROGATE_ESCAPE.search(body) is None:
        return None  # the common case: the body read once more, by `json` alone
    return _first_flaw(document, "")


def _first_flaw(value: Any, path: str) -> errors.BadParameter | None:
    if isinstance(value, _Twice):
        return errors.BadParameter(
            _at(path, value.name),
            "a member named twice in one object: JSON readers keep either one, so send it once",
        )
    if isinstance(value, str):
        lone = _SURROGATE.search(value)
        if lone is None:
            return None
        return errors.BadParameter(
            path or "body",
            f"\\u{ord(lone.group()):04x} is a lone UTF-16 surrogate, not a character: in JSON a "
            "surrogate escape comes as a pair, high (\\ud800-\\udbff) then low (\\udc00-\\udfff)",
        )
    if not isinstance(value, dict | list):
        return None
    members = value.items() if isinstance(value, dict) else enumerate(value)
    for key, member in members:
        inner = f"{path}[{key}]" if isinstance(key, int) else _at(path, key)
        found = _first_flaw(key, inner) if isinstance(key, str) else None
        found = found or _first_flaw(member, inner)
        if found is not None:
            return found
    return None


def _at(path: str, name: str) -> str:
    """The path of member `name` of the object at `path` (the error table's form: `a.b[0].c`),
    a lone surrogate in it written as its escape (an answer is UTF-8)."""
    name = _SURROGATE.sub(lambda lone: f"\\u{ord(lone.group()):04x}", name)
    return f"{path}.{name}" if path else name


def query_version(request: Request[Any, Any, Any], after: int) -> int:
    """`after` as the client wrote it, read by the one strict parser of versions (Litestar's
    reading of an integer would take `1e0` or `2.0`)."""
    raw = request.query_params.get("after")
    return after if raw is None else limits.parse_version(raw, "after")

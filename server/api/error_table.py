"""The one table from domain, store and server errors to HTTP answers, and what the OpenAPI
document says of each status.

Every refusal is a JSON `ErrorBody`: the status, a stable `error` code, a message for people,
and where it applies the field, the ruling, the index of the refused command or the current
version. Anything unexpected is a 500 carrying only the request id, which the log ties to
the stack trace; the client never sees one.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec
import structlog
from litestar import Request, Response
from litestar.exceptions import HTTPException, NotAuthorizedException, ValidationException
from litestar.types import ExceptionHandlersMap

from domain.errors import CommandRefused, IllegalCommand, InvalidOptions
from server.schema.errors import (
    BadParameter,
    ErrorBody,
    GameNotOver,
    GameNotPlaying,
    InvalidSetting,
    InvalidTicket,
    NotAdmitted,
    NotFound,
    NotReady,
    SeatViewSecret,
    Unauthorized,
    cut,
)
from server.transport import metrics
from server.transport.request_ids import request_id_of
from server.transport.security_headers import security_headers
from store.errors import (
    CommandIdReused,
    GameNotFound,
    NotSeated,
    StoreUnavailable,
    VersionConflict,
    WrongInvite,
)

log = structlog.get_logger("patrician.errors")


# Refusals by the rules that are about who may act, not about the command.
_FORBIDDEN_CODES = {
    "not_your_decision": 403,
    "not_at_table": 403,
    "not_creator": 403,
    "seat_handed_over": 403,
}
_CONFLICT_CODES = {
    "game_not_open": 409,
    "already_seated": 409,
    "game_not_started": 409,
    "creator_cannot_leave": 409,
    "game_cancelled": 409,
}


_PHASE_WORDS = {
    "waiting": "this one waits for players",
    "playing": "this one is still in play",
    "cancelled": "this one was called off",
}


def _illegal(error: IllegalCommand, index: int | None) -> ErrorBody:
    status = _FORBIDDEN_CODES.get(error.code) or _CONFLICT_CODES.get(error.code) or 422
    return ErrorBody(status, error.code, error.message, rule=error.rule, index=index)


def _body(error: Exception, scope: Any) -> ErrorBody | None:
    """The answer to a known error, or None for an unexpected one."""
    match error:
        case CommandRefused():
            return _illegal(error.error, error.index)
        case IllegalCommand():
            return _illegal(error, None)
        case InvalidOptions():
            return ErrorBody(422, "invalid_option", error.message, field=error.field)
        case GameNotPlaying():
            return ErrorBody(409, "game_not_playing", f"the game is not in play ({error.phase})")
        case GameNotOver():
            said = _PHASE_WORDS.get(error.phase, error.phase)
            return ErrorBody(409, "game_not_over", f"{error.needs}: {said}")
        case InvalidSetting():
            return ErrorBody(422, "invalid_setting", error.message, field=error.field)
        case VersionConflict():
            return ErrorBody(
                409,
                "version_conflict",
                f"the game is at version {error.current}; reload it and decide again",
                current_version=error.current,
            )
        case CommandIdReused():
            return ErrorBody(
                409,
                "command_id_reused",
                "this command_id was already used for another request; use a fresh one",
            )
        case GameNotFound():
            return ErrorBody(404, "game_not_found", "no game has this id")
        case NotFound():
            return ErrorBody(404, "not_found", str(error))
        case NotSeated():
            return ErrorBody(403, "not_seated", "you hold no seat in this game")
        case SeatViewSecret():
            return ErrorBody(
                403,
                "seat_view_secret",
                "the game is still on: a seat's view is its player's alone until it ends",
                field="as",
            )
        case NotAdmitted():
            return ErrorBody(403, error.code, error.message, field=error.field)
        case WrongInvite():
            return ErrorBody(403, "wrong_invite", "this invite code does not open this game")
        case Unauthorized() | NotAuthorizedException():
            return ErrorBody(
                401, "unauthorized", "send Authorization: Bearer <token> of a known player"
            )
        case InvalidTicket():
            return ErrorBody(
                401,
                "invalid_ticket",
                "this stream ticket is unknown, spent, expired or another game's: ask for a "
                "new one (POST /api/games/{id}/stream-ticket)",
            )
        case StoreUnavailable():
            return ErrorBody(503, "unavailable", "the game store is unreachable; try again")
        case NotReady():
            return ErrorBody(503, "not_ready", f"not ready: {error}", field=error.failed[0][0])
    return _bad_input(error, scope)


def _unknown(field: str) -> str:
    """The words for a member that is no field of its object, naming the object by its JSON
    path when it is not the body itself (as a JSON tool would point at it)."""
    said = "not a field of this request (unknown fields are refused)"
    parent, _, name = field.rpartition(".")
    return f"{said}: the object at `$.{parent}` has no `{name}`" if parent else said


def _bad_input(error: Exception, scope: Any) -> ErrorBody | None:
    """A 400 for a request that is not what it must be, in the one style of them all, whether
    the body, a query or path parameter or a header is wrong: `field` names it (its path in the
    body, `digest.hour`, or the parameter as it is sent, `as`), and the message says it first,
    then what is wrong with it, for people."""
    match error:
        case BadParameter():
            return _bad(error.field, error.message)
        case msgspec.DecodeError():  # the strict second reading of a body
            field = _decoded_field(error)
            said = _AT.sub("", str(error))
            if field is None:
                return _bad(None, f"invalid request body: {said}")
            if _UNKNOWN.search(said):
                return _bad(field, _unknown(field))
            if _MISSING.search(said):
                return _bad(field, "a required field is missing")
            return _bad(field, said)
        case RecursionError():
            return _bad(None, "the request body is nested too deeply")
        case ValidationException():  # Litestar's reading of a parameter
            item = next((i for i in error.extra or () if isinstance(i, dict)), {})
            key, said = item.get("key"), str(item.get("message") or "not valid")
            if not isinstance(key, str) or not key:
                return _bad(None, f"invalid request: {said}")
            return _bad(_sent_name(scope, key), said)
        case HTTPException():
            code = _HTTP_CODES.get(error.status_code, f"http_{error.status_code}")
            return ErrorBody(error.status_code, code, str(error.detail))
    return None


def _bad(field: str | None, what: str) -> ErrorBody:
    """`field: what`, the same whoever found it wrong (msgspec's words begin in capitals, as
    a sentence of their own: "Expected `int` >= 0")."""
    said = what[:1].lower() + what[1:] if what[:2].istitle() else what
    return ErrorBody(400, "bad_request", f"{field}: {said}" if field else said, field=field)


_AT = re.compile(r" - at `\$[^`]*`")
_PATH = re.compile(r"at `\$\.?([^`]*)`")
_UNKNOWN = re.compile(r"unknown field `([^`]+)`")
_MISSING = re.compile(r"missing required field `([^`]+)`")


def _decoded_field(error: msgspec.DecodeError) -> str | None:
    """The field of the body a decoding error is about (`digest.hour`, `seats`, a field that
    is not known or is missing), from msgspec's words, which name its path (`at
    $.digest.hour`)."""
    said = str(error)
    at, named = _PATH.search(said), _UNKNOWN.search(said) or _MISSING.search(said)
    path = at.group(1) if at else ""
    if named:
        path = f"{path}.{named.group(1)}" if path else named.group(1)
    return path or None


def _sent_name(scope: Any, key: str) -> str:
    """A parameter as the client sends it (`as`), where Litestar's error names the handler's
    argument (`as_seat`): the name its `QueryParameter` (or header, cookie) gives it."""
    handler = scope.get("route_handler")
    parameter = handler.parsed_fn_signature.parameters.get(key) if handler is not None else None
    declared = getattr(parameter, "kwarg_definition", None)
    names = (getattr(declared, alias, None) for alias in ("name", "query", "header", "cookie"))
    return next((name for name in names if isinstance(name, str) and name), key)


_HTTP_CODES = {
    400: "bad_request",
    404: "not_found",
    405: "method_not_allowed",
    413: "body_too_large",
    415: "unsupported_media_type",
    429: "rate_limited",
}


def refusal(scope: Any, error: Exception) -> tuple[ErrorBody, dict[str, str]]:
    """The answer to `error` met serving the request of `scope` (its body and headers),
    logged and counted: what every error answer is made of, whether Litestar renders it
    (`handle`) or the command lane (`server.api.command_lane`)."""
    # Routing errors (404, 405) come before the hook that gives a request its id and binds it
    # to the log context: the id is taken here, and named in the log lines below.
    request_id = request_id_of(scope)
    path = scope["path"]
    body = _body(error, scope)
    if body is None:
        log.exception("unexpected error", request_id=request_id, path=path)
        body = ErrorBody(500, "internal", "an unexpected error; quote the request id")
    else:
        log.info(
            "refused",
            request_id=request_id,
            status=body.status,
            error=body.error,
            path=path,
            **({"reason": str(error)} if isinstance(error, StoreUnavailable) else {}),
        )
    metrics.answered(body.status)
    metrics.refused(body.error)
    if not scope.get("path_template"):  # no route took it: no door timed it
        metrics.observe(scope, 0.0)
    message, field = cut(body.message), None if body.field is None else cut(body.field)
    answer = msgspec.structs.replace(body, request_id=request_id, message=message, field=field)
    headers = dict(error.headers or {}) if isinstance(error, HTTPException) else {}
    headers["X-Request-ID"] = request_id
    headers.update(security_headers(path))  # error answers too
    if body.status == 401:
        headers["WWW-Authenticate"] = "Bearer"
    return answer, headers


def handle(request: Request[Any, Any, Any], error: Exception) -> Response[Any]:
    answer, headers = refusal(request.scope, error)
    return Response(answer, status_code=answer.status, headers=headers)


EXCEPTION_HANDLERS: ExceptionHandlersMap = {Exception: handle}

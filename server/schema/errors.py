"""What the API refuses with: the body of every error answer, and the refusals of the
server's own that the error table (`server.api.error_table`) answers.
"""

from __future__ import annotations

import re

import msgspec
from litestar.openapi.datastructures import ResponseSpec
from litestar.openapi.spec import Example


class BadParameter(ValueError):
    """A part of a request that is not what it must be (a parameter, a header, a field of the
    body): 400, naming it."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


class ErrorBody(msgspec.Struct, frozen=True, omit_defaults=True):
    status: int
    error: str
    """A stable machine-readable code."""
    message: str
    request_id: str = ""
    field: str | None = None
    rule: str | None = None
    index: int | None = None
    current_version: int | None = None


MAX_ECHO = 64
"""The longest run of characters without a space an answer repeats of what it was sent (an id,
a name, a field): a longer one was never anybody's, and is cut (`cut`)."""
MAX_MESSAGE = 500
"""The longest message an answer gives: the server's own are well under it."""
_RUN = re.compile(rf"\S{{{MAX_ECHO + 1},}}")


def cut(text: str) -> str:
    """`text` with each run of more than `MAX_ECHO` characters without a space cut to its first
    `MAX_ECHO`, and all of it to `MAX_MESSAGE`, each saying how much was cut: a refusal that
    repeats what it was sent (a 3,000-character id) stays short and says so."""
    text = _RUN.sub(lambda run: _shortened(run.group(), MAX_ECHO), text)
    return _shortened(text, MAX_MESSAGE)


def _shortened(text: str, most: int) -> str:
    if len(text) <= most:
        return text
    return f"{text[:most]}... ({len(text) - most:,} more characters cut)"


class Unauthorized(Exception):
    """No bearer token, or one that belongs to nobody: 401."""


class InvalidTicket(Exception):
    """A stream ticket that opens nothing (unknown, spent, expired or another game's): 401.
    Its answer never names the ticket."""


class NotFound(Exception):
    """Nothing at this address (a player, a version beyond the game's): 404."""


class GameNotPlaying(Exception):
    """Something only a game in play allows, asked of one that waits, is over or was
    cancelled: 409."""

    def __init__(self, phase: str) -> None:
        super().__init__(phase)
        self.phase = phase


class GameNotOver(Exception):
    """Something only a finished game allows (a rematch), asked of one that waits, is in play
    or was cancelled: 409."""

    def __init__(self, phase: str, needs: str = "a rematch follows the end of a game") -> None:
        super().__init__(phase)
        self.phase = phase
        self.needs = needs
        """What asked for the end, in words."""


class SeatViewSecret(Exception):
    """Another seat's view of a game still in play (`at/{v}?as=S`): 403. Once the game is
    over nothing is secret and anyone may ask."""


class NotReady(Exception):
    """A readiness check failed (`server.ops.readiness`): 503 `not_ready`, `field` naming the
    first that failed, the message all of them in words."""

    def __init__(self, failed: list[tuple[str, str]]) -> None:
        super().__init__("; ".join(f"{name}: {detail}" for name, detail in failed))
        self.failed = failed


class NotAdmitted(Exception):
    """A player who does not meet a table's requirement asks to join it: 403 with the code
    of the requirement (`below_minimum_rating`, `too_many_timeouts`) and its field."""

    def __init__(self, code: str, field: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.field = field
        self.message = message


class InvalidSetting(ValueError):
    """A player's setting that cannot be used (a webhook URL to a private address, an unknown
    time zone): 422, naming the field."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


ERROR_DESCRIPTIONS = {
    400: "Malformed JSON, a wrong type, an unknown field or command type, or a malformed "
    "parameter (a version that is not a whole number from 0 to 2^53 - 1, say)",
    401: "No bearer token, or an unknown one; on the stream, a ticket that is unknown, spent, "
    "expired or another game's (`invalid_ticket`)",
    403: "Not your seat, not your decision, not your table, a wrong invite code, or a "
    "table's requirement you do not meet (`below_minimum_rating`, `too_many_timeouts`)",
    404: "No such game, player or version",
    409: "A stale expected_version (the body names the current version), a full or closed "
    "table, a command_id reused for another request, a resignation from a game not in play, "
    "or a rematch of a game that is not over",
    413: "The body is larger than the limit",
    415: "The body is not application/json",
    422: "Refused by the rules (code, ruling, and the index of the refused command) or an "
    "invalid option, name or setting (the field and the reason)",
    429: "Too many requests of this kind for now: try again after `Retry-After` seconds",
    503: "The game store is unreachable",
}


ERROR_EXAMPLES: dict[int, ErrorBody] = {
    400: ErrorBody(
        400,
        "bad_request",
        "Last-Event-ID: a version is a whole number from 0 to 9007199254740991",
        "5f1c09aa00000012",
        field="Last-Event-ID",
    ),
    401: ErrorBody(
        401,
        "unauthorized",
        "send Authorization: Bearer <token> of a known player",
        "5f1c09aa00000020",
    ),
    403: ErrorBody(
        403,
        "not_your_decision",
        "seat 1 decides now (take_card), not seat 0 (R44)",
        "5f1c09aa00000031",
        rule="R44",
        index=0,
    ),
    404: ErrorBody(404, "game_not_found", "no game has this id", "5f1c09aa00000044"),
    409: ErrorBody(
        409,
        "version_conflict",
        "the game is at version 57; reload it and decide again",
        "5f1c09aa00000052",
        current_version=57,
    ),
    413: ErrorBody(413, "body_too_large", "Request Entity Too Large", "5f1c09aa00000060"),
    415: ErrorBody(
        415, "unsupported_media_type", "send the body as application/json", "5f1c09aa00000061"
    ),
    422: ErrorBody(
        422,
        "must_take_built_city",
        "take the face-up card of Siena, the city you built in (allowed: Siena) (R14)",
        "5f1c09aa00000077",
        rule="R14",
        index=2,
    ),
    429: ErrorBody(
        429, "rate_limited", "at most 5 messages a minute in one game", "5f1c09aa00000081"
    ),
    503: ErrorBody(
        503, "unavailable", "the game store is unreachable; try again", "5f1c09aa00000090"
    ),
}
"""A real answer per status, as the server sends it: the OpenAPI document's examples."""


def error_response(
    status: int, example: ErrorBody | None = None, description: str | None = None
) -> ResponseSpec:
    """The documented answer of an error status: the table's example and words, or an
    operation's own."""
    example = example or ERROR_EXAMPLES[status]
    return ResponseSpec(
        data_container=ErrorBody,
        description=description or ERROR_DESCRIPTIONS[status],
        generate_examples=False,
        examples=[Example(summary=example.error, value=msgspec.to_builtins(example))],
    )


def error_responses(*statuses: int) -> dict[int, ResponseSpec]:
    """The documented error answers of an operation."""
    return {status: error_response(status) for status in statuses}

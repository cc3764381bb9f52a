"""The limits of what the API accepts: sizes, counts, hours and versions, each stated once,
and the same in the code, the OpenAPI document and docs/api.md (a test keeps them so).
"""

from __future__ import annotations

from typing import Annotated

import msgspec

from domain.commands import Command
from domain.names import MAX_NAME
from domain.setup import MAX_ENTROPY
from server.schema.errors import BadParameter
from store.time_controls import MIN_PER_MOVE_HOURS

Name = Annotated[
    str,
    msgspec.Meta(
        description=f"1-{MAX_NAME} characters once spaces are trimmed; no control, line-break "
        "or text-direction characters (422 `invalid_option` otherwise)",
        examples=["Mary"],
    ),
]


MAX_BODY = 64 * 1024
"""Request bodies above this are refused (413): a whole turn is well under 2 KB."""


MAX_COMMAND_ID = 128


MAX_COMMANDS = 30
"""Commands per request: a whole turn is at most about a dozen."""


MAX_INVITE_CODE = 128


MAX_BOTS = 4
"""Bots in one game: all seats of the largest table but the creator's."""


MAX_HOURS = 24 * 60
"""The longest a clock's per-move time or bank may be (60 days)."""


MAX_REMINDERS = 5


MAX_RATING = 4000
"""The highest minimum rating a table may ask of those who join."""


VACATION_DAYS = 30
"""The days of vacation each player may take in a calendar year."""


Entropy = Annotated[str, msgspec.Meta(max_length=MAX_ENTROPY)]


CommandId = Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_COMMAND_ID)]


Commands = Annotated[list[Command], msgspec.Meta(min_length=1, max_length=MAX_COMMANDS)]


MAX_VERSION = 2**53 - 1
"""The largest version anyone may name: every JSON client reads it exactly, and it lies well
within the range of Redis stream ids."""
VERSION_PATTERN = (
    r"^([0-9]{1,15}|[0-8][0-9]{15}|900[0-6][0-9]{12}|90070[0-9]{11}|90071[0-8][0-9]{10}"
    r"|900719[0-8][0-9]{9}|9007199[0-1][0-9]{8}|90071992[0-4][0-9]{7}|900719925[0-3][0-9]{6}"
    r"|9007199254[0-6][0-9]{5}|90071992547[0-3][0-9]{4}|9007199254740[0-8][0-9]{2}"
    r"|90071992547409[0-8][0-9]|9007199254740990|9007199254740991)$"
)
"""A version in a path, as the OpenAPI document says it: ASCII digits, at most 16, of value at
most `MAX_VERSION`, what `parse_version` takes (tests/server/api/test_bad_input.py checks
that both agree)."""


Version = Annotated[int, msgspec.Meta(ge=0, le=MAX_VERSION)]


def limits() -> list[tuple[str, str]]:
    """Every limit of a request, as docs/api.md states them (a test keeps them the same)."""
    return [
        ("a player's `name`", f"1-{MAX_NAME} characters once spaces are trimmed (422)"),
        ("`entropy`", f"at most {MAX_ENTROPY} characters"),
        ("`command_id`", f"1-{MAX_COMMAND_ID} characters"),
        ("`commands` per request", f"1-{MAX_COMMANDS}"),
        ("`invite_code`", f"at most {MAX_INVITE_CODE} characters"),
        ("`bots`", f"at most {MAX_BOTS} (and at most `seats - 1`)"),
        ("`clock.per_move_hours`", f"at least 1/60 (one minute), at most {MAX_HOURS} (60 days)"),
        ("`clock.bank_hours`, `clock.max_bank_hours`", f"0 to {MAX_HOURS}"),
        ("`clock.hand_over_after`", "1-100"),
        ("`requirements.min_rating`", f"0 to {MAX_RATING}"),
        ("`requirements.max_timeouts_per_100`", "0 to 100"),
        ("`reminder_hours`", f"at most {MAX_REMINDERS}, each above 0 and at most {MAX_HOURS}"),
        ("a message of table talk (`text`)", f"1-{MAX_TALK} characters once cleaned"),
        ("vacation `days`", f"1-{VACATION_DAYS}, and at most what is left of the year's"),
        ("a version (`expected_version`, `after`, `Last-Event-ID`)",
         f"a whole number from 0 to {MAX_VERSION} (2^53 - 1)"),
        ("a request body", f"{MAX_BODY // 1024} KiB (413)"),
    ]  # fmt: skip


def limits_table() -> str:
    """The limits as the Markdown table of docs/api.md."""
    rows = "".join(f"| {what} | {value} |\n" for what, value in limits())
    return "| limit | value |\n| --- | --- |\n" + rows


def parse_version(text: str, field: str) -> int:
    """A version as a client writes it: ASCII digits only (no sign, space or other script's
    digits), at most `MAX_VERSION`. The one parser of versions outside JSON bodies."""
    if not (text.isascii() and text.isdigit()) or len(text) > 16 or int(text) > MAX_VERSION:
        raise BadParameter(field, f"a version is a whole number from 0 to {MAX_VERSION}")
    return int(text)


Hours = Annotated[float, msgspec.Meta(gt=0, le=MAX_HOURS)]


PerMoveHours = Annotated[
    float,
    msgspec.Meta(
        ge=MIN_PER_MOVE_HOURS, le=MAX_HOURS,
        description="At least 1/60 (one minute), at most 1440 (60 days)",
    ),
]  # fmt: skip
"""A turn's time: at least a minute, so that a person can meet its deadline, and never less
than the grace of a seat handed over to its bot (`store.time_controls.MIN_PER_MOVE_HOURS`)."""


BankHours = Annotated[float, msgspec.Meta(ge=0, le=MAX_HOURS)]


MAX_URL = 2048


Clock24 = Annotated[
    str, msgspec.Meta(pattern=r"^([01][0-9]|2[0-3]):[0-5][0-9]$", examples=["22:00"])
]


Reminders = Annotated[list[Hours], msgspec.Meta(max_length=MAX_REMINDERS)]


MAX_TALK = 500
"""The characters of a message of table talk, once cleaned."""


MESSAGE_ID = r"^[0-9]{1,20}-[0-9]{1,20}$"
"""A message of table talk's id, as its thread's stream numbers it: two whole numbers joined by
`-` (what `after` takes)."""

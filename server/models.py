"""The shapes of the HTTP API: request and response bodies (msgspec Structs).

These are contracts with independent clients: documented in the OpenAPI document Litestar
builds from them and in `docs/api.md`. Requests refuse unknown fields.
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from domain.commands import Command
from domain.events import Edition, Event, GameEnded, Module, Step
from domain.names import MAX_NAME
from domain.setup import MAX_ENTROPY
from domain.view import ClockView
from projections.signatures import Receipt

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
VACATION_DAYS = 30
"""The days of vacation each player may take in a calendar year."""

Entropy = Annotated[str, msgspec.Meta(max_length=MAX_ENTROPY)]
CommandId = Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_COMMAND_ID)]
Commands = Annotated[list[Command], msgspec.Meta(min_length=1, max_length=MAX_COMMANDS)]
MAX_VERSION = 2**53 - 1
"""The largest version anyone may name: every JSON client reads it exactly, and it lies well
within the range of Redis stream ids."""
Version = Annotated[int, msgspec.Meta(ge=0, le=MAX_VERSION)]


class BadParameter(ValueError):
    """A parameter outside the body (a header, say) that is not what it must be: 400."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


def limits() -> list[tuple[str, str]]:
    """Every limit of a request, as docs/api.md states them (a test keeps them the same)."""
    return [
        ("a player's `name`", f"1-{MAX_NAME} characters once spaces are trimmed (422)"),
        ("`entropy`", f"at most {MAX_ENTROPY} characters"),
        ("`command_id`", f"1-{MAX_COMMAND_ID} characters"),
        ("`commands` per request", f"1-{MAX_COMMANDS}"),
        ("`invite_code`", f"at most {MAX_INVITE_CODE} characters"),
        ("`bots`", f"at most {MAX_BOTS} (and at most `seats - 1`)"),
        ("`clock.per_move_hours`", f"above 0, at most {MAX_HOURS} (60 days)"),
        ("`clock.bank_hours`, `clock.max_bank_hours`", f"0 to {MAX_HOURS}"),
        ("`clock.hand_over_after`", "1-100"),
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


class _Request(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    pass


class NewPlayer(_Request, frozen=True):
    name: Name


class PlayerCreated(msgspec.Struct, frozen=True):
    player_id: str
    token: str
    """The bearer secret: shown once, kept only as a hash."""


class PlayerInfo(msgspec.Struct, frozen=True):
    player_id: str
    name: str


class BotSeat(_Request, frozen=True):
    level: Literal["random", "greedy", "ismcts"]
    """How the bot plays (docs/bots.md)."""


Hours = Annotated[float, msgspec.Meta(gt=0, le=MAX_HOURS)]
BankHours = Annotated[float, msgspec.Meta(ge=0, le=MAX_HOURS)]


class ClockSetting(_Request, frozen=True):
    """A game's clock (docs/api.md "Clocks")."""

    per_move_hours: Hours
    """What each turn may take before the bank is drawn on."""
    bank_hours: BankHours = 0.0
    """Each seat's bank of extra time at the start."""
    max_bank_hours: BankHours | None = None
    """The most a bank may hold (at least `bank_hours`; `bank_hours` when absent): what a
    turn leaves of `per_move_hours` is banked up to this."""
    on_timeout: Literal["random", "greedy"] = "greedy"
    """The bot that plays a turn whose deadline passed (the seat stays the person's)."""
    hand_over_after: Annotated[int, msgspec.Meta(ge=1, le=100)] = 3
    """Timeouts in a row after which the bot plays the seat's turns at once (a minute after
    each begins); the person takes the seat back by playing a turn."""


class NewGame(_Request, frozen=True):
    seats: int
    edition: str = "towers"
    modules: list[str] = []
    entropy: Entropy = ""
    command_id: CommandId | None = None
    """Names the request: sent again (after a lost answer), it creates no second game but
    answers the first one. Without it a retry makes another game."""
    bots: Annotated[list[BotSeat], msgspec.Meta(max_length=MAX_BOTS)] = []
    """Seats taken at once by bots (at most seats - 1: the creator holds one); the workers
    play them, within a second of each of their decisions."""
    clock: ClockSetting | None = None
    """A deadline for every turn (absent: untimed)."""


class CreatedGame(msgspec.Struct, frozen=True):
    game_id: str
    invite_code: str
    seed_commitment: str
    version: int
    receipt: Receipt
    """The server's signature on the game's head at `version` (docs/record.md, "Receipts")."""
    repeated: bool = False
    """True when this command id had created the game before: this is its answer again."""


class JoinGame(_Request, frozen=True):
    invite_code: Annotated[str, msgspec.Meta(max_length=MAX_INVITE_CODE)]
    entropy: Entropy = ""


class Joined(msgspec.Struct, frozen=True):
    game_id: str
    version: int
    started: bool
    seat: int | None
    """Your seat in turn order, once the game has started (seats are drawn at the start)."""
    receipt: Receipt
    """The server's signature on the game's head at `version` (docs/record.md, "Receipts")."""


class SendCommands(_Request, frozen=True):
    expected_version: Version
    command_id: CommandId
    commands: Commands


class PreviewCommands(_Request, frozen=True):
    """Commands of your seat decided without sending them (`POST .../preview`)."""

    expected_version: Version
    commands: Commands


class VersionedEvent(msgspec.Struct, frozen=True, omit_defaults=True):
    version: int
    event: Event
    text: str | None = None
    """The event in words, for people; in event lists only, and there left out for
    bookkeeping that says nothing new."""


class CommandsAccepted(msgspec.Struct, frozen=True):
    version: int
    first_version: int
    repeated: bool
    """True when this command id had been accepted before: this is its first result again."""
    events: list[VersionedEvent]
    receipt: Receipt
    """The server's signature on the game's head at `version` (docs/record.md, "Receipts"):
    keep it, it proves what the server acknowledged."""


class Resigned(msgspec.Struct, frozen=True):
    """A seat handed to a bot for good: which, to which level, at which version."""

    game_id: str
    seat: int
    level: str
    version: int


class TableChanged(msgspec.Struct, frozen=True):
    """A place given up, or a game cancelled: the game's version and phase after it."""

    game_id: str
    version: int
    phase: str
    receipt: Receipt
    """The server's signature on the game's head at `version` (docs/record.md, "Receipts")."""


class Revealed(msgspec.Struct, frozen=True):
    """On a live stream, right after the end: the earlier events the caller could not see."""

    events: list[VersionedEvent]


class EventList(msgspec.Struct, frozen=True):
    version: int
    events: list[VersionedEvent]


class LobbyGame(msgspec.Struct, frozen=True):
    game_id: str
    edition: Edition
    seats: int
    modules: tuple[Module, ...]
    joined: tuple[str, ...]
    version: int


class MyGame(msgspec.Struct, frozen=True):
    game_id: str
    edition: Edition
    seats: int
    modules: tuple[Module, ...]
    phase: str
    seat: int | None
    your_decision: bool
    step: Step | None
    version: int
    since: str | None
    """When the game started waiting for its current decision (UTC, ISO 8601)."""
    waited_seconds: float | None
    result: GameEnded | None = None
    clock: ClockView | None = None
    """A timed game's clocks: whose runs, its deadline, every seat's bank."""


MAX_URL = 2048
Clock24 = Annotated[
    str, msgspec.Meta(pattern=r"^([01][0-9]|2[0-3]):[0-5][0-9]$", examples=["22:00"])
]


class WebhookSetting(_Request, frozen=True):
    url: Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_URL)]
    """`http` or `https`, to a public address (docs/notifications.md, "Where a webhook may
    go")."""


class QuietHoursSetting(_Request, frozen=True):
    start: Clock24
    end: Clock24
    time_zone: Annotated[str, msgspec.Meta(max_length=64, examples=["Europe/Berlin"])]
    """An IANA time zone name."""


class EmailSetting(_Request, frozen=True):
    address: Annotated[str, msgspec.Meta(min_length=3, max_length=254)]
    """Sent nothing but a confirmation link until you follow it."""


class DigestSetting(_Request, frozen=True):
    hour: Annotated[
        int,
        msgspec.Meta(
            ge=0, le=23, examples=[8],
            description="The hour of the day it is sent (at its start), in time_zone",
        ),
    ] = 8  # fmt: skip
    """The hour of the day it is sent, at its start, in `time_zone` (0-23; default 8)."""
    time_zone: (
        Annotated[
            str,
            msgspec.Meta(
                max_length=64, examples=["Europe/Berlin"],
                description="An IANA time zone name; left out: your quiet hours' time zone, "
                "or UTC without them",
            ),
        ]
        | None
    ) = None  # fmt: skip
    """An IANA time zone name; left out, your quiet hours' time zone, or UTC without them."""


Reminders = Annotated[list[Hours], msgspec.Meta(max_length=MAX_REMINDERS)]


class NotificationSettings(_Request, frozen=True):
    webhook: WebhookSetting | None = None
    email: EmailSetting | None = None
    quiet_hours: QuietHoursSetting | None = None
    reminder_hours: Reminders = msgspec.field(default_factory=lambda: [24.0, 1.0])
    """In a timed game, how long before your turn's deadline you are reminded (each at most
    once a turn; none that would come before the turn begins)."""
    digest: DigestSetting | None = None
    """One e-mail a day listing the games that await you, instead of an e-mail per turn
    (`turn.started`, `turn.reminder`; webhooks are not affected). Needs `email`."""


class WebhookInfo(msgspec.Struct, frozen=True):
    url: str
    enabled: bool
    disabled_reason: str | None = None
    secret: str | None = None
    """The signing secret (`whsec_...`): in the answer that set this URL only, never again."""


class QuietHoursInfo(msgspec.Struct, frozen=True):
    start: str
    end: str
    time_zone: str


class EmailInfo(msgspec.Struct, frozen=True):
    address: str
    confirmed: bool
    """Whether you followed the confirmation link sent to it (nothing else is sent before)."""


class DigestInfo(msgspec.Struct, frozen=True):
    hour: int
    time_zone: str
    """The time zone `hour` is in (the one set, or the one it defaulted to)."""


class Notifications(msgspec.Struct, frozen=True):
    webhook: WebhookInfo | None
    quiet_hours: QuietHoursInfo | None
    reminder_hours: list[float]
    email: EmailInfo | None = None
    digest: DigestInfo | None = None
    """The daily digest, if you get one instead of an e-mail per turn."""


MAX_TALK = 500
"""The characters of a message of table talk, once cleaned."""


class NewMessage(_Request, frozen=True):
    text: Annotated[str, msgspec.Meta(min_length=1, max_length=4 * MAX_TALK)]
    """At most 500 characters once cleaned (line breaks kept; docs/api.md "Table talk")."""


class VacationRequest(_Request, frozen=True):
    days: Annotated[int, msgspec.Meta(ge=1, le=VACATION_DAYS)]
    """From now, for this many days (at most what is left of this year's allowance)."""


class VacationInfo(msgspec.Struct, frozen=True):
    allowance_days: int
    """The days each player may take in a calendar year (UTC)."""
    used_days: float
    """Taken or booked this year."""
    until: str | None
    """The end of the vacation going on (UTC, ISO 8601); None: not on vacation."""


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


class Health(msgspec.Struct, frozen=True):
    status: str
    redis: str

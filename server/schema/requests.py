"""The request bodies of the HTTP API (msgspec Structs): contracts with independent
clients, documented in the OpenAPI document Litestar builds from them and in `docs/api.md`.
Requests refuse unknown fields.
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from server.schema.limits import (
    MAX_BOTS,
    MAX_INVITE_CODE,
    MAX_RATING,
    MAX_TALK,
    MAX_URL,
    VACATION_DAYS,
    BankHours,
    Clock24,
    CommandId,
    Commands,
    Entropy,
    Name,
    PerMoveHours,
    Reminders,
    Version,
)


class _Request(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    pass


class NewPlayer(_Request, frozen=True):
    name: Name


class BotSeat(_Request, frozen=True):
    level: Literal["random", "greedy", "ismcts"]
    """How the bot plays (docs/bots.md)."""


class ClockSetting(_Request, frozen=True):
    """A game's clock (docs/api.md "Clocks")."""

    per_move_hours: PerMoveHours
    """What each turn may take before the bank is drawn on (at least a minute)."""
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


class Requirements(_Request, frozen=True):
    """What a player must show to join the table (docs/api.md, "A table's requirements");
    each left out asks nothing."""

    min_rating: Annotated[int, msgspec.Meta(ge=0, le=MAX_RATING)] | None = None
    """The lowest rating shown that may join (provisional or not; one never rated counts as
    1000, the figure every newcomer shows)."""
    max_timeouts_per_100: Annotated[float, msgspec.Meta(ge=0, le=100)] | None = None
    """The most turns timed out per 100 turns, over the player's last 100 games, that may
    join (a player with no turn yet may)."""


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
    requirements: Requirements | None = None
    """What a player must show to join (absent: anyone with the invite code may)."""


class JoinGame(_Request, frozen=True):
    invite_code: Annotated[str, msgspec.Meta(max_length=MAX_INVITE_CODE)]
    entropy: Entropy = ""


class SendCommands(_Request, frozen=True):
    expected_version: Version
    command_id: CommandId
    commands: Commands


class PreviewCommands(_Request, frozen=True):
    """Commands of your seat decided without sending them (`POST .../preview`)."""

    expected_version: Version
    commands: Commands


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


class NewMessage(_Request, frozen=True):
    text: Annotated[str, msgspec.Meta(min_length=1, max_length=4 * MAX_TALK)]
    """At most 500 characters once cleaned (line breaks kept; docs/api.md "Table talk")."""


class VacationRequest(_Request, frozen=True):
    days: Annotated[int, msgspec.Meta(ge=1, le=VACATION_DAYS)]
    """From now, for this many days (at most what is left of this year's allowance)."""


class PushKeys(_Request, frozen=True):
    p256dh: Annotated[str, msgspec.Meta(min_length=1, max_length=128)]
    """The browser's public key: 65 bytes (an uncompressed P-256 point), base64url."""
    auth: Annotated[str, msgspec.Meta(min_length=1, max_length=64)]
    """Its authentication secret: 16 bytes, base64url."""


class PushSubscription(_Request, frozen=True):
    """A browser's `PushSubscription.toJSON()`, and a name for the device."""

    endpoint: Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_URL)]
    """Where its push service takes messages for it: an https URL of a public host."""
    keys: PushKeys
    expiration_time: float | None = msgspec.field(default=None, name="expirationTime")
    """As the browser gives it (ignored: a subscription that ends is removed when its push
    service says it is gone)."""
    name: Annotated[str, msgspec.Meta(max_length=60)] = ""
    """What you call this device ("Phone"), to tell your devices apart; left empty, "A
    device"."""

"""How each player wants to be told that something happened (their channels) and what was sent
to them (their delivery log). Store operations in the style of `store.protocol`, shared by the
asyncio server (which sets channels) and the workers (which deliver).

A webhook's signing secret is kept as it is, unlike a bearer token: the workers need it to
sign every delivery (Standard Webhooks is an HMAC over the message with that secret). It is
shown to the player once, when the webhook is set, and never served again.
"""

from __future__ import annotations

import hashlib
from typing import Literal

import msgspec

from store.accounts import Accounts
from store.protocol import Call, Op, reply_text

DELIVERY_LOG_LENGTH = 200
"""How many deliveries a player's log keeps (the newest)."""


class Webhook(msgspec.Struct, frozen=True):
    url: str
    secret: str
    """`whsec_` and the base64 of 24 random bytes (the Standard Webhooks form)."""
    disabled: str = ""
    """Why the webhook was turned off ("" while it is on)."""


class QuietHours(msgspec.Struct, frozen=True):
    start: str
    """HH:MM, the player's local time when the quiet begins."""
    end: str
    time_zone: str
    """An IANA name such as `Europe/Berlin`."""


class Email(msgspec.Struct, frozen=True):
    address: str
    confirmed: bool = False
    """Nothing but the confirmation is sent to an address before its owner confirms it."""
    unsubscribe: str = ""
    """The secret of the one-click unsubscribe link of every e-mail (made when the address is
    confirmed; kept as it is, like a webhook's secret: the workers put it in each e-mail)."""


class Digest(msgspec.Struct, frozen=True):
    """One e-mail a day, at `hour` in `time_zone`, listing the games that await the player,
    instead of an e-mail per turn (`workers.mail.send_digest`)."""

    hour: int = 8
    """0-23: the digest goes at the start of this hour, local time."""
    time_zone: str = "UTC"
    """An IANA name such as `Europe/Berlin`."""


class PushDevice(msgspec.Struct, frozen=True):
    """A browser subscribed to Web Push (`PushSubscription`): where its push service takes
    messages for it, and the keys they are encrypted with. Its endpoint is a capability of
    that browser: kept here, and never served again (the player sees its host)."""

    id: str
    endpoint: str
    p256dh: str
    """The browser's public key, base64url (65 bytes)."""
    auth: str
    """Its authentication secret, base64url (16 bytes)."""
    name: str
    """What the player calls it ("Firefox on Android"), to tell their devices apart."""
    created: str
    """When it subscribed (UTC, ISO 8601)."""
    server_key: str
    """The server's public push key it subscribed with: after a new key, it must subscribe
    again (push services refuse the messages of another key)."""


class Channels(msgspec.Struct, frozen=True):
    webhook: Webhook | None = None
    quiet_hours: QuietHours | None = None
    reminder_hours: tuple[float, ...] = (24.0, 1.0)
    """How long before a turn's deadline the player is reminded, the earliest first."""
    email: Email | None = None
    digest: Digest | None = None
    """A daily digest by e-mail instead of the e-mails of each turn (None: each turn's)."""
    push: tuple[PushDevice, ...] = ()
    """The player's devices subscribed to Web Push (`MAX_PUSH_DEVICES` at most)."""


MAX_PUSH_DEVICES = 10
"""The most devices a player keeps subscribed (a phone, a laptop, a tablet... and spares)."""

Channel = Literal["webhook", "email", "push"]
Status = Literal["delivered", "failed", "refused", "deferred", "disabled", "dropped"]


class Delivery(msgspec.Struct, frozen=True):
    """One attempt to deliver one notification, as the player's log shows it."""

    webhook_id: str
    type: str
    game_id: str
    version: int
    channel: Channel
    time: str
    status: Status
    attempt: int
    detail: str = ""
    """The HTTP status answered, or why it failed, in words."""


_encoder = msgspec.json.Encoder()
_channels = msgspec.json.Decoder(Channels)
_delivery = msgspec.json.Decoder(Delivery)


class NotificationKeys:
    def __init__(self, accounts: Accounts) -> None:
        self.accounts = accounts

    def channels(self, player_id: str) -> str:
        return f"{self.accounts.player(player_id)}:channels"

    def failures(self, player_id: str) -> str:
        """Failed webhook attempts in a row (a counter: the workers race no one on it)."""
        return f"{self.accounts.player(player_id)}:webhook_failures"

    def decided(self, game_id: str) -> str:
        """The version of each seat's last decision in a game (a sorted set, seat by version):
        where "what happened since your last turn" begins."""
        return f"{self.accounts.prefix}:decided:{game_id}"

    def sent(self, webhook_id: str) -> str:
        """Whether a notification went out (`sent`) or is on its way (`sending`)."""
        return f"{self.accounts.prefix}:sent:{webhook_id}"

    def deliveries(self, player_id: str) -> str:
        return f"{self.accounts.player(player_id)}:deliveries"

    def watching(self, game_id: str, player_id: str) -> str:
        """Whether the player has the game's live stream open (a key that expires)."""
        return f"{self.accounts.prefix}:watching:{game_id}:{player_id}"

    def email_token(self, hashed: str) -> str:
        """The player and address a confirmation link's secret stands for (by its hash)."""
        return f"{self.accounts.prefix}:email-confirm:{hashed}"

    def unsubscribe_token(self, hashed: str) -> str:
        """The player an unsubscribe link's secret stands for (by its hash)."""
        return f"{self.accounts.prefix}:unsubscribe:{hashed}"

    def digests(self) -> str:
        """When each player's next daily digest is due (a sorted set of players by seconds
        since the epoch; 0: to be worked out by the workers, from the player's setting)."""
        return f"{self.accounts.prefix}:digests"


def channels_op(keys: NotificationKeys, player_id: str) -> Op[Channels]:
    raw = yield Call("get", (keys.channels(player_id),))
    return Channels() if raw is None else _channels.decode(raw)


def set_channels_op(keys: NotificationKeys, player_id: str, channels: Channels) -> Op[None]:
    yield Call("set", (keys.channels(player_id), _encoder.encode(channels)))


def drop_push_device_op(keys: NotificationKeys, player_id: str, device_id: str) -> Op[bool]:
    """Unsubscribe one of the player's devices; whether they had it."""
    channels = yield from channels_op(keys, player_id)
    kept = tuple(d for d in channels.push if d.id != device_id)
    if len(kept) == len(channels.push):
        return False
    yield from set_channels_op(keys, player_id, msgspec.structs.replace(channels, push=kept))
    return True


def failures_op(keys: NotificationKeys, player_id: str, *, reset: bool = False) -> Op[int]:
    """Count one more failed attempt in a row, or (`reset`) start again from none."""
    if reset:
        yield Call("delete", (keys.failures(player_id),))
        return 0
    return int((yield Call("incr", (keys.failures(player_id),))))


def decided_op(keys: NotificationKeys, game_id: str, seat: int, version: int) -> Op[None]:
    """Note that `seat` decided up to `version` (never moving it back: a job run again late
    leaves a newer version as it is)."""
    yield Call(
        "zadd", (keys.decided(game_id), {str(seat): version}, False, False, False, False, True)
    )  # GT


def last_decided_op(keys: NotificationKeys, game_id: str, seat: int) -> Op[int]:
    """The version of the seat's last decision noted (0: none)."""
    found = yield Call("zscore", (keys.decided(game_id), str(seat)))
    return 0 if found is None else int(found)


SENDING_SECONDS = 30
"""How long a copy of a notification on its way keeps others from sending it: twice what an
attempt can take (5 s to connect, 10 s for the rest), and no longer, for the copy that follows
a crash mid-attempt waits this long (a copy sent twice is one `webhook-id` twice)."""
SENT_SECONDS = 30 * 24 * 3600


def claim_sending_op(keys: NotificationKeys, webhook_id: str) -> Op[str]:
    """Claim the sending of a notification: "claimed", or what holds it ("sent": it went out
    already; "sending": another copy is on its way)."""
    claimed = yield Call("set", (keys.sent(webhook_id), "sending", SENDING_SECONDS, None, True))
    if claimed:
        return "claimed"
    found = yield Call("get", (keys.sent(webhook_id),))
    return "claimed" if found is None else bytes(found).decode()


def settle_sending_op(keys: NotificationKeys, webhook_id: str, *, sent: bool) -> Op[None]:
    """It went out (kept as sent), or it failed (the next attempt may claim it)."""
    if sent:
        yield Call("set", (keys.sent(webhook_id), "sent", SENT_SECONDS))
    else:
        yield Call("delete", (keys.sent(webhook_id),))


def log_delivery_op(keys: NotificationKeys, player_id: str, delivery: Delivery) -> Op[None]:
    yield Call(
        "xadd",
        (keys.deliveries(player_id), {"d": _encoder.encode(delivery)}, "*", DELIVERY_LOG_LENGTH),
    )


def deliveries_op(keys: NotificationKeys, player_id: str, count: int = 50) -> Op[list[Delivery]]:
    """The player's latest deliveries, newest first."""
    found = yield Call("xrevrange", (keys.deliveries(player_id), "+", "-", count))
    return [_delivery.decode(fields[b"d"]) for _entry_id, fields in found]


CONFIRM_SECONDS = 7 * 24 * 3600
"""How long a confirmation link works."""


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def keep_confirmation_op(
    keys: NotificationKeys, token: str, player_id: str, address: str
) -> Op[None]:
    """Keep what a confirmation link's secret stands for, by its hash only, for a week."""
    key = keys.email_token(token_digest(token))
    yield Call("set", (key, f"{player_id} {address}", CONFIRM_SECONDS))


def take_confirmation_op(keys: NotificationKeys, token: str) -> Op[tuple[str, str] | None]:
    """The player and address of a confirmation link, once (the link then works no more)."""
    found = yield Call("getdel", (keys.email_token(token_digest(token)),))
    if found is None:
        return None
    player_id, _, address = bytes(found).decode().partition(" ")
    return player_id, address


def keep_unsubscribe_op(keys: NotificationKeys, token: str, player_id: str) -> Op[None]:
    yield Call("set", (keys.unsubscribe_token(token_digest(token)), player_id))


def unsubscriber_op(keys: NotificationKeys, token: str) -> Op[str | None]:
    """The player whose unsubscribe link this is (None: no such link)."""
    found = yield Call("get", (keys.unsubscribe_token(token_digest(token)),))
    return None if found is None else bytes(found).decode()


WATCHING_SECONDS = 45
"""How long an open stream counts as watching after it last said so (it says so at least
every 15 s, with each event or keep-alive)."""


def mark_watching_op(keys: NotificationKeys, game_id: str, player_id: str) -> Op[None]:
    yield Call("set", (keys.watching(game_id, player_id), "1", WATCHING_SECONDS))


def watching_op(keys: NotificationKeys, game_id: str, player_id: str) -> Op[bool]:
    """Whether the player is watching the game live now (`turn.started` is not sent then)."""
    return bool((yield Call("exists", (keys.watching(game_id, player_id),))))


def schedule_digest_op(
    keys: NotificationKeys, player_id: str, due: float = 0.0, *, xx: bool = False,
    nx: bool = False,
) -> Op[None]:  # fmt: skip
    """Make `due` (seconds since the epoch; 0: to be worked out by the workers) when the
    player's next digest goes; `xx`: only if one is scheduled (not one turned off meanwhile),
    `nx`: only if none is (one lost is put back, one scheduled is kept)."""
    yield Call("zadd", (keys.digests(), {player_id: due}, nx, xx))


def unschedule_digest_op(keys: NotificationKeys, player_id: str) -> Op[None]:
    yield Call("zrem", (keys.digests(), player_id))


def due_digests_op(
    keys: NotificationKeys, now: float, count: int = 100
) -> Op[list[tuple[str, float]]]:
    """The players whose digest is due at `now` (or to be worked out), with when, the
    earliest first."""
    found = yield Call("zrangebyscore", (keys.digests(), "-inf", now, 0, count, True))
    return [(reply_text(player), float(due)) for player, due in found]

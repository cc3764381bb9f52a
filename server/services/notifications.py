"""A player's notification channels, as they set and read them, and their delivery log.

A webhook URL is checked against SSRF when it is set (and again by the workers at every
connection, `outbound.targets`): a player learns at once that a URL cannot be used. Its
signing secret is made here and shown in the answer that set the URL, never again; setting
the same URL again keeps the secret (and turns a webhook that was turned off back on). A daily
digest's schedule is set here too, due "to be worked out" (0): the workers work out its hour
by their clock (`workers.deadlines.fire_digests`).
"""

from __future__ import annotations

import asyncio
import base64
import re
import secrets
from collections.abc import Callable
from functools import cache
from zoneinfo import available_timezones

import msgspec

from outbound.targets import Allowlist, LookupFailed, TargetRefused, checked_url
from server.schema import answers, requests
from server.schema.errors import InvalidSetting
from server.services.push_devices import PushDeviceService
from store.client import AsyncEventStore
from store.notifications import (
    Channels,
    Delivery,
    Digest,
    Email,
    NotificationKeys,
    QuietHours,
    Webhook,
    channels_op,
    deliveries_op,
    failures_op,
    schedule_digest_op,
    set_channels_op,
    take_confirmation_op,
    unschedule_digest_op,
    unsubscriber_op,
)
from store.protocol import Op


class NotificationService:
    def __init__(
        self,
        store: AsyncEventStore,
        keys: NotificationKeys,
        *,
        allow: Allowlist,
        confirm: Callable[[str, str], None],
        devices: PushDeviceService,
        token_bytes: Callable[[int], bytes] = secrets.token_bytes,
    ) -> None:
        self.store = store
        self.keys = keys
        self.allow = allow
        self.confirm = confirm
        """Enqueues the e-mail that asks a player to confirm an address."""
        self.token_bytes = token_bytes
        self.devices = devices
        """The player's devices subscribed to Web Push (shown among the channels)."""

    async def get(self, player: str) -> answers.Notifications:
        return self._info(await self.store.run(channels_op(self.keys, player)), None)

    async def put(
        self, player: str, request: requests.NotificationSettings
    ) -> answers.Notifications:
        """Replace the player's channels (a channel left out is removed)."""
        before = await self.store.run(channels_op(self.keys, player))
        webhook, shown = None, None
        if request.webhook is not None:
            url = request.webhook.url
            same = before.webhook if before.webhook and before.webhook.url == url else None
            # The same URL, and on, was checked when it was set and is at every new
            # connection: the other settings change without a lookup (a passing failure of its
            # name servers refuses nothing else). The same URL turned on again is checked.
            if same is None or same.disabled:
                try:
                    await checked_url(url, self.allow)  # the loop waits for its lookup
                except (TargetRefused, LookupFailed) as refused:
                    raise InvalidSetting("webhook.url", refused.reason) from None
            if same is not None:
                webhook = Webhook(url, same.secret)
            else:
                shown = "whsec_" + base64.b64encode(self.token_bytes(24)).decode()
                webhook = Webhook(url, shown)
        email, confirm = None, False
        if request.email is not None:
            address = check_address(request.email.address)
            if before.email is not None and before.email.address == address:
                email = before.email
            else:
                email, confirm = Email(address), True
        reminders = tuple(sorted(set(request.reminder_hours), reverse=True))
        quiet = _quiet_hours(request.quiet_hours)
        digest = _digest(request.digest, quiet, email)
        channels = Channels(webhook, quiet, reminders, email, digest, before.push)
        await self.store.run(set_channels_op(self.keys, player, channels))
        await self.store.run(failures_op(self.keys, player, reset=True))
        await self.store.run(_schedule(self.keys, player, before.digest, digest))
        if confirm and email is not None:
            await asyncio.to_thread(self.confirm, player, email.address)
        return self._info(channels, shown)

    async def confirm_address(self, token: str) -> bool:
        """Follow a confirmation link: its address is confirmed (False: no such link)."""
        found = await self.store.run(take_confirmation_op(self.keys, token))
        if found is None:
            return False
        player, address = found
        channels = await self.store.run(channels_op(self.keys, player))
        if channels.email is None or channels.email.address != address:
            return False  # the player has set another address since
        confirmed = msgspec.structs.replace(channels.email, confirmed=True)
        await self.store.run(
            set_channels_op(self.keys, player, msgspec.structs.replace(channels, email=confirmed))
        )
        return True

    async def unsubscribe(self, token: str) -> bool:
        """Follow an unsubscribe link: no more e-mails (False: no such link)."""
        player = await self.store.run(unsubscriber_op(self.keys, token))
        if player is None:
            return False
        channels = await self.store.run(channels_op(self.keys, player))
        if channels.email is not None and channels.email.unsubscribe == token:
            off = msgspec.structs.replace(channels, email=None, digest=None)
            await self.store.run(set_channels_op(self.keys, player, off))
            await self.store.run(unschedule_digest_op(self.keys, player))
        return True

    async def deliveries(self, player: str) -> list[Delivery]:
        return await self.store.run(deliveries_op(self.keys, player))

    def _info(self, channels: Channels, secret: str | None) -> answers.Notifications:
        return _info(channels, secret, [self.devices.info(d) for d in channels.push])


_DOMAIN_LABEL = re.compile(r"(?!-)[A-Za-z0-9-]{1,63}(?<!-)")
_LOCAL_PART = re.compile(r"[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]{1,64}")


def check_address(address: str) -> str:
    """An e-mail address as mail servers take it (the dot-atom form, an ASCII domain of at
    least two labels), or `InvalidSetting` naming `email.address`."""
    local, at, domain = address.strip().rpartition("@")
    labels = domain.split(".")
    if (
        not at
        or not _LOCAL_PART.fullmatch(local)
        or local.startswith(".") or local.endswith(".") or ".." in local
        or len(labels) < 2
        or not all(_DOMAIN_LABEL.fullmatch(label) for label in labels)
    ):  # fmt: skip
        raise InvalidSetting("email.address", f"{address!r} is no e-mail address we can use")
    return f"{local}@{domain.lower()}"


def _quiet_hours(setting: requests.QuietHoursSetting | None) -> QuietHours | None:
    if setting is None:
        return None
    # The list of names, not a lookup: ZoneInfo opens a file by the name it is given, and
    # fails in several ways for names that are folders or paths ("Europe").
    if setting.time_zone not in _time_zones():
        raise InvalidSetting(
            "quiet_hours.time_zone", f"{setting.time_zone!r} is no IANA time zone name"
        )
    if setting.start == setting.end:
        raise InvalidSetting("quiet_hours.end", "quiet hours must not start and end together")
    return QuietHours(setting.start, setting.end, setting.time_zone)


def _digest(
    setting: requests.DigestSetting | None, quiet: QuietHours | None, email: Email | None
) -> Digest | None:
    """The daily digest asked for: at an hour of a real time zone (the quiet hours' one if
    none is given, else UTC), to an e-mail address."""
    if setting is None:
        return None
    if email is None:
        raise InvalidSetting("digest", "a digest is an e-mail: set email.address too")
    zone = setting.time_zone
    if zone is None:
        zone = quiet.time_zone if quiet is not None else "UTC"
    elif zone not in _time_zones():
        raise InvalidSetting("digest.time_zone", f"{zone!r} is no IANA time zone name")
    return Digest(setting.hour, zone)


def _schedule(
    keys: NotificationKeys, player: str, before: Digest | None, digest: Digest | None
) -> Op[None]:
    """The digest's schedule after its setting: none when it is off; worked out anew by the
    workers (due 0) when it is new or changed; kept when it is the same (put back if lost)."""
    if digest is None:
        return unschedule_digest_op(keys, player)
    return schedule_digest_op(keys, player, 0.0, nx=digest == before)


@cache
def _time_zones() -> frozenset[str]:
    return frozenset(available_timezones())


def _info(
    channels: Channels, secret: str | None, push: list[answers.PushDeviceInfo]
) -> answers.Notifications:
    hook, quiet, email = channels.webhook, channels.quiet_hours, channels.email
    digest = channels.digest
    return answers.Notifications(
        webhook=None
        if hook is None
        else answers.WebhookInfo(hook.url, not hook.disabled, hook.disabled or None, secret),
        quiet_hours=None
        if quiet is None
        else answers.QuietHoursInfo(quiet.start, quiet.end, quiet.time_zone),
        reminder_hours=list(channels.reminder_hours),
        email=None if email is None else answers.EmailInfo(email.address, email.confirmed),
        digest=None if digest is None else answers.DigestInfo(digest.hour, digest.time_zone),
        push=push,
    )

"""A player's notification channels, as they set and read them, and their delivery log.

A webhook URL is checked against SSRF when it is set (and again by the workers at every
connection, `workers.webhook_target`): a player learns at once that a URL cannot be used. Its
signing secret is made here and shown in the answer that set the URL, never again; setting
the same URL again keeps the secret (and turns a webhook that was turned off back on).
"""

from __future__ import annotations

import asyncio
import base64
import secrets
from collections.abc import Callable
from functools import cache
from zoneinfo import available_timezones

from server import models
from server.errors import InvalidSetting
from store.client import AsyncEventStore
from store.notifications import (
    Channels,
    Delivery,
    NotificationKeys,
    QuietHours,
    Webhook,
    channels_op,
    deliveries_op,
    failures_op,
    set_channels_op,
)
from workers.webhook_target import Allowlist, TargetRefused, check_url


class NotificationService:
    def __init__(
        self,
        store: AsyncEventStore,
        keys: NotificationKeys,
        *,
        allow: Allowlist,
        token_bytes: Callable[[int], bytes] = secrets.token_bytes,
    ) -> None:
        self.store = store
        self.keys = keys
        self.allow = allow
        self.token_bytes = token_bytes

    async def get(self, player: str) -> models.Notifications:
        return _info(await self.store.run(channels_op(self.keys, player)), None)

    async def put(self, player: str, request: models.NotificationSettings) -> models.Notifications:
        """Replace the player's channels (a channel left out is removed)."""
        before = await self.store.run(channels_op(self.keys, player))
        webhook, shown = None, None
        if request.webhook is not None:
            url = request.webhook.url
            try:
                await asyncio.to_thread(check_url, url, self.allow)  # it resolves the name
            except TargetRefused as refused:
                raise InvalidSetting("webhook.url", refused.reason) from None
            if before.webhook is not None and before.webhook.url == url:
                webhook = Webhook(url, before.webhook.secret)
            else:
                shown = "whsec_" + base64.b64encode(self.token_bytes(24)).decode()
                webhook = Webhook(url, shown)
        reminders = tuple(sorted(set(request.reminder_hours), reverse=True))
        channels = Channels(webhook, _quiet_hours(request.quiet_hours), reminders)
        await self.store.run(set_channels_op(self.keys, player, channels))
        await self.store.run(failures_op(self.keys, player, reset=True))
        return _info(channels, shown)

    async def deliveries(self, player: str) -> list[Delivery]:
        return await self.store.run(deliveries_op(self.keys, player))


def _quiet_hours(setting: models.QuietHoursSetting | None) -> QuietHours | None:
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


@cache
def _time_zones() -> frozenset[str]:
    return frozenset(available_timezones())


def _info(channels: Channels, secret: str | None) -> models.Notifications:
    hook, quiet = channels.webhook, channels.quiet_hours
    return models.Notifications(
        webhook=None
        if hook is None
        else models.WebhookInfo(hook.url, not hook.disabled, hook.disabled or None, secret),
        quiet_hours=None
        if quiet is None
        else models.QuietHoursInfo(quiet.start, quiet.end, quiet.time_zone),
        reminder_hours=list(channels.reminder_hours),
    )

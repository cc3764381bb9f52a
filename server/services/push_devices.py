"""A player's devices subscribed to Web Push, as they add, list and remove them, and the
server's public push key they subscribe with.

A push endpoint is a URL a browser chose, which the workers will POST to from inside our
network: it is checked as a webhook's URL is (`outbound.targets`: public addresses only, at
every connection too), and must be https unless the operator allowed its network
(`PATRICIAN_WEBHOOK_ALLOW`, a loopback push service in tests). Its keys must be what a
browser makes (a P-256 point, a 16-byte secret): a message encrypted for anything else could
never be read. The endpoint is a secret of that browser (anyone holding it and our key could
push to it), so it is never served again: a device is shown by its name and its service's
host. A player keeps at most `MAX_PUSH_DEVICES`; the same endpoint again replaces its keys.
"""

from __future__ import annotations

import ipaddress
import secrets
import urllib.parse

import msgspec
from cryptography.hazmat.primitives.asymmetric import ec

from outbound.targets import Allowlist, LookupFailed, TargetRefused, checked_url, parse_target
from outbound.web_push import PushKey, from_b64url, in_push_words
from server.schema import answers, requests
from server.schema.errors import InvalidSetting, NotFound
from store.client import AsyncEventStore
from store.clock import Clock, iso, system_clock
from store.notifications import (
    MAX_PUSH_DEVICES,
    NotificationKeys,
    PushDevice,
    channels_op,
    drop_push_device_op,
    set_channels_op,
)

NAME_WHEN_UNNAMED = "A device"


class PushDeviceService:
    def __init__(
        self,
        store: AsyncEventStore,
        keys: NotificationKeys,
        *,
        allow: Allowlist,
        push_key: PushKey | None,
        clock: Clock = system_clock,
    ) -> None:
        self.store, self.keys, self.allow, self.clock = store, keys, allow, clock
        self.push_key = push_key
        """The server's VAPID key (None: push is off on this server)."""

    def key(self) -> answers.PushKeyInfo:
        return answers.PushKeyInfo(None if self.push_key is None else self.push_key.public_key)

    async def add(
        self, player: str, subscription: requests.PushSubscription
    ) -> answers.PushDeviceInfo:
        """Subscribe a device (the same endpoint again: its keys and name replaced)."""
        if self.push_key is None:
            raise InvalidSetting("push", "Web Push is off on this server (it has no push key)")
        endpoint = await self._checked_endpoint(subscription.endpoint)
        p256dh, auth = _checked_keys(subscription.keys)
        channels = await self.store.run(channels_op(self.keys, player))
        same = [d for d in channels.push if d.endpoint == endpoint]
        others = [d for d in channels.push if d.endpoint != endpoint]
        if not same and len(others) >= MAX_PUSH_DEVICES:
            raise InvalidSetting(
                "push",
                f"at most {MAX_PUSH_DEVICES} devices get your notifications: remove one first",
            )
        device = PushDevice(
            id=same[0].id if same else secrets.token_hex(8),
            endpoint=endpoint,
            p256dh=p256dh,
            auth=auth,
            name=subscription.name.strip() or NAME_WHEN_UNNAMED,
            created=iso(self.clock()),
            server_key=self.push_key.public_key,
        )
        devices = (*others, device)
        changed = msgspec.structs.replace(channels, push=devices)
        await self.store.run(set_channels_op(self.keys, player, changed))
        return self.info(device)

    async def list(self, player: str) -> list[answers.PushDeviceInfo]:
        channels = await self.store.run(channels_op(self.keys, player))
        return [self.info(d) for d in channels.push]

    async def remove(self, player: str, device_id: str) -> None:
        """Unsubscribe a device (`NotFound` if the player has none of that id)."""
        if not await self.store.run(drop_push_device_op(self.keys, player, device_id)):
            raise NotFound(f"you have no push device {device_id!r}")

    def info(self, device: PushDevice) -> answers.PushDeviceInfo:
        host = urllib.parse.urlsplit(device.endpoint).hostname or ""
        current = self.push_key is not None and device.server_key == self.push_key.public_key
        return answers.PushDeviceInfo(device.id, device.name, host, device.created, current)

    async def _checked_endpoint(self, endpoint: str) -> str:
        try:
            target = parse_target(endpoint)
            if target.scheme != "https" and not _allowed_literal(target.host, self.allow):
                raise TargetRefused("This browser's push address is not an https URL.")
            await checked_url(endpoint, self.allow)  # the loop waits for its lookup
        except (TargetRefused, LookupFailed) as refused:
            raise InvalidSetting("push.endpoint", in_push_words(refused.reason)) from None
        return endpoint


def _allowed_literal(host: str, allow: Allowlist) -> bool:
    """Whether `host` is an address the operator allowed (plain http is for those only)."""
    try:
        return allow.allows(ipaddress.ip_address(host.strip("[]")))
    except ValueError:
        return False


def _checked_keys(keys: requests.PushKeys) -> tuple[str, str]:
    """The browser's keys as they are, if they are what a browser makes."""
    try:
        point = from_b64url(keys.p256dh)
        ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), point)
    except ValueError:
        point = b""
    if len(point) != 65:
        raise InvalidSetting(
            "push.keys.p256dh", "not a P-256 public key (65 bytes, base64url) as browsers make"
        )
    try:
        auth = from_b64url(keys.auth)
    except ValueError:
        auth = b""
    if len(auth) != 16:
        raise InvalidSetting("push.keys.auth", "not a 16-byte secret (base64url) as browsers make")
    return keys.p256dh.rstrip("="), keys.auth.rstrip("=")

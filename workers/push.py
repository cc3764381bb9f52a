"""Web Push: the delivery job that sends one notification to each of the player's devices
subscribed to it (`store.notifications.PushDevice`), encrypted for that device and signed with
the server's VAPID key (`outbound.web_push`), through the webhooks' sender (every address
checked against SSRF as it connects).

`deliver_push(player_id, game_id, version, kind, seat, ...)` is enqueued by whoever tells a
player something (`workers.telling`), under the notification's one id on this channel
(`...-push`), as a webhook's and an e-mail's are. What it shares with them is in
`workers.delivery_attempts`: the delivery log (one entry per attempt, telling every
device's outcome), a turn's notification dropped while the player watches the game live, quiet
hours that put it off until they end. Each device's copy is claimed on its own
(`<id>.<device>`), so an attempt made again after one device failed sends to that device
alone. A push service's 404 or 410 says the subscription is gone: the device is removed; a
device that subscribed with an earlier key of the server is removed too (it could receive
nothing), and its page subscribes again when next opened. A 429, a 5xx or a network failure
makes the attempt fail: RQ tries again later (`workers.retries.DELIVERY_RETRY`).

The message (`projections.push_messages`) names the game by its players and says what is
asked; `TTL` keeps it a week at the push service for a device that is off; `Urgency` is high
for the player's turn; `Topic`, one per game, lets a newer message of the game replace an
older one the device has not received yet.
"""

from __future__ import annotations

import urllib.parse
from typing import cast

import msgspec

from domain.narrate import seat_names
from outbound.targets import DeliveryFailed, LookupBusy, TargetRefused
from outbound.web_push import PushKey, encrypted, from_b64url, in_push_words, topic_of
from projections.mail import Reader
from projections.notices import Kind, Notice
from projections.push_messages import message_of
from store.notifications import PushDevice, channels_op, drop_push_device_op, settle_sending_op
from workers.context import WorkerContext, current
from workers.delivery_attempts import (
    DEFERRED,
    NotDelivered,
    after_quiet_hours,
    attempt_log,
    claim_sending,
    watched,
)
from workers.notice_documents import document_and_state
from workers.retries import DELIVERY_RETRY

TTL_SECONDS = 7 * 86400
"""How long a push service keeps a message for a device that is off (a turn waits days)."""
URGENT = ("turn.started", "turn.reminder", "turn.timed_out")
"""The notifications sent with `Urgency: high` (the player's turn); the others, normal."""
GONE = (404, 410)
"""A push service's answers for a subscription that is no more."""
USER_AGENT = "patrician-push/1"


def deliver_push(
    player_id: str, game_id: str, version: int, kind: str, seat: int | None, *,
    about: int | None = None, deferred: bool = False,
) -> str:  # fmt: skip
    """Send one notification to the player's devices (see the module); what became of it."""
    context = current()
    log = attempt_log(context, player_id, kind, game_id, version, channel="push")
    notice_id = log.attempt.webhook_id
    key = context.push_key
    channels = context.store.run(channels_op(context.notifications, player_id))
    if key is None or not channels.push:
        return "no device on" if key is not None else "push is off"
    if watched(context, player_id, game_id, kind):
        return log.write("dropped", "you were watching the game live")
    now = context.clock()
    later = None if deferred else after_quiet_hours(channels.quiet_hours, now)
    if later is not None:
        context.queue.enqueue_at(
            later, deliver_push, player_id, game_id, version, kind, seat, about=about,
            deferred=True, job_id=notice_id + DEFERRED, retry=DELIVERY_RETRY,
        )  # fmt: skip
        return log.write("deferred", f"quiet hours: to be sent at {later.isoformat()}")
    target = Notice(player_id, seat, cast(Kind, kind), about)
    document, state = document_and_state(context, target, game_id, version)
    message = message_of(document, seat_names(state), Reader.of(channels, now))
    body = msgspec.json.encode(message)
    headers = {
        "content-encoding": "aes128gcm",
        "content-type": "application/octet-stream",
        "ttl": str(TTL_SECONDS),
        "urgency": "high" if kind in URGENT else "normal",
        "topic": topic_of(game_id),
        "user-agent": USER_AGENT,
    }
    said = [
        _send(context, key, player_id, notice_id, d, message=body, headers=headers)
        for d in channels.push
    ]
    outcomes = [outcome for outcome, _ in said]
    detail = "; ".join(words for _, words in said)
    if "failed" in outcomes:
        log.write("failed", detail)
        raise NotDelivered(f"{notice_id}: {detail}")
    if "delivered" in outcomes:
        return log.write("delivered", detail)
    if "refused" in outcomes:
        return log.write("refused", detail)
    return "sent already"


def _send(
    context: WorkerContext, key: PushKey, player_id: str, notice_id: str, device: PushDevice,
    *, message: bytes, headers: dict[str, str],
) -> tuple[str, str]:  # fmt: skip
    """The message to one device: its outcome (delivered, failed, refused, sent) and the
    words of the delivery log, which name the device and its service's host, never its
    endpoint."""
    host = urllib.parse.urlsplit(device.endpoint).hostname or "?"
    said = f"{device.name} ({host})"
    if device.server_key != key.public_key:
        context.store.run(drop_push_device_op(context.notifications, player_id, device.id))
        return "refused", f"{said}: subscribed with an earlier key of the server, removed"
    copy_id = f"{notice_id}.{device.id}"
    if not claim_sending(context, copy_id):
        return "sent", f"{said}: sent already"
    keys = context.notifications
    try:
        body = encrypted(message, from_b64url(device.p256dh), from_b64url(device.auth))
        token = key.authorization(device.endpoint, context.push_contact, context.clock())
        signed = {**headers, "authorization": token}
        answer = context.webhooks.post(device.endpoint, body, signed)
    except (TargetRefused, ValueError) as refused:  # its name points elsewhere now
        reason = refused.reason if isinstance(refused, TargetRefused) else str(refused)
        context.store.gather(
            settle_sending_op(keys, copy_id, sent=False),
            drop_push_device_op(keys, player_id, device.id),
        )
        return "refused", f"{said}: {in_push_words(reason).rstrip('.')}; removed"
    except (LookupBusy, DeliveryFailed) as failed:
        context.store.run(settle_sending_op(keys, copy_id, sent=False))
        return "failed", f"{said}: {failed.reason}"
    except BaseException:
        context.store.run(settle_sending_op(keys, copy_id, sent=False))
        raise
    if answer.ok:
        context.store.run(settle_sending_op(keys, copy_id, sent=True))
        return "delivered", f"{said}: HTTP {answer.status}"
    context.store.run(settle_sending_op(keys, copy_id, sent=False))
    if answer.status in GONE:
        context.store.run(drop_push_device_op(keys, player_id, device.id))
        return "refused", f"{said}: HTTP {answer.status}, the subscription is gone; removed"
    if answer.status == 429 or answer.status >= 500:
        return "failed", f"{said}: HTTP {answer.status}"
    return "refused", f"{said}: HTTP {answer.status}"

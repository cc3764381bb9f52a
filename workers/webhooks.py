"""The delivery job of a webhook: one notification, signed by Standard Webhooks, sent once per
attempt to the player's URL (checked against SSRF again at connect time), and logged.

`deliver(player_id, game_id, version, kind, seat)` is enqueued by whoever tells a player
something (`workers.telling`), with an id that names the notification; that id is also its
`webhook-id`, so every attempt and every copy (a job run again after a crash) carries one id
and the receiver can drop repeats. The follow-up of an append (`workers.follow_up`) makes the
first attempt itself (`send_first`), and only a failed one becomes a `deliver` job under that
id. An attempt that fails raises, and RQ tries again later (`workers.retries.DELIVERY_RETRY`);
after `DISABLE_AFTER` failed attempts in a row the webhook is turned off, with the reason in
the player's channels and delivery log. What an attempt on either channel shares (its delivery
log, the sending claim, quiet hours) is in `workers.delivery_attempts`; the document it posts
is made by `workers.notice_documents`.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, cast

import msgspec
from standardwebhooks.webhooks import Webhook as Signer

from outbound.targets import DeliveryFailed, LookupBusy, TargetRefused
from projections.notices import Kind, Notice, encode
from store.clock import iso
from store.notifications import (
    Channels,
    channels_op,
    claim_sending_op,
    failures_op,
    last_decided_op,
    set_channels_op,
    settle_sending_op,
    watching_op,
)
from store.protocol import Op
from workers.context import WorkerContext, current
from workers.delivery_attempts import (
    DEFERRED,
    DeliveryLog,
    NotDelivered,
    after_quiet_hours,
    attempt_log,
    delivery_entry,
)
from workers.notice_documents import document_of
from workers.retries import DELIVERY_RETRY, LATER_RETRY

FIRST_ATTEMPT_SECONDS = (2.0, 3.0)
"""The connect and read time-outs of the first attempt, made at once by the follow-up: a
receiver slower than that holds up the notices behind it no longer, and gets the
notification from the delivery job, with the time-outs of every later attempt (5 s, 10 s)."""
DISABLE_AFTER = 10
"""Failed attempts in a row after which a webhook is turned off."""
USER_AGENT = "patrician-webhooks/1"
WEBHOOK_DISABLED = "workers.mail.webhook_disabled"


def deliver(
    player_id: str, game_id: str, version: int, kind: str, seat: int | None, *,
    about: int | None = None, deferred: bool = False, tried: int = 0,
) -> str:  # fmt: skip
    """The delivery job: one attempt at one notification (see the module); what became of it.
    `deferred`: sent again after the player's quiet hours (under the same `webhook-id`);
    `tried`: the attempts made before this job (the first one, by `send_first`)."""
    context = current()
    log = attempt_log(context, player_id, kind, game_id, version, channel="webhook", tried=tried)
    what = (player_id, game_id, version, kind, seat, about)
    return _attempt(context, log, what, deferred=deferred)


def send_first(
    context: WorkerContext, notice_id: str, game_id: str, version: int, n: Notice, *,
    channels: Channels,
) -> str:  # fmt: skip
    """The first attempt at a notification, made at once by the job that decided it (with
    the recipient's channels it read) rather than by a job of its own, which costs RQ a dozen
    round trips to Redis; a failed one leaves the others to the delivery job, `notice_id`,
    from the second attempt on."""
    log = DeliveryLog(context, n.player_id, delivery_entry(notice_id, n.kind, game_id, version, 1))
    what = (n.player_id, game_id, version, n.kind, n.seat, n.about)
    try:
        return _attempt(
            context, log, what, deferred=False, channels=channels, timeouts=FIRST_ATTEMPT_SECONDS
        )
    except NotDelivered:
        context.queue.enqueue_in(
            timedelta(seconds=DELIVERY_RETRY.intervals[0]), deliver, *what[:5], about=n.about,
            tried=1, job_id=notice_id, retry=LATER_RETRY,
        )  # fmt: skip
        return "failed"


def _attempt(
    context: WorkerContext,
    log: DeliveryLog,
    what: tuple[str, str, int, str, int | None, int | None],
    *,
    deferred: bool,
    channels: Channels | None = None,
    timeouts: tuple[float, float] = (5.0, 10.0),
) -> str:
    """An attempt at the notification `what`: sent, or deferred, dropped...; `channels`, the
    recipient's if read already; `timeouts`, to connect and for the rest."""
    player_id, game_id, version, kind, seat, about = what
    webhook_id = log.attempt.webhook_id
    if channels is None:
        channels = context.store.run(channels_op(context.notifications, player_id))
    hook = channels.webhook
    if hook is None or hook.disabled:
        return "no webhook on"
    keys = context.notifications
    held, watching, since = context.store.gather(  # one round trip
        claim_sending_op(keys, webhook_id),
        watching_op(keys, game_id, player_id) if kind == "turn.started" else _nothing(),
        last_decided_op(keys, game_id, seat) if seat is not None else _nothing(),
    )
    if held == "sending":
        raise NotDelivered(f"{webhook_id}: another copy is being sent")
    if held == "sent":
        return "sent already"
    if watching:  # a turn's notification is moot then
        released = settle_sending_op(keys, webhook_id, sent=False)
        return log.write("dropped", "you were watching the game live", released)
    now = context.clock()
    later = None if deferred else after_quiet_hours(channels.quiet_hours, now)
    if later is not None:
        context.queue.enqueue_at(
            later, deliver, player_id, game_id, version, kind, seat, about=about, deferred=True,
            job_id=webhook_id + DEFERRED, retry=DELIVERY_RETRY,
        )  # fmt: skip
        released = settle_sending_op(keys, webhook_id, sent=False)
        return log.write("deferred", f"quiet hours: to be sent at {iso(later)}", released)
    try:
        return _send(context, log, channels, now, what, since=since or 0, timeouts=timeouts)
    except BaseException:
        context.store.run(settle_sending_op(keys, webhook_id, sent=False))
        raise


def _nothing() -> Op[Any]:
    """An operation that asks nothing (None)."""
    yield from ()


def _send(
    context: WorkerContext,
    log: DeliveryLog,
    channels: Channels,
    now: datetime,
    what: tuple[str, str, int, str, int | None, int | None],
    *,
    since: int,
    timeouts: tuple[float, float],
) -> str:
    """One attempt, the sending claimed; its outcome, or `NotDelivered` to try again.
    `since`: the version of the recipient's last decision."""
    player_id, game_id, version, kind, seat, about = what
    webhook_id = log.attempt.webhook_id
    hook = channels.webhook
    assert hook is not None
    body = encode(
        document_of(
            context, Notice(player_id, seat, cast(Kind, kind), about), game_id, version, since
        )
    )
    headers = {
        "content-type": "application/json",
        "user-agent": USER_AGENT,
        "webhook-id": webhook_id,
        "webhook-timestamp": str(int(now.timestamp())),
        "webhook-signature": Signer(hook.secret).sign(webhook_id, now, body.decode()),
    }
    try:
        connect, read = timeouts
        answer = context.webhooks.post(
            hook.url, body, headers, connect_timeout=connect, read_timeout=read
        )
    except TargetRefused as refused:  # its name points elsewhere now: no use trying again
        _failed(context, player_id, channels, refused.reason)
        context.store.run(settle_sending_op(context.notifications, webhook_id, sent=False))
        return log.write("refused", refused.reason)
    except LookupBusy as busy:  # this server's lookups were all taken: not the receiver's failing
        log.write("failed", busy.reason)
        raise NotDelivered(f"{hook.url}: {busy.reason}") from None
    except DeliveryFailed as failed:
        detail = failed.reason
    else:
        if answer.ok:
            return log.write(
                "delivered", f"HTTP {answer.status}",
                settle_sending_op(context.notifications, webhook_id, sent=True),
                failures_op(context.notifications, player_id, reset=True),
            )  # fmt: skip
        detail = f"HTTP {answer.status}"
    if _failed(context, player_id, channels, detail):
        context.store.run(settle_sending_op(context.notifications, webhook_id, sent=False))
        return log.write("disabled", detail)
    log.write("failed", detail)
    raise NotDelivered(f"{hook.url}: {detail}")


def _failed(context: WorkerContext, player_id: str, channels: Channels, detail: str) -> bool:
    """Count a failed attempt; turn the webhook off after too many in a row (True then)."""
    failures = context.store.run(failures_op(context.notifications, player_id))
    hook = channels.webhook
    if failures < DISABLE_AFTER or hook is None:
        return False
    reason = f"turned off after {failures} failed attempts in a row (last: {detail})"
    off = msgspec.structs.replace(channels, webhook=type(hook)(hook.url, hook.secret, reason))
    context.store.run(set_channels_op(context.notifications, player_id, off))
    context.queue.enqueue(
        WEBHOOK_DISABLED, player_id, reason, job_id=f"webhook-disabled-{failures}-{player_id}",
        retry=DELIVERY_RETRY,
    )  # fmt: skip
    return True

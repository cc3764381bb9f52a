"""The delivery job of a webhook: one notification, signed by Standard Webhooks, sent once per
attempt to the player's URL (checked against SSRF again at connect time), and logged.

`deliver(player_id, game_id, version, kind, seat)` is enqueued by `workers.jobs.game_moved`
with an id that names the notification; that id is also its `webhook-id`, so every attempt and
every copy (a job run again after a crash) carries one id and the receiver can drop repeats.
An attempt that fails raises, and RQ tries again later (`workers.retries.DELIVERY_RETRY`);
after `DISABLE_AFTER` failed attempts in a row the webhook is turned off, with the reason in
the player's channels and delivery log.
"""

from __future__ import annotations

from datetime import datetime, time, timedelta
from typing import cast
from zoneinfo import ZoneInfo

import msgspec
from rq import get_current_job
from standardwebhooks.webhooks import Webhook as Signer

from domain.events import event_decoder
from domain.evolve import fold
from domain.state import State
from projections.notices import Kind, Notice, NoticeDocument, encode, notice
from store.clock import iso
from store.notifications import (
    Channel,
    Channels,
    Delivery,
    QuietHours,
    Status,
    channels_op,
    claim_sending_op,
    failures_op,
    last_decided_op,
    log_delivery_op,
    set_channels_op,
    settle_sending_op,
    watching_op,
)
from store.reads import batches_op, current_op, hash_at_op, log_op, read_op
from store.records import meta_decoder
from store.talk import KEPT, TalkMessage, thread_op
from workers.context import WorkerContext, current
from workers.deadlines import clock_of
from workers.retries import DELIVERY_RETRY
from workers.webhook_target import DeliveryFailed, TargetRefused, post

DISABLE_AFTER = 10
"""Failed attempts in a row after which a webhook is turned off."""
USER_AGENT = "patrician-webhooks/1"
WEBHOOK_DISABLED = "workers.mail.webhook_disabled"
DEFERRED = "-q"
"""The suffix of the job id of a notification held back by quiet hours."""
GRACED = "-g"
"""The suffix of the job id of an e-mail that waited its grace period."""


class NotDelivered(RuntimeError):
    """An attempt failed: RQ tries again later."""


def deliver(
    player_id: str, game_id: str, version: int, kind: str, seat: int | None, *,
    about: int | None = None, deferred: bool = False,
) -> str:  # fmt: skip
    """Send one notification (see the module); what became of it. `deferred`: sent again
    after the player's quiet hours (under the same `webhook-id`)."""
    context = current()
    log = attempt_log(context, player_id, kind, game_id, version, channel="webhook")
    webhook_id = log.attempt.webhook_id
    channels = context.store.run(channels_op(context.notifications, player_id))
    hook = channels.webhook
    if hook is None or hook.disabled:
        return "no webhook on"
    if watched(context, player_id, game_id, kind):
        return log.write("dropped", "you were watching the game live")
    now = context.clock()
    later = None if deferred else after_quiet_hours(channels.quiet_hours, now)
    if later is not None:
        context.queue.enqueue_at(
            later, deliver, player_id, game_id, version, kind, seat, about=about, deferred=True,
            job_id=webhook_id + DEFERRED, retry=DELIVERY_RETRY,
        )  # fmt: skip
        return log.write("deferred", f"quiet hours: to be sent at {iso(later)}")
    if not claim_sending(context, webhook_id):
        return "sent already"
    try:
        what = (player_id, game_id, version, kind, seat, about)
        return _send(context, log, channels, now, what)
    except BaseException:
        context.store.run(settle_sending_op(context.notifications, webhook_id, sent=False))
        raise


def _send(
    context: WorkerContext,
    log: DeliveryLog,
    channels: Channels,
    now: datetime,
    what: tuple[str, str, int, str, int | None, int | None],
) -> str:
    """One attempt, the sending claimed; its outcome, or `NotDelivered` to try again."""
    player_id, game_id, version, kind, seat, about = what
    webhook_id = log.attempt.webhook_id
    hook = channels.webhook
    assert hook is not None
    body = encode(
        document_of(context, Notice(player_id, seat, cast(Kind, kind), about), game_id, version)
    )
    headers = {
        "content-type": "application/json",
        "user-agent": USER_AGENT,
        "webhook-id": webhook_id,
        "webhook-timestamp": str(int(now.timestamp())),
        "webhook-signature": Signer(hook.secret).sign(webhook_id, now, body.decode()),
    }
    try:
        answer = post(hook.url, body, headers, context.webhook_allow)
    except TargetRefused as refused:  # its name points elsewhere now: no use trying again
        _failed(context, player_id, channels, refused.reason)
        context.store.run(settle_sending_op(context.notifications, webhook_id, sent=False))
        return log.write("refused", refused.reason)
    except DeliveryFailed as failed:
        detail = failed.reason
    else:
        if answer.ok:
            context.store.run(settle_sending_op(context.notifications, webhook_id, sent=True))
            context.store.run(failures_op(context.notifications, player_id, reset=True))
            return log.write("delivered", f"HTTP {answer.status}")
        detail = f"HTTP {answer.status}"
    if _failed(context, player_id, channels, detail):
        context.store.run(settle_sending_op(context.notifications, webhook_id, sent=False))
        return log.write("disabled", detail)
    log.write("failed", detail)
    raise NotDelivered(f"{hook.url}: {detail}")


def attempt_log(
    context: WorkerContext, player_id: str, kind: str, game_id: str, version: int, *,
    channel: Channel,
) -> DeliveryLog:  # fmt: skip
    """The delivery log of this attempt of a delivery job, under the notification's one id:
    the job's, less the suffix of a wait (quiet hours, a grace period)."""
    job = get_current_job()
    if job is None:
        return DeliveryLog(context, player_id, Delivery(
            f"{kind}-{version}", kind, game_id, version, channel, "", "failed", 1
        ))  # fmt: skip
    notice_id = job.id.removesuffix(DEFERRED).removesuffix(GRACED)
    left = job.retries_left
    number = 1 if left is None else DELIVERY_RETRY.max - left + 1
    delivery = Delivery(notice_id, kind, game_id, version, channel, "", "failed", number)
    return DeliveryLog(context, player_id, delivery)


def claim_sending(context: WorkerContext, notice_id: str) -> bool:
    """Claim the sending of a notification: False if a copy of its job (its notice handled
    twice) sent it already; `NotDelivered` (try again later) while another copy is on its
    way, to see then whether it went out."""
    held = context.store.run(claim_sending_op(context.notifications, notice_id))
    if held == "sending":
        raise NotDelivered(f"{notice_id}: another copy is being sent")
    return held != "sent"


def watched(context: WorkerContext, player_id: str, game_id: str, kind: str) -> bool:
    """Whether a turn's notification is moot: its player watches the game live."""
    if kind != "turn.started":
        return False
    return context.store.run(watching_op(context.notifications, game_id, player_id))


class DeliveryLog:
    """The player's delivery log, for one attempt."""

    def __init__(self, context: WorkerContext, player_id: str, attempt: Delivery) -> None:
        self.context, self.player_id, self.attempt = context, player_id, attempt

    def write(self, status: Status, detail: str) -> str:
        entry = msgspec.structs.replace(
            self.attempt, time=iso(self.context.clock()), status=status, detail=detail
        )
        self.context.store.run(log_delivery_op(self.context.notifications, self.player_id, entry))
        return status


def document_of(
    context: WorkerContext, target: Notice, game_id: str, version: int
) -> NoticeDocument:
    """The document of the notification, as the recipient's seat may see the game at
    `version`: what happened since that seat last decided (`workers.jobs` notes when)."""
    run = context.store.run
    since = 0
    if target.seat is not None:
        since = min(run(last_decided_op(context.notifications, game_id, target.seat)), version)
    head = run(current_op(context.path, game_id))
    stored = run(read_op(context.path, game_id, since, version))
    events = [event_decoder.decode(item.data) for item in stored]
    if head.version == version:
        state = head
    else:  # the game moved on (a table event announced late): the state it describes
        state = fold(event for _v, event, _d, _h in run(log_op(context.path, game_id))[:version])
    acted, since_time = _acted(context, game_id, since, version)
    return notice(
        state,
        events,
        target,
        game_id=game_id,
        head_hash=stored[-1].hash if stored else run(hash_at_op(context.path, game_id, version)),
        since_version=since,
        play_url=f"{context.public_url}/games/{game_id}",
        deadline=_deadline(context, game_id, state, target.seat),
        acted=acted,
        talk=_talk(context, game_id, target, since_time),
    )


def _acted(
    context: WorkerContext, game_id: str, since: int, version: int
) -> tuple[dict[int, tuple[int, str]], str]:
    """The appends after `since` up to `version` that a bot or the clock made for a seat;
    and when the append that took `since` was made ("" for none)."""
    acted, since_time = {}, ""
    for batch in context.store.run(batches_op(context.path, game_id)):
        meta = meta_decoder.decode(batch.metadata)
        if batch.first_version <= since <= batch.last_version:
            since_time = meta.time
        if since < batch.first_version <= version and meta.by and meta.seat is not None:
            acted[batch.first_version] = (meta.seat, meta.by)
    return acted, since_time


TALK_IN_NOTICE = 20
"""The newest messages of table talk a notification carries."""


def _talk(
    context: WorkerContext, game_id: str, target: Notice, since_time: str
) -> list[TalkMessage]:
    """The table talk since the recipient's last decision, but their own (the newest)."""
    said = context.store.run(thread_op(context.accounts.prefix, game_id, count=KEPT))
    new = [m for m in said if m.time > since_time and m.seat != target.seat]
    return new[-TALK_IN_NOTICE:]


def _deadline(context: WorkerContext, game_id: str, state: State, seat: int | None) -> str | None:
    """In a timed game, the deadline of the recipient's turn, if it is theirs now."""
    clock = clock_of(context, game_id, state)
    return clock.deadline if clock is not None and clock.running == seat else None


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


def after_quiet_hours(quiet: QuietHours | None, now: datetime) -> datetime | None:
    """When the player's quiet hours end, if `now` lies in them (None otherwise)."""
    if quiet is None:
        return None
    local = now.astimezone(ZoneInfo(quiet.time_zone))
    start, end = time.fromisoformat(quiet.start), time.fromisoformat(quiet.end)
    here = local.time()
    inside = start <= here < end if start <= end else here >= start or here < end
    if not inside:
        return None
    ends = local.replace(hour=end.hour, minute=end.minute, second=0, microsecond=0)
    if ends <= local:
        ends += timedelta(days=1)
    return ends

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
from typing import Any, cast
from zoneinfo import ZoneInfo

import msgspec
import structlog
from rq import get_current_job
from standardwebhooks.webhooks import Webhook as Signer

from domain.events import event_decoder
from domain.evolve import fold
from outbound.targets import DeliveryFailed, LookupBusy, TargetRefused
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
from store.protocol import Op
from store.reads import batches_around_op, current_op, hash_at_op, log_op, read_op
from store.records import Batch, meta_decoder
from store.talk import KEPT, thread_op
from store.time_controls import time_control_op
from workers.context import WorkerContext, current
from workers.game_clocks import clock_under
from workers.metrics import DELIVERIES
from workers.retries import DELIVERY_RETRY, LATER_RETRY

DISABLE_AFTER = 10
"""Failed attempts in a row after which a webhook is turned off."""
USER_AGENT = "patrician-webhooks/1"
WEBHOOK_DISABLED = "workers.mail.webhook_disabled"
DEFERRED = "-q"
"""The suffix of the job id of a notification held back by quiet hours."""
GRACED = "-g"
"""The suffix of the job id of an e-mail that waited its grace period."""

_logger = structlog.get_logger("patrician.workers")
"""(Not `log`: here that names the delivery log of an attempt.)"""


class NotDelivered(RuntimeError):
    """An attempt failed: RQ tries again later."""


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
    log = DeliveryLog(context, n.player_id, _delivery(notice_id, n.kind, game_id, version, 1))
    what = (n.player_id, game_id, version, n.kind, n.seat, n.about)
    try:
        return _attempt(context, log, what, deferred=False, channels=channels)
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
) -> str:
    """An attempt at the notification `what`: sent, or deferred, dropped...; `channels`, the
    recipient's if read already."""
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
        return _send(context, log, channels, now, what, since=since or 0)
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
        answer = context.webhooks.post(hook.url, body, headers)
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


def attempt_log(
    context: WorkerContext, player_id: str, kind: str, game_id: str, version: int, *,
    channel: Channel, tried: int = 0,
) -> DeliveryLog:  # fmt: skip
    """The delivery log of this attempt of a delivery job, under the notification's one id:
    the job's, less the suffix of a wait (quiet hours, a grace period). `tried`: the attempts
    made before the job."""
    job = get_current_job()
    if job is None:
        return DeliveryLog(context, player_id, _delivery(
            f"{kind}-{version}", kind, game_id, version, tried + 1, channel=channel
        ))  # fmt: skip
    notice_id = job.id.removesuffix(DEFERRED).removesuffix(GRACED)
    left = job.retries_left  # of the retries it was given: all but those made before it
    made = 0 if left is None else DELIVERY_RETRY.max - tried - left
    number = tried + made + 1
    return DeliveryLog(
        context, player_id, _delivery(notice_id, kind, game_id, version, number, channel=channel)
    )


def _delivery(
    notice_id: str, kind: str, game_id: str, version: int, number: int, *,
    channel: Channel = "webhook",
) -> Delivery:  # fmt: skip
    return Delivery(notice_id, kind, game_id, version, channel, "", "failed", number)


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

    def write(self, status: Status, detail: str, *along: Op[Any]) -> str:
        """Log the attempt's outcome; `along`, operations carried out with it (in one round
        trip)."""
        entry = msgspec.structs.replace(
            self.attempt, time=iso(self.context.clock()), status=status, detail=detail
        )
        keys = self.context.notifications
        self.context.store.gather(log_delivery_op(keys, self.player_id, entry), *along)
        DELIVERIES.labels(entry.channel, status).inc()
        # the job's request id is bound to the line (`workers.tracing`); never the address
        _logger.info(
            "delivery", channel=entry.channel, status=status, type=entry.type,
            game_id=entry.game_id, version=entry.version, attempt=entry.attempt,
            notice_id=entry.webhook_id,
        )  # fmt: skip
        return status


def document_of(
    context: WorkerContext, target: Notice, game_id: str, version: int, since: int | None = None
) -> NoticeDocument:
    """The document of the notification, as the recipient's seat may see the game at
    `version`: what happened since that seat last decided (`workers.jobs` notes when; `since`,
    that version if read already)."""
    run = context.store.run
    if since is None:
        since = 0
        if target.seat is not None:
            since = run(last_decided_op(context.notifications, game_id, target.seat))
    since = min(since, version)
    head, stored, batches, said, control = context.store.gather(
        current_op(context.path, game_id),
        read_op(context.path, game_id, since, version),
        batches_around_op(context.path, game_id, since, version),
        thread_op(context.accounts.prefix, game_id, count=KEPT),
        time_control_op(context.accounts.prefix, game_id),
    )
    events = [event_decoder.decode(item.data) for item in stored]
    if head.version == version:
        state = head
    else:  # the game moved on (a table event announced late): the state it describes
        state = fold(event for _v, event, _d, _h in run(log_op(context.path, game_id))[:version])
    acted, since_time = _acted(batches, since, version)
    clock = clock_under(context, game_id, state, control)
    new_talk = [m for m in said if m.time > since_time and m.seat != target.seat]
    head_hash = stored[-1].hash if stored else run(hash_at_op(context.path, game_id, version))
    ending = next((b for b in batches if b.last_version == version), None)
    receipt = None
    if ending is not None:  # the receipt of the append that brought the game to `version`
        accepted = meta_decoder.decode(ending.metadata).time
        receipt = context.signer.receipt(game_id, version, head_hash, accepted)
    return notice(
        state,
        events,
        target,
        game_id=game_id,
        head_hash=head_hash,
        receipt=receipt,
        since_version=since,
        play_url=f"{context.public_url}/games/{game_id}",
        deadline=clock.deadline if clock is not None and clock.running == target.seat else None,
        acted=acted,
        talk=new_talk[-TALK_IN_NOTICE:],  # the newest, the recipient's own left out
    )


def _acted(
    batches: list[Batch], since: int, version: int
) -> tuple[dict[int, tuple[int, str]], str]:
    """The appends after `since` up to `version` that a bot or the clock made for a seat;
    and when the append that took `since` was made ("" for none)."""
    acted, since_time = {}, ""
    for batch in batches:
        meta = meta_decoder.decode(batch.metadata)
        if batch.first_version <= since <= batch.last_version:
            since_time = meta.time
        if since < batch.first_version <= version and meta.by and meta.seat is not None:
            acted[batch.first_version] = (meta.seat, meta.by)
    return acted, since_time


TALK_IN_NOTICE = 20
"""The newest messages of table talk a notification carries."""


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

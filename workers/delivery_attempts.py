"""What every delivery attempt of a notification shares, whatever its channel (a webhook,
an e-mail): its entry in the player's delivery log (`DeliveryLog`, under the notification's
one id, numbered by the attempts made), the sending claim that lets one copy of a
notification out, the checks that make one moot or put it off (the player watches the game
live; their quiet hours), and `NotDelivered`, the failure after which RQ tries again."""

from __future__ import annotations

from datetime import datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import msgspec
import structlog
from rq import get_current_job

from store.clock import iso
from store.notifications import (
    Channel,
    Delivery,
    QuietHours,
    Status,
    claim_sending_op,
    log_delivery_op,
    watching_op,
)
from store.protocol import Op
from workers.context import WorkerContext
from workers.metrics import DELIVERIES
from workers.retries import DELIVERY_RETRY

DEFERRED = "-q"
"""The suffix of the job id of a notification held back by quiet hours."""
GRACED = "-g"
"""The suffix of the job id of an e-mail that waited its grace period."""

_logger = structlog.get_logger("patrician.workers")
"""(Not `log`: here that names the delivery log of an attempt.)"""


class NotDelivered(RuntimeError):
    """An attempt failed: RQ tries again later."""


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


def attempt_log(
    context: WorkerContext, player_id: str, kind: str, game_id: str, version: int, *,
    channel: Channel, tried: int = 0,
) -> DeliveryLog:  # fmt: skip
    """The delivery log of this attempt of a delivery job, under the notification's one id:
    the job's, less the suffix of a wait (quiet hours, a grace period). `tried`: the attempts
    made before the job."""
    job = get_current_job()
    if job is None:
        return DeliveryLog(context, player_id, delivery_entry(
            f"{kind}-{version}", kind, game_id, version, tried + 1, channel=channel
        ))  # fmt: skip
    notice_id = job.id.removesuffix(DEFERRED).removesuffix(GRACED)
    left = job.retries_left  # of the retries it was given: all but those made before it
    made = 0 if left is None else DELIVERY_RETRY.max - tried - left
    number = tried + made + 1
    entry = delivery_entry(notice_id, kind, game_id, version, number, channel=channel)
    return DeliveryLog(context, player_id, entry)


def delivery_entry(
    notice_id: str, kind: str, game_id: str, version: int, number: int, *,
    channel: Channel = "webhook",
) -> Delivery:  # fmt: skip
    """The entry of an attempt in the delivery log, its outcome yet to be written."""
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

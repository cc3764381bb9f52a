"""Telling players: one delivery job per notice and channel the recipient has on (a webhook,
a confirmed e-mail, devices subscribed to Web Push), under the one id of that notification on
that channel (a webhook's `webhook-id`). Shared by every job that tells anybody anything: an
append's follow-up, a resignation, a reminder."""

from __future__ import annotations

from rq import Queue

from projections.notices import Notice
from store.notifications import Channels, channels_op
from workers.context import WorkerContext
from workers.job_ids import job_id
from workers.retries import DELIVERY_RETRY

DELIVER = "workers.webhooks.deliver"
DELIVER_EMAIL = "workers.mail.deliver_email"
DELIVER_PUSH = "workers.push.deliver_push"


def delivery_id(
    game_id: str, version: int, notice: Notice, channel: str = "webhook", detail: str = ""
) -> str:
    """The one id of a notification on a channel: its `webhook-id` too, the same on every
    attempt and every copy (`<kind>-<version>-<game>-<seat>[-<detail>]-<channel>`; `detail`
    tells apart two notifications of one kind at one version, such as two reminders)."""
    seat = "x" if notice.seat is None else str(notice.seat)
    middle = f"{seat}-{detail}" if detail else seat
    return f"{job_id(game_id, version, notice.kind.replace('.', '-'))}-{middle}-{channel}"


def enqueue_notices(
    context: WorkerContext, game_id: str, version: int, notices: list[Notice], detail: str = "",
    *, webhooks_at_once: bool = False, channels: dict[str, Channels] | None = None,
) -> list[tuple[str, Notice, Channels]]:  # fmt: skip
    """One delivery job per notice and channel on: the webhook, a confirmed e-mail, Web Push
    (a device subscribed; push off on this server, the job says so and sends nothing). With
    `webhooks_at_once` the webhooks get none: their ids, notices and channels are returned
    instead, for the caller to make the first attempt itself (`workers.webhooks.send_first`)."""
    if channels is None:
        players = sorted({n.player_id for n in notices})
        found = context.store.gather(*(channels_op(context.notifications, p) for p in players))
        channels = dict(zip(players, found, strict=True))
    jobs, at_once = [], []
    for n in notices:
        hook, email = channels[n.player_id].webhook, channels[n.player_id].email
        for function, channel, on in (
            (DELIVER, "webhook", hook is not None and not hook.disabled),
            (DELIVER_EMAIL, "email", email is not None and email.confirmed),
            (DELIVER_PUSH, "push", bool(channels[n.player_id].push)),
        ):
            if on and webhooks_at_once and channel == "webhook":
                at_once.append(
                    (delivery_id(game_id, version, n, channel, detail), n, channels[n.player_id])
                )
            elif on:
                jobs.append(
                    Queue.prepare_data(
                        function,
                        args=(n.player_id, game_id, version, n.kind, n.seat),
                        kwargs={"about": n.about} if n.about is not None else None,
                        job_id=delivery_id(game_id, version, n, channel, detail),
                        retry=DELIVERY_RETRY,
                    )
                )
    if jobs:
        context.queue.enqueue_many(jobs)
    return at_once

"""E-mail: the jobs that send a notification by e-mail, ask a player to confirm an address,
and tell a player their webhook was turned off; over SMTP (`PATRICIAN_SMTP_URL`).

- `confirm_address(player_id, address)`: the only e-mail an address gets before its owner
  confirms it: a link whose secret is kept only as a hash, for a week.
- `deliver_email(player_id, game_id, version, kind, seat, ...)`: the notification's document
  (the same as the webhook's, `workers.notice_documents.document_of`) written as text and HTML
  (`projections.mail`), with a one-click unsubscribe link (`List-Unsubscribe`,
  `List-Unsubscribe-Post`, RFC 8058). A `turn.started` e-mail waits a grace period first and
  is dropped if the player acted meanwhile (they were at the table); quiet hours defer it; a
  notification is sent once under its id, as a webhook is.
- `webhook_disabled(player_id, reason)`: the player's webhook was turned off.
- `send_digest(player_id, day)`: the daily digest of a player who asked for one instead of
  an e-mail per turn (`turn.started` and `turn.reminder` e-mails are then dropped; webhooks
  are not affected): one e-mail listing every game that awaits them, each told by its own
  notification document (`document_of`, as that game's `turn.started` would be), sent once
  per player and day under the id `digest-<day>-<player>-email`. Enqueued when due by the
  timers (`workers.deadlines.fire_digests`).

Over SMTP: `workers.smtp` says what `PATRICIAN_SMTP_URL` means and sends.
"""

from __future__ import annotations

import html
import secrets
import smtplib
from collections.abc import Callable
from datetime import timedelta
from email.message import EmailMessage
from email.utils import make_msgid
from typing import cast

import msgspec

from projections.mail import Mail, Reader, render, render_digest
from projections.notices import Kind, Notice, NoticeDocument
from store.accounts import games_of_op
from store.handovers import handovers_op
from store.inbox import inbox_op
from store.notifications import (
    Email,
    channels_op,
    keep_confirmation_op,
    keep_unsubscribe_op,
    last_decided_op,
    set_channels_op,
    settle_sending_op,
)
from workers.context import WorkerContext, current
from workers.deadlines import digest_id
from workers.delivery_attempts import (
    DEFERRED,
    GRACED,
    DeliveryLog,
    NotDelivered,
    after_quiet_hours,
    attempt_log,
    claim_sending,
    watched,
)
from workers.notice_documents import document_of
from workers.retries import DELIVERY_RETRY
from workers.smtp import said, smtp_server, transmit

DIGESTED = ("turn.started", "turn.reminder")
"""The e-mails a daily digest stands in for."""
DIGEST_GAMES = 50
"""The most games a digest tells (the most pressing: the earliest deadline, the longest
waiting); it counts the others."""


def confirm_address(player_id: str, address: str) -> str:
    """Ask the player to confirm `address` (if it is still the one they set, unconfirmed)."""
    context = current()
    channels = context.store.run(channels_op(context.notifications, player_id))
    email = channels.email
    if email is None or email.address != address or email.confirmed:
        return "nothing to confirm"
    token = secrets.token_urlsafe(24)
    context.store.run(keep_confirmation_op(context.notifications, token, player_id, address))
    link = f"{context.public_url}/api/email/confirm?token={token}"
    text = (
        "Someone (we hope you) asked Patrician to send game notifications to this address.\n\n"
        f"Confirm it here: {link}\n\nIf it was not you, do nothing: nothing more is sent.\n"
    )
    page = (
        '<!doctype html><html><head><meta charset="utf-8"><title>Confirm</title></head><body>'
        "<p>Someone (we hope you) asked Patrician to send game notifications to this address."
        f'</p><p><a href="{link}">Confirm it</a></p><p>If it was not you, do nothing: nothing '
        "more is sent.</p></body></html>"
    )
    send(context, address, Mail("Patrician: confirm your address", text, page))
    return "asked"


def deliver_email(
    player_id: str, game_id: str, version: int, kind: str, seat: int | None, *,
    about: int | None = None, deferred: bool = False, graced: bool = False,
) -> str:  # fmt: skip
    """Send one notification by e-mail (see the module); what became of it."""
    context = current()
    log = attempt_log(context, player_id, kind, game_id, version, channel="email")
    mail_id = log.attempt.webhook_id
    channels = context.store.run(channels_op(context.notifications, player_id))
    email = channels.email
    if email is None or not email.confirmed:
        return "no e-mail on"
    if channels.digest is not None and kind in DIGESTED:
        return log.write("dropped", "told in your daily digest instead")
    again = {"about": about, "retry": DELIVERY_RETRY}  # the job once more, later
    if kind == "turn.started" and not graced and context.mail_grace_seconds > 0:
        context.queue.enqueue_in(
            timedelta(seconds=context.mail_grace_seconds), deliver_email, player_id, game_id,
            version, kind, seat, job_id=mail_id + GRACED, graced=True, **again,
        )  # fmt: skip
        grace = context.mail_grace_seconds
        return log.write("deferred", f"waits {grace:g} s: not sent if you play meanwhile")
    if kind == "turn.started" and seat is not None:
        acted = context.store.run(last_decided_op(context.notifications, game_id, seat))
        if acted >= version:  # they played meanwhile: they did not need telling
            return log.write("dropped", "you played within the grace period")
    if watched(context, player_id, game_id, kind):
        return log.write("dropped", "you were watching the game live")
    later = None if deferred else after_quiet_hours(channels.quiet_hours, context.clock())
    if later is not None:
        context.queue.enqueue_at(
            later, deliver_email, player_id, game_id, version, kind, seat,
            job_id=mail_id + DEFERRED, deferred=True, graced=True, **again,
        )  # fmt: skip
        return log.write("deferred", f"quiet hours: to be sent at {later.isoformat()}")
    if not claim_sending(context, mail_id):
        return "sent already"

    def write(unsubscribe: str) -> Mail:
        target = Notice(player_id, seat, cast(Kind, kind), about)
        document = document_of(context, target, game_id, version)
        return render(document, unsubscribe, Reader.of(channels, context.clock()))

    _send_claimed(context, log, email, write)
    return log.write("delivered", "accepted by the mail server")


def send_digest(player_id: str, day: str) -> str:
    """Send the player's daily digest of `day` (see the module); what became of it."""
    context = current()
    log = attempt_log(context, player_id, "digest", "", 0, channel="email")
    mail_id = digest_id(player_id, day)
    channels = context.store.run(channels_op(context.notifications, player_id))
    email = channels.email
    if email is None or not email.confirmed:
        return "no e-mail on"
    if channels.digest is None:
        return "no digest"
    awaiting = _awaiting(context, player_id)
    if not awaiting:
        return log.write("dropped", "no game awaited you")
    if not claim_sending(context, mail_id):
        return "sent already"

    def write(unsubscribe: str) -> Mail:
        told = sorted(
            (
                (document_of(context, Notice(player_id, seat, "turn.started"), game_id, at),
                 changed)
                for game_id, seat, at, changed in awaiting
            ),
            key=_pressing,
        )  # fmt: skip
        documents = [document for document, _changed in told[:DIGEST_GAMES]]
        more = len(told) - len(documents)
        return render_digest(
            day, documents, unsubscribe, more=more, reader=Reader.of(channels, context.clock())
        )

    _send_claimed(context, log, email, write)
    games = f"{len(awaiting)} game{'s' if len(awaiting) != 1 else ''}"
    return log.write("delivered", f"{games} awaiting you, accepted by the mail server")


def _awaiting(context: WorkerContext, player_id: str) -> list[tuple[str, int, int, str]]:
    """The games in play whose decision is the player's (not a bot's for them), from their
    inbox (`store.inbox`, kept by the workers): each one's id, the player's seat, its
    version and when it last changed."""
    prefix = context.accounts.prefix
    listed, kept = context.store.gather(
        games_of_op(context.accounts, player_id), inbox_op(prefix, player_id)
    )
    games = {game_id for game_id, _listed in listed}
    mine = [e for e in kept if e.game_id in games and e.phase == "playing" and e.your_decision]
    keys = context.path.context.keys
    handed = context.store.gather(*(handovers_op(keys, e.game_id) for e in mine))
    return [
        (e.game_id, e.seat, e.version, e.since or "")
        for e, bots in zip(mine, handed, strict=True)
        if e.seat is not None and player_id not in bots  # not handed over to a bot
    ]


def _pressing(told: tuple[NoticeDocument, str]) -> tuple[str, str]:
    """The earliest deadline first, then the longest waiting."""
    document, changed = told
    return (document.deadline or "~", changed)


def _send_claimed(
    context: WorkerContext, log: DeliveryLog, email: Email, write: Callable[[str], Mail]
) -> None:
    """Send the e-mail `write` makes (given the unsubscribe link) under the notification id
    of `log`, its sending claimed: kept as sent, or released and logged as failed, raising
    `NotDelivered` for RQ to try again later."""
    mail_id = log.attempt.webhook_id
    try:
        unsubscribe = _unsubscribe_url(context, log.player_id, email)
        mail = write(unsubscribe)
        send(context, email.address, mail, unsubscribe=unsubscribe, message_id=mail_id)
    except BaseException as failed:
        context.store.run(settle_sending_op(context.notifications, mail_id, sent=False))
        if not isinstance(failed, (OSError, smtplib.SMTPException)):
            raise
        log.write("failed", said(failed))
        raise NotDelivered(f"{email.address}: {said(failed)}") from None
    context.store.run(settle_sending_op(context.notifications, mail_id, sent=True))


def webhook_disabled(player_id: str, reason: str) -> str:
    """Tell the player by e-mail that their webhook was turned off (if they have one)."""
    context = current()
    channels = context.store.run(channels_op(context.notifications, player_id))
    email = channels.email
    if email is None or not email.confirmed:
        return "no e-mail on"
    unsubscribe = _unsubscribe_url(context, player_id, email)
    text = (
        f"Your Patrician webhook was {reason}.\n\nSet its URL again to turn it back on.\n\n"
        f"No more e-mails: {unsubscribe}\n"
    )
    page = f"<!doctype html><html><body><p>{html.escape(text)}</p></body></html>"
    mail = Mail("Patrician: your webhook was turned off", text, page)
    send(context, email.address, mail, unsubscribe=unsubscribe)
    return "told"


def _unsubscribe_url(context: WorkerContext, player_id: str, email: Email) -> str:
    """The player's one-click unsubscribe link (its secret made the first time it is needed,
    kept hashed for the look-up and as it is for the next e-mails)."""
    token = email.unsubscribe
    if not token:
        token = secrets.token_urlsafe(24)
        context.store.run(keep_unsubscribe_op(context.notifications, token, player_id))
        channels = context.store.run(channels_op(context.notifications, player_id))
        if channels.email is not None and channels.email.address == email.address:
            kept = msgspec.structs.replace(channels.email, unsubscribe=token)
            updated = msgspec.structs.replace(channels, email=kept)
            context.store.run(set_channels_op(context.notifications, player_id, updated))
    return f"{context.public_url}/api/email/unsubscribe?token={token}"


def send(
    context: WorkerContext, to: str, mail: Mail, *, unsubscribe: str | None = None,
    message_id: str | None = None,
) -> None:  # fmt: skip
    """One e-mail, text and HTML, through the SMTP server of `context.smtp_url`; with the
    one-click `unsubscribe` link in its headers. `MailNotSent` if it was not accepted."""
    message = EmailMessage()
    message["From"] = context.mail_from
    message["To"] = to
    message["Subject"] = mail.subject
    domain = context.mail_from.rpartition("@")[2].rstrip(">") or "localhost"
    message["Message-ID"] = make_msgid(idstring=message_id, domain=domain)
    if unsubscribe is not None:
        message["List-Unsubscribe"] = f"<{unsubscribe}>"
        message["List-Unsubscribe-Post"] = "List-Unsubscribe=One-Click"
    message.set_content(mail.text)
    message.add_alternative(mail.html, subtype="html")
    transmit(smtp_server(context.smtp_url), message)

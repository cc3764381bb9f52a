"""E-mail: the jobs that send a notification by e-mail, ask a player to confirm an address,
and tell a player their webhook was turned off; over SMTP (`PATRICIAN_SMTP_URL`).

- `confirm_address(player_id, address)`: the only e-mail an address gets before its owner
  confirms it: a link whose secret is kept only as a hash, for a week.
- `deliver_email(player_id, game_id, version, kind, seat, ...)`: the notification's document
  (the same as the webhook's, `workers.webhooks.document_of`) written as text and HTML
  (`projections.mail`), with a one-click unsubscribe link (`List-Unsubscribe`,
  `List-Unsubscribe-Post`, RFC 8058). A `turn.started` e-mail waits a grace period first and
  is dropped if the player acted meanwhile (they were at the table); quiet hours defer it; a
  notification is sent once under its id, as a webhook is.
- `webhook_disabled(player_id, reason)`: the player's webhook was turned off.

SMTP URLs: `smtp://[user:password@]host[:port]` (port 25; `?starttls=1` to upgrade the
connection), `smtps://...` (TLS from the start, port 465).
"""

from __future__ import annotations

import html
import secrets
import smtplib
import ssl
from datetime import timedelta
from email.message import EmailMessage
from email.utils import make_msgid
from typing import cast
from urllib.parse import parse_qs, unquote, urlsplit

import msgspec

from projections.mail import Mail, render
from projections.notices import Kind, Notice
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
from workers.retries import DELIVERY_RETRY
from workers.webhooks import (
    DEFERRED,
    GRACED,
    NotDelivered,
    after_quiet_hours,
    attempt_log,
    claim_sending,
    document_of,
    watched,
)

SMTP_TIMEOUT = 10.0


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
    try:
        target = Notice(player_id, seat, cast(Kind, kind), about)
        document = document_of(context, target, game_id, version)
        unsubscribe = _unsubscribe_url(context, player_id, email)
        mail = render(document, unsubscribe)
        send(context, email.address, mail, unsubscribe=unsubscribe, message_id=mail_id)
    except BaseException as failed:
        context.store.run(settle_sending_op(context.notifications, mail_id, sent=False))
        if not isinstance(failed, (OSError, smtplib.SMTPException)):
            raise
        log.write("failed", f"{type(failed).__name__}: {failed}")
        raise NotDelivered(f"{email.address}: {failed}") from None
    context.store.run(settle_sending_op(context.notifications, mail_id, sent=True))
    return log.write("delivered", "accepted by the mail server")


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
    one-click `unsubscribe` link in its headers."""
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
    url = urlsplit(context.smtp_url)
    query = parse_qs(url.query)
    host = url.hostname or "localhost"
    tls = ssl.create_default_context()
    if url.scheme == "smtps":
        client: smtplib.SMTP = smtplib.SMTP_SSL(
            host, url.port or 465, timeout=SMTP_TIMEOUT, context=tls
        )
    elif url.scheme == "smtp":
        client = smtplib.SMTP(host, url.port or 25, timeout=SMTP_TIMEOUT)
    else:
        raise smtplib.SMTPException(f"{url.scheme!r} is no SMTP URL scheme (smtp, smtps)")
    with client:
        if query.get("starttls", ["0"])[0] not in ("0", "", "false"):
            client.starttls(context=tls)
        if url.username:
            client.login(unquote(url.username), unquote(url.password or ""))
        client.send_message(message)

"""A notification as an e-mail: its subject, a plain text part and an HTML part, all written
from the notification's document alone (`projections.notices.NoticeDocument`), so that an
e-mail can say nothing the webhook's body, which passed the one redaction gate, does not.

The daily digest is written the same way, from the documents of the games it lists, one
each. Pure, for the tests over many generated games. Every value from the game or from a
player is escaped in the HTML part (names and table talk are a player's words).
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from datetime import datetime
from typing import NamedTuple
from zoneinfo import ZoneInfo

from projections.notices import NoticeDocument
from store.notifications import Channels

SUBJECTS = {
    "game.started": "Your game has started",
    "turn.started": "Your turn",
    "turn.reminder": "Your turn: the deadline is near",
    "turn.timed_out": "Your time ran out: the bot played your turn",
    "game.ended": "The game is over",
    "game.cancelled": "The game was called off",
    "seat.resigned": "A player handed their seat to a bot",
}
STEPS = {
    "play_card": "play a card",
    "place_floor": "put the floor on one of the city's two sites",
    "take_card": "take a face-up card",
    "move_floor": "move a floor (or skip)",
    "trade_route": "place a trade route (or skip)",
    "architetto_site": "choose the Architetto's site",
}


class Mail(NamedTuple):
    subject: str
    text: str
    html: str


class Reader(NamedTuple):
    """When and where an e-mail is written for: the time it is sent (the caller's clock) and
    the recipient's time zone (an IANA name), in which its deadlines are told."""

    now: datetime
    time_zone: str = "UTC"

    @classmethod
    def of(cls, channels: Channels, now: datetime) -> Reader:
        """The player of these settings at `now`: their time zone is their quiet hours',
        else their digest's, else UTC."""
        quiet, digest = channels.quiet_hours, channels.digest
        return cls(now, quiet.time_zone if quiet else digest.time_zone if digest else "UTC")


def render(document: NoticeDocument, unsubscribe_url: str, reader: Reader | None = None) -> Mail:
    """The e-mail of a notification; `unsubscribe_url` stops every e-mail in one click;
    `reader`, when and in which time zone it is read (None: its deadline in UTC, without how
    far off it is)."""
    subject = f"Patrician: {SUBJECTS.get(document.type, document.type)} (game {document.game_id})"
    text = "\n".join(
        [*_text_of(document, reader), "", f"Play: {document.play_url}", "",
         f"No more e-mails: {unsubscribe_url}", ""]
    )  # fmt: skip
    body = [
        *_html_of(document, reader),
        f'<p><a href="{html.escape(document.play_url)}">Open the game</a></p>',
        _unsubscribe_html(unsubscribe_url),
    ]
    return Mail(subject, text, _page(subject, body))


def render_digest(
    day: str, documents: Sequence[NoticeDocument], unsubscribe_url: str, *, more: int = 0,
    reader: Reader | None = None,
) -> Mail:  # fmt: skip
    """The daily digest of `day`: for each game that awaits the player (its document, as the
    `turn.started` of its version would say it), what is asked, its deadline, what happened
    since their last turn and the link to play; `more`, the games awaiting left out;
    `reader`, as in `render`."""
    count = len(documents) + more
    games = f"{count} game{'s' if count != 1 else ''} await{'' if count != 1 else 's'} you"
    subject = f"Patrician: {games} ({day})"
    text = [f"Your daily digest of {day}: {games}.", ""]
    body = [f"<p>Your daily digest of {html.escape(day)}: {html.escape(games)}.</p>"]
    for document in documents:
        text += [f"Game {document.game_id}", *_text_of(document, reader), "",
                 f"Play: {document.play_url}", ""]  # fmt: skip
        body += [
            f"<h2>Game {html.escape(document.game_id)}</h2>",
            *_html_of(document, reader),
            f'<p><a href="{html.escape(document.play_url)}">Open the game</a></p>',
        ]
    if more:
        text += [f"And {more} more (those waiting longest are above).", ""]
        body.append(f"<p>And {more} more (those waiting longest are above).</p>")
    text += [f"No more e-mails: {unsubscribe_url}", ""]
    body.append(_unsubscribe_html(unsubscribe_url))
    return Mail(subject, "\n".join(text), _page(subject, body))


def _text_of(document: NoticeDocument, reader: Reader | None) -> list[str]:
    """What the document says, as lines of text: the headline, the deadline, what happened
    since the recipient's last turn, the table talk."""
    lines = [headline(document)]
    if document.deadline is not None:
        lines.append(f"Deadline: {deadline_in_words(document.deadline, reader)}.")
    if document.happened:
        lines += ["", "Since your last turn:", *(f"- {line}" for line in document.happened)]
    if document.talk:
        lines += [
            "",
            "At the table:",
            *(f"{m.name} (seat {m.seat}): {m.text}" for m in document.talk),
        ]
    return lines


def _html_of(document: NoticeDocument, reader: Reader | None) -> list[str]:
    """The same as HTML paragraphs, every value escaped."""
    items = "".join(f"<li>{html.escape(line)}</li>" for line in document.happened)
    body = [f"<p>{html.escape(headline(document))}</p>"]
    if document.deadline is not None:
        said = deadline_in_words(document.deadline, reader)
        body.append(f"<p>Deadline: {html.escape(said)}.</p>")
    if items:
        body.append(f"<p>Since your last turn:</p><ul>{items}</ul>")
    if document.talk:
        said = "".join(
            f"<li><b>{html.escape(m.name)}</b> (seat {m.seat}): "
            f"{html.escape(m.text).replace(chr(10), '<br>')}</li>"
            for m in document.talk
        )
        body.append(f"<p>At the table:</p><ul>{said}</ul>")
    return body


def deadline_in_words(deadline: str, reader: Reader | None) -> str:
    """A deadline (UTC, ISO 8601) as its reader says it: how far off it is, then the day and
    the time in their time zone with its abbreviation ("in 3 hours, Friday 14:00 CET"; the
    date too when it is a week or more away, or when it is not known how far); without a
    reader, in UTC."""
    due = datetime.fromisoformat(deadline).astimezone(
        ZoneInfo(reader.time_zone if reader is not None else "UTC")
    )
    left = None if reader is None else (due - reader.now).total_seconds()
    near = left is not None and left < 6 * 86400  # the weekday alone says which day
    day = f"{due:%A}" if near else f"{due:%A} {due.day} {due:%B}"
    when = f"{day} {due:%H:%M} {due:%Z}"
    if left is None:
        return when
    minutes = round(left / 60)
    if left <= 0:
        return f"passed, {when}"
    if minutes < 1:
        return f"in less than a minute, {when}"
    if minutes < 60:
        return f"in {_count(minutes, 'minute')}, {when}"
    if minutes < 48 * 60:
        return f"in {_count(round(minutes / 60), 'hour')}, {when}"
    return f"in {_count(round(minutes / 1440), 'day')}, {when}"


def _count(number: int, unit: str) -> str:
    return f"{number} {unit}{'' if number == 1 else 's'}"


def _unsubscribe_html(unsubscribe_url: str) -> str:
    return f'<p><small><a href="{html.escape(unsubscribe_url)}">No more e-mails</a></small></p>'


def _page(subject: str, body: list[str]) -> str:
    return (
        '<!doctype html><html><head><meta charset="utf-8">'
        f"<title>{html.escape(subject)}</title></head><body>{''.join(body)}</body></html>"
    )


def headline(document: NoticeDocument) -> str:
    """The notification in one sentence: what it is, and what is asked of the reader."""
    asked = document.asked
    if document.type == "game.ended":
        winners = document.winners or []
        mine = document.seat in winners
        return "The game is over: you won." if mine else "The game is over."
    if document.type == "seat.resigned":
        return f"Seat {document.about_seat} is played by a bot from now on."
    if asked is not None:
        step = STEPS.get(asked.step, asked.step)
        return f"{SUBJECTS.get(document.type, 'Your turn')}: you are to {step}."
    return SUBJECTS.get(document.type, document.type) + "."

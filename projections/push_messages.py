"""A notification as a push message: the few words a phone shows, written from the
notification's document alone (`projections.notices.NoticeDocument`, past the one redaction
gate) and the players' names, so that a push can say nothing the webhook's body does not.

The service worker of the web client (`server/web/sw.js`) shows it: `title` names the game
by its players (a player in many games tells them apart so; a game's id says nothing),
`body` says what is asked and by when, `url` is the game's page on this site, and `tag`
makes a newer message of one game replace the older on the device.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Sequence

import msgspec

from projections.mail import Reader, deadline_in_words, headline
from projections.notices import NoticeDocument

TITLE_LENGTH = 80
BODY_LENGTH = 240
"""Characters at most (a phone shows two lines or so; a name is a player's words, long)."""


class PushMessage(msgspec.Struct, frozen=True):
    title: str
    body: str
    url: str
    """A path of this site (the service worker opens nothing else)."""
    tag: str


def game_name(names: Sequence[str], seat: int | None) -> str:
    """A game by its players: the others by name, the reader as "you" ("Ada, Bob and you")."""
    others = [name or f"seat {n}" for n, name in enumerate(names) if n != seat]
    people = [*others, "you"] if seat is not None and seat < len(names) else others
    if not people:
        return "A game of Patrician"
    if len(people) == 1:
        return people[0]
    return f"{', '.join(people[:-1])} and {people[-1]}"


def message_of(
    document: NoticeDocument, names: Sequence[str], reader: Reader | None = None
) -> PushMessage:
    """The push message of a notification to the seat `document.seat` of a game whose
    players are `names`, by seat; `reader`, when and where it is read (the deadline's words)."""
    body = headline(document)
    if document.deadline is not None and document.type in ("turn.started", "turn.reminder"):
        body += f" Deadline: {deadline_in_words(document.deadline, reader)}."
    parts = urllib.parse.urlsplit(document.play_url)
    return PushMessage(
        title=_cut(game_name(names, document.seat), TITLE_LENGTH),
        body=_cut(body, BODY_LENGTH),
        url=urllib.parse.urlunsplit(("", "", "/" + parts.path.lstrip("/"), parts.query, "")),
        tag=f"game-{document.game_id}",
    )


def _cut(text: str, length: int) -> str:
    return text if len(text) <= length else text[: length - 1].rstrip() + "…"

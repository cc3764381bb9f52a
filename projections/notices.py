"""What a notification says: which notifications an append calls for, and the document sent to
each recipient, built only from what that recipient's seat may see.

One function decides who is told what (`notices_for`), one writes the document (`notice`);
both are pure, so the redaction of every notification can be tested over many generated games
without a server. The document passes through the domain's one redaction gate
(`domain.view.visible`, the same as every other outbound path): its events are those the
recipient may see at the version it describes, its words are told from those events only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

import msgspec

from domain.events import Event, GameCancelled, GameEnded, GameStarted
from domain.narrate import acted_for, narrate, seat_names
from domain.state import State
from domain.view import PendingView, view, visible
from evidence.signatures import Receipt
from store.talk import TalkMessage

Kind = Literal[
    "game.started", "turn.started", "turn.reminder", "turn.timed_out", "game.ended",
    "game.cancelled", "seat.resigned",
]  # fmt: skip


class Notice(msgspec.Struct, frozen=True):
    """One notification to send: to whom, of what kind, about which version."""

    player_id: str
    seat: int | None
    kind: Kind
    about: int | None = None
    """The seat it is about, when not the recipient's (the one handed to a bot)."""


class SeenEvent(msgspec.Struct, frozen=True):
    version: int
    event: Event


class NoticeDocument(msgspec.Struct, frozen=True):
    """The body of a webhook (and, in words, of an e-mail): docs/notifications.md."""

    type: Kind
    game_id: str
    version: int
    head_hash: str
    """The chain hash at `version`: a receipt of the log as it stood when this was sent."""
    player_id: str
    seat: int | None
    asked: PendingView | None
    """What is asked of the recipient now (None: nothing)."""
    since_version: int
    """What happened after this version (the recipient's last decision) is below."""
    happened: list[str]
    events: list[SeenEvent]
    play_url: str
    winners: list[int] | None = None
    about_seat: int | None = None
    """In `seat.resigned`: the seat a bot plays from now on."""
    deadline: str | None = None
    """In a timed game, when the turn running is played for its seat if it has not played it
    (UTC, ISO 8601)."""
    talk: list[TalkMessage] = []
    """The table talk since the recipient's last decision (the newest 20), but their own."""
    receipt: Receipt | None = None
    """The server's receipt of the append that brought the game to `version`, the same as
    the answer to that append (docs/record.md, "Receipts")."""


def notices_for(
    state: State,
    appended: Sequence[Event],
    acted_by: str,
    persons: set[str],
    *,
    timed_out: bool = False,
) -> list[Notice]:
    """Who is told what after an append of `appended` (the events it added) that brought the
    game to `state`, made by player `acted_by` (or, `timed_out`, by the clock for them). Only
    `persons` are told (not bots). One notice per turn, not per event: a seat is told its turn
    started when the decision passes to it from somebody else, never after its own move; a
    seat whose turn the clock played is told so."""
    notices: list[Notice] = []
    seat_of = {player: state.seat_of(player) for player in state.players if player in persons}
    mine = seat_of.get(acted_by)
    if timed_out and mine is not None and (state.pending is None or state.pending.seat != mine):
        # once, when the clock's turn is over (it may take two appends, R42)
        notices.append(Notice(acted_by, mine, "turn.timed_out"))
    if any(isinstance(e, GameStarted) for e in appended):
        notices += [Notice(p, seat, "game.started") for p, seat in seat_of.items()]
    if any(isinstance(e, GameCancelled) for e in appended):
        notices += [Notice(p, None, "game.cancelled") for p in seat_of if p != acted_by]
    if any(isinstance(e, GameEnded) for e in appended):
        notices += [Notice(p, seat, "game.ended") for p, seat in seat_of.items()]
        return notices
    pending = state.pending
    if pending is not None:
        player = state.players[state.seat_players[pending.seat]]
        if player in persons and player != acted_by:
            notices.append(Notice(player, pending.seat, "turn.started"))
    return notices


def notice(
    state: State,
    since: Sequence[Event],
    notice: Notice,
    *,
    game_id: str,
    head_hash: str,
    since_version: int,
    play_url: str,
    deadline: str | None = None,
    acted: Mapping[int, tuple[int, str]] | None = None,
    talk: Sequence[TalkMessage] = (),
    receipt: Receipt | None = None,
) -> NoticeDocument:
    """The document for `notice`, at `state` (the version it describes) with the game's
    events `since` (those after `since_version`, up to the state's version): the ones its
    seat may see. `acted`: the appends in that range that somebody else made for a seat (a
    bot, the clock), by their first version: the seat and the append's `by`."""
    over = state.finished
    seen = [
        SeenEvent(version, event)
        for version, event in enumerate(since, since_version + 1)
        if visible(event, notice.seat, over)
    ]
    board, names = state.board, seat_names(state)
    acted = acted or {}
    happened = []
    for item in seen:
        if item.version in acted and (told := acted_for(board, *acted[item.version], names)):
            happened.append(told)
        if (line := narrate(board, item.event, names)) is not None:
            happened.append(line)
    pending = view(state, notice.seat).pending if state.pending is not None else None
    asked = pending if pending is not None and pending.seat == notice.seat else None
    result = state.result
    return NoticeDocument(
        type=notice.kind,
        game_id=game_id,
        version=state.version,
        head_hash=head_hash,
        player_id=notice.player_id,
        seat=notice.seat,
        asked=asked,
        since_version=since_version,
        happened=happened,
        events=seen,
        play_url=play_url,
        winners=list(result.winners) if result is not None else None,
        about_seat=notice.about,
        deadline=deadline,
        talk=list(talk),
        receipt=receipt,
    )


def encode(document: NoticeDocument) -> bytes:
    return _encoder.encode(document)


_encoder = msgspec.json.Encoder()

"""A game's entry in each of its players' inboxes (`store.inbox`), made from its state at a
version: the one place that says what `/api/me/games` shows of a game and in which order, used
by the workers after every append and by `patrician rebuild-projections` alike."""

from __future__ import annotations

from datetime import datetime

from domain.narrate import seat_names
from domain.state import State
from domain.view import ClockView
from store.inbox import InboxEntry


def entry_of(
    game_id: str, state: State, player_id: str, since: str | None, clock: ClockView | None
) -> InboxEntry:
    """The player's entry for the game at `state`; `since`, when its last append was made."""
    seat = state.seat_of(player_id)
    pending = state.pending
    return InboxEntry(
        game_id=game_id,
        edition=state.board.edition,
        seats=state.board.seats,
        modules=state.board.modules,
        phase=state.phase,
        seat=seat,
        your_decision=pending is not None and pending.seat == seat,
        step=pending.step if pending is not None else None,
        version=state.version,
        since=since,
        result=state.result,
        clock=clock,
        names=state.names,
        seat_names=seat_names(state),
        ended=since if state.finished else None,
    )


def waited_seconds(entry: InboxEntry, now: datetime) -> float | None:
    """How long the game has waited for its current decision."""
    return (now - datetime.fromisoformat(entry.since)).total_seconds() if entry.since else None


def inbox_order(entry: InboxEntry, now: datetime) -> tuple[bool, str, float]:
    """Awaiting the player first; then the soonest deadline (untimed games after timed
    ones); then the longest waiting."""
    deadline = entry.clock.deadline if entry.clock is not None else None
    return (not entry.your_decision, deadline or "~", -(waited_seconds(entry, now) or 0.0))

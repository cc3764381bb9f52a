"""Replays: every step of a game as one caller may see it, and the view at any version.

A step is an event the caller may see and the caller's view right after it. Events the caller
may not see still move the state (the draw pile is stacked, a hand is dealt) but make no step.
Once a game is over every step shows everything (R42): hands, draw pile and hidden cards.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence

import msgspec

from domain.events import Event, log_finished
from domain.evolve import evolve, fold
from domain.narrate import narrate, seat_names
from domain.state import NEW_GAME
from domain.view import ClockView, View, view, visible


class ReplayStep(msgspec.Struct, frozen=True, gc=False):
    version: int
    event: Event
    view: View
    by: str = ""
    """Who acted for the seat in the append of this event ("" the player; `bot:<level>`,
    `clock:<level>`: docs/record.md)."""
    text: str | None = None
    """The event in words, for people (None: bookkeeping that says nothing new)."""


class Replay(msgspec.Struct, frozen=True, gc=False):
    viewer: int | None
    version: int
    over: bool
    steps: list[ReplayStep]


def replay(
    events: Sequence[Event],
    seat: int | None,
    clocks: Sequence[tuple[int, ClockView]] = (),
    acted: Sequence[tuple[int, str]] = (),
) -> Replay:
    """Every step of the game whose whole log is `events`, as `seat` may see it; in a timed
    game, each step's view with the clocks as they stood (`clocks`: after each append, with
    the append's first version, in order); each step with who acted for its seat (`acted`:
    each append's first version and `by`, in order)."""
    over = log_finished(events)
    state = NEW_GAME
    steps = []
    at = by_at = -1  # the append of the version, in `clocks` and in `acted`
    for version, event in enumerate(events, start=1):
        state = evolve(state, event)
        while at + 1 < len(clocks) and clocks[at + 1][0] <= version:
            at += 1
        while by_at + 1 < len(acted) and acted[by_at + 1][0] <= version:
            by_at += 1
        if visible(event, seat, over):
            shown = view(state, seat, everything=over)
            if at >= 0:
                shown = msgspec.structs.replace(shown, clock=clocks[at][1])
            by = acted[by_at][1] if by_at >= 0 else ""
            told = narrate(state.board, event, seat_names(state))
            steps.append(ReplayStep(version, event, shown, by, told))
    return Replay(viewer=seat, version=len(events), over=over, steps=steps)


def clock_at(clocks: Sequence[tuple[int, ClockView]], version: int) -> ClockView | None:
    """The clocks after the append that took `version` (None: an untimed game)."""
    index = bisect.bisect_right([first for first, _ in clocks], version) - 1
    return clocks[index][1] if index >= 0 else None


def view_at(events: Sequence[Event], version: int, seat: int | None) -> View:
    """The view of `seat` after the first `version` events of the game whose log is `events`."""
    return view(fold(events[:version]), seat, everything=log_finished(events))


def seen_at(events: Sequence[Event], version: int, seat: int) -> View:
    """What `seat` knew right after event `version`: the board the live game showed it then
    (the same redaction as a live board: `view`, for the state at that version)."""
    state = fold(events[:version])
    return view(state, seat, everything=state.finished)

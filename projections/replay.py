"""Replays: every step of a game as one caller may see it, and the view at any version.

A step is an event the caller may see and the caller's view right after it. Events the caller
may not see still move the state (the draw pile is stacked, a hand is dealt) but make no step.
Once a game is over every step shows everything (R42): hands, draw pile and hidden cards.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from domain.events import Event, log_finished
from domain.evolve import evolve, fold
from domain.state import NEW_GAME
from domain.view import View, view, visible


class ReplayStep(msgspec.Struct, frozen=True, gc=False):
    version: int
    event: Event
    view: View


class Replay(msgspec.Struct, frozen=True, gc=False):
    viewer: int | None
    version: int
    over: bool
    steps: list[ReplayStep]


def replay(events: Sequence[Event], seat: int | None) -> Replay:
    """Every step of the game whose whole log is `events`, as `seat` may see it."""
    over = log_finished(events)
    state = NEW_GAME
    steps = []
    for version, event in enumerate(events, start=1):
        state = evolve(state, event)
        if visible(event, seat, over):
            steps.append(ReplayStep(version, event, view(state, seat, everything=over)))
    return Replay(viewer=seat, version=len(events), over=over, steps=steps)


def view_at(events: Sequence[Event], version: int, seat: int | None) -> View:
    """The view of `seat` after the first `version` events of the game whose log is `events`."""
    return view(fold(events[:version]), seat, everything=log_finished(events))

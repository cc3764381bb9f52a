"""What one seat may see of a game: its view and the events redacted for it, with their
versions. The one input of every bot, built here by those who hold the game (a simulation, a
worker) through the domain's one redaction gate, or from the API by a client of its own."""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from domain.events import Event
from domain.state import State
from domain.view import View, view, visible


class Seen(msgspec.Struct, frozen=True, gc=False):
    """The seat's view (with its legal commands) and its events so far, `(version, event)`."""

    view: View
    events: tuple[tuple[int, Event], ...]

    @property
    def seat(self) -> int:
        assert self.view.viewer is not None, "a bot plays a seat"
        return self.view.viewer


def seen_by(state: State, log: Sequence[Event], seat: int) -> Seen:
    """What `seat` may see of the game whose log is `log` (at `state`, its fold): the same
    `view` and `visible` every outbound path of the server uses."""
    over = state.finished
    return Seen(
        view(state, seat),
        tuple((v, e) for v, e in enumerate(log, 1) if visible(e, seat, over)),
    )

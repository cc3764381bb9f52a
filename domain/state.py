"""The state of one game, folded from its events: immutable, encodable, and complete.

It always names the one pending decision (who decides what) or says the game is over (or was
cancelled before it started).
The turn in progress is flat in the state (`active` seat, the `card` it played, floors
`placed`, the city a card was `taken_from`) because folding touches it at almost every event.
Per-builder tuples hold the seats in turn order, then the Architetto when it plays (R22).
A site is a tuple of builders, bottom floor first; site `s` of city `c` is `towers[2 * c + s]`.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from domain.board import EMPTY_BOARD, Board, CardInfo
from domain.commands import Side
from domain.events import GameEnded, Part, StepStarted

Phase = Literal["new", "waiting", "playing", "over", "cancelled"]


# The one decision the game waits for is the fact that announced it.
Pending = StepStarted


class ArchitettoWork(msgspec.Struct, frozen=True, gc=False):
    """The card the Architetto is building (R20, R24) and who chooses its sites (R21b)."""

    card: str
    source: Part
    chooser: int
    placed: int = 0


class Marker(msgspec.Struct, frozen=True, gc=False):
    """A trade route marker on the signpost between cities `a` < `b` (R30)."""

    seat: int
    a: int
    b: int
    side: Side


class State(msgspec.Struct, frozen=True, gc=False):
    board: Board = EMPTY_BOARD
    version: int = 0
    phase: Phase = "new"
    seed_commitment: str = ""
    server_seed: str = ""
    players: tuple[str, ...] = ()
    entropies: tuple[str, ...] = ()
    names: tuple[str, ...] = ()
    left: tuple[str, ...] = ()
    """The players who left the table before it started, once per time they left."""
    seat_players: tuple[int, ...] = ()
    hands: tuple[tuple[str, ...], ...] = ()
    played: tuple[tuple[str, ...], ...] = ()
    supply: tuple[int, ...] = ()
    towers: tuple[tuple[int, ...], ...] = ()
    winners: tuple[tuple[int, int] | None, ...] = ()
    bonus: tuple[int, ...] = ()
    face_up: tuple[str | None, ...] = ()
    draw: tuple[str, ...] = ()
    hidden: tuple[str, ...] = ()
    markers: tuple[Marker, ...] = ()
    markers_left: tuple[int, ...] = ()
    active: int = -1
    card: str | None = None
    placed: int = 0
    taken_from: int | None = None
    architetto: ArchitettoWork | None = None
    pending: Pending | None = None
    result: GameEnded | None = None

    @property
    def finished(self) -> bool:
        """Over or cancelled: nothing will be decided any more, and nothing is secret (R42)."""
        return self.phase in ("over", "cancelled")

    def seat_of(self, player: str) -> int | None:
        """The seat `player` holds in this game (one per player), or None before the seats
        are drawn and for anyone not at the table."""
        for seat, joined in enumerate(self.seat_players):
            if self.players[joined] == player:
                return seat
        return None

    def played_card(self) -> CardInfo:
        """The card the active seat played this turn."""
        assert self.card is not None
        return self.board.cards[self.card]

    def city_floors(self, city: int) -> int:
        return len(self.towers[2 * city]) + len(self.towers[2 * city + 1])

    def city_full(self, city: int) -> bool:
        return self.winners[city] is not None or self.city_floors(city) >= self.board.capacity[city]


NEW_GAME = State()

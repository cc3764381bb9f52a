"""A timed game's clocks as the API shows them: from its time control (kept beside the game,
set once when it is created), the times of its appends (`projections.timekeeping`) and who of
its players is on vacation now, which moves the clocks without an append."""

from __future__ import annotations

import msgspec
from cachetools import LRUCache

from domain.state import State
from domain.view import ClockView
from projections.timekeeping import Append, away_until, clocks_op
from store import accounts
from store.client import AsyncEventStore
from store.clock import Clock, system_clock
from store.command_path import CommandPath
from store.time_controls import TimeControl, time_control_op
from store.vacations import vacations_op


class GameClocks:
    """The clocks of timed games, read for the services (each game's time control kept, as it
    never changes once the game is created: None for an untimed game)."""

    def __init__(
        self,
        store: AsyncEventStore,
        path: CommandPath,
        listings: accounts.Accounts,
        *,
        clock: Clock = system_clock,
        cache_size: int = 4096,
    ) -> None:
        self.store, self.path, self.listings, self.clock = store, path, listings, clock
        self._controls: LRUCache[str, TimeControl | None] = LRUCache(cache_size)

    async def away_now(self, state: State) -> tuple[object, ...]:
        """Each seat's player's vacations, and which of them goes on now."""
        players = [state.players[state.seat_players[s]] for s in range(state.board.seats)]
        away = await self.store.run(vacations_op(self.listings, players))
        now = self.clock().timestamp()
        return tuple((each, away_until(each, now)) for each in away)

    async def time_control(self, game_id: str) -> TimeControl | None:
        if game_id in self._controls:
            return self._controls[game_id]
        control = await self.store.run(time_control_op(self.listings.prefix, game_id))
        self._controls[game_id] = control
        return control

    async def clocks(
        self, game_id: str, state: State, planned: Append | None = None
    ) -> list[tuple[int, ClockView]]:
        """A timed game's clocks after each of its appends up to the state's version (and
        `planned`, one leading to that state but not made), each with the first version of
        its append (the last one saying who is on vacation now); none for an untimed game."""
        control = await self.time_control(game_id)
        if control is None:
            return []
        clocks, away = await self.store.run(
            clocks_op(self.path, self.listings, game_id, state, control, planned=planned)
        )
        now = self.clock().timestamp()
        if clocks and any(away_until(each, now) for each in away):
            first, last = clocks[-1]
            seats = tuple(
                msgspec.structs.replace(seat, away_until=away_until(each, now))
                for seat, each in zip(last.seats, away, strict=True)
            )
            clocks[-1] = (first, msgspec.structs.replace(last, seats=seats))
        return clocks

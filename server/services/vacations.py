"""Vacations: a player's clocks stand still in every timed game while one lasts, up to a
yearly allowance of days (`POST /api/me/vacation`, `DELETE` to end it early). The other seats
see who is away until when on the board. The workers move the deadlines of the player's games
as soon as a vacation starts or ends."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import UTC, datetime

from server.schema import answers, limits
from server.schema.errors import InvalidSetting
from store.accounts import Accounts
from store.client import AsyncEventStore
from store.clock import Clock, iso, system_clock
from store.vacations import Vacations, set_vacations_op, vacations_op

DAY = 24 * 3600.0
KEPT_SECONDS = 2 * 365 * DAY
"""How long past vacations are kept (games that began before them may still be on)."""


class VacationService:
    def __init__(
        self,
        store: AsyncEventStore,
        accounts: Accounts,
        away: Callable[[str], None],
        *,
        clock: Clock = system_clock,
    ) -> None:
        self.store, self.accounts, self.away, self.clock = store, accounts, away, clock

    async def get(self, player: str) -> answers.VacationInfo:
        return _info(await self._vacations(player), self.clock().timestamp())

    async def start(self, player: str, days: int) -> answers.VacationInfo:
        vacations = await self._vacations(player)
        now = self.clock().timestamp()
        if _current(vacations, now) is not None:
            raise InvalidSetting("days", "you are on vacation already: end it first")
        left = limits.VACATION_DAYS - _used(vacations, now)
        if days > left:
            raise InvalidSetting("days", f"{left:g} days of vacation are left this year")
        kept = tuple(v for v in vacations if v[1] > now - KEPT_SECONDS)
        return await self._set(player, (*kept, (now, now + days * DAY)), now)

    async def end(self, player: str) -> answers.VacationInfo:
        vacations = await self._vacations(player)
        now = self.clock().timestamp()
        current = _current(vacations, now)
        if current is None:
            return _info(vacations, now)
        cut = tuple((start, now) if (start, end) == current else (start, end)
                    for start, end in vacations)  # fmt: skip
        return await self._set(player, cut, now)

    async def _vacations(self, player: str) -> Vacations:
        return (await self.store.run(vacations_op(self.accounts, [player])))[0]

    async def _set(self, player: str, vacations: Vacations, now: float) -> answers.VacationInfo:
        await self.store.run(set_vacations_op(self.accounts, player, vacations))
        await asyncio.to_thread(self.away, player)  # the deadlines of the player's games move
        return _info(vacations, now)


def _current(vacations: Vacations, now: float) -> tuple[float, float] | None:
    return next(((start, end) for start, end in vacations if start <= now < end), None)


def _used(vacations: Vacations, now: float) -> float:
    """The days of vacation taken (or booked) in the calendar year of `now` (UTC)."""
    year = datetime.fromtimestamp(now, UTC).year
    begins = datetime(year, 1, 1, tzinfo=UTC).timestamp()
    ends = datetime(year + 1, 1, 1, tzinfo=UTC).timestamp()
    return sum(max(0.0, min(end, ends) - max(start, begins)) for start, end in vacations) / DAY


def _info(vacations: Vacations, now: float) -> answers.VacationInfo:
    current = _current(vacations, now)
    until = None if current is None else iso(datetime.fromtimestamp(current[1], UTC))
    used = round(_used(vacations, now), 3)
    return answers.VacationInfo(limits.VACATION_DAYS, used, until)

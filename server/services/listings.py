"""The lists beside the games: the lobby of tables waiting for players and each player's
games (read from their inbox); reading them, never writing: a GET changes nothing.

Both lists are written before the append that creates or joins a game (`store.games`), so no
crash leaves a game out of them; the price is a listing whose append never landed, or a table
that filled while the lobby was not told. Readers skip those; the workers take them off
(`workers.repairs`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime

import msgspec

from domain.state import State
from domain.view import ClockView
from projections.inbox import entry_of, inbox_order, waited_seconds
from server.schema import answers
from store import accounts, inbox, reads
from store.client import AsyncEventStore
from store.clock import Clock, system_clock
from store.command_path import CommandPath
from store.errors import GameNotFound
from store.requirements import requirements_op

Clocks = Callable[[str, State], Awaitable[list[tuple[int, ClockView]]]]
"""A game's clocks after each append (`server.services.clocks.GameClocks.clocks`)."""
Ratings = Callable[[Sequence[str]], Awaitable[tuple[int | None, ...]]]
"""The rating shown for each of some players (`server.services.ratings.RatingService`)."""


class ListingService:
    def __init__(
        self,
        store: AsyncEventStore,
        path: CommandPath,
        keys: accounts.Accounts,
        *,
        clock: Clock = system_clock,
        clocks: Clocks | None = None,
        ratings: Ratings | None = None,
    ) -> None:
        self.store = store
        self.path = path
        self.keys = keys
        self.clock = clock
        self.clocks = clocks
        self.ratings = ratings

    async def _listed(self, game_id: str) -> State | None:
        """A listed game's state; None for a game listed before a creation that failed."""
        try:
            return await self.store.run(reads.current_op(self.path, game_id))
        except GameNotFound:
            return None

    async def lobby(self, limit: int = 100) -> list[answers.LobbyGame]:
        """The tables waiting for players, oldest first, with their players' ratings (read
        for every table at once)."""
        waiting = []
        for game_id, _listed in await self.store.run(accounts.lobby_op(self.keys, limit)):
            state = await self._listed(game_id)
            if state is not None and state.phase == "waiting":
                waiting.append((game_id, state))
        everyone = [player for _game_id, state in waiting for player in state.players]
        rated: dict[str, int | None] = {}
        if self.ratings is not None:
            rated = dict(zip(everyone, await self.ratings(everyone), strict=True))
        required = await asyncio.gather(  # at once: one round trip
            *(self.store.run(requirements_op(self.keys.prefix, g)) for g, _state in waiting)
        )
        return [
            answers.LobbyGame(
                game_id, state.board.edition, state.board.seats, state.board.modules,
                state.players, state.version, state.names,
                tuple(rated.get(player) for player in state.players) if rated else (),
                asked,
            )
            for (game_id, state), asked in zip(waiting, required, strict=True)
        ]  # fmt: skip

    async def my_games(self, player: str) -> list[answers.MyGame]:
        """The player's games: those awaiting their decision first, then by the soonest
        deadline, then the longest waiting. Read from the inbox the workers keep (with the
        player's list, in one round trip); a listed game the workers have not come to yet
        (it was made a moment ago) is read from its stream."""
        entries = await self.entries_of(player)
        now = self.clock()
        entries.sort(key=lambda entry: inbox_order(entry, now))
        return [_my_game(entry, now) for entry in entries]

    async def entries_of(self, player: str) -> list[inbox.InboxEntry]:
        """The player's inbox entries, one per listed game (in no order): read with the list
        in one round trip; a listed game the workers have not come to yet, from its stream."""
        listed, kept = await asyncio.gather(
            self.store.run(accounts.games_of_op(self.keys, player)),
            self.store.run(inbox.inbox_op(self.keys.prefix, player)),
        )
        by_game = {entry.game_id: entry for entry in kept}
        entries = []
        for game_id, _listed in listed:
            entry = by_game.get(game_id) or await self._entry(game_id, player)
            if entry is not None:
                entries.append(entry)
        return entries

    async def _entry(self, game_id: str, player: str) -> inbox.InboxEntry | None:
        """The player's entry for a game, from its stream; None for a listing whose append
        did not land."""
        state = await self._listed(game_id)
        if state is None or player not in state.players:
            return None
        since = await self.store.run(reads.last_change_op(self.path, game_id))
        timed = await self.clocks(game_id, state) if self.clocks is not None else []
        return entry_of(game_id, state, player, since, timed[-1][1] if timed else None)


def _my_game(entry: inbox.InboxEntry, now: datetime) -> answers.MyGame:
    """The entry as the API gives it: the same fields, and how long it has waited now."""
    return answers.MyGame(
        **msgspec.structs.asdict(entry), waited_seconds=waited_seconds(entry, now)
    )

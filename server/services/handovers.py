"""A player hands their seat to a bot for good (resigns): the bot plays it from then on, the
others are told, and the record shows from which version (each command's `by`). Nothing is
appended to the rules log (who moves a seat is not a rule), so the workers are asked to act
at once: the seat's decision may be pending, and no append would wake them."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from server.schema import answers
from server.schema.errors import GameNotPlaying
from store import reads
from store.client import AsyncEventStore
from store.command_path import CommandPath
from store.errors import NotSeated
from store.handovers import hand_over_op

HANDOVER_LEVEL = "greedy"
"""The bot that takes a seat handed over: fast and decent (docs/bots.md)."""

Enqueue = Callable[[str, str, int], None]
"""Ask the workers to follow a hand-over: (game id, player id, seat)."""


class HandoverService:
    def __init__(self, store: AsyncEventStore, path: CommandPath, enqueue: Enqueue) -> None:
        self.store, self.path, self.enqueue = store, path, enqueue

    async def resign(self, game_id: str, player: str) -> answers.Resigned:
        state = await self.store.run(reads.current_op(self.path, game_id))
        if state.phase != "playing":
            raise GameNotPlaying(state.phase)
        seat = state.seat_of(player)
        if seat is None:
            raise NotSeated(game_id)
        level = await self.store.run(
            hand_over_op(self.path.context.keys, game_id, player, HANDOVER_LEVEL)
        )
        await asyncio.to_thread(self.enqueue, game_id, player, seat)
        return answers.Resigned(game_id, seat, level, state.version)

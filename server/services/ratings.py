"""The rating list and the ratings shown beside players' names: read from what the follow-ups
of finished games keep (`workers.ratings`, `store.ratings`); reading only."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import msgspec

from projections.ratings import BOT_PREFIX, provisional, shown
from server.schema import answers
from server.services.games import BOT_NAMES
from store import accounts
from store.client import AsyncEventStore
from store.ratings import RatingKeys, list_op, ratings_op


class RatingService:
    def __init__(self, store: AsyncEventStore, keys: accounts.Accounts) -> None:
        self.store = store
        self.keys = keys
        self.ratings = RatingKeys.under(keys.prefix)

    async def page(self, offset: int, limit: int) -> answers.RatingList:
        """The rated players and bot levels from the highest rating down."""
        total, above, listed = await self.store.run(list_op(self.ratings, offset, limit))
        names = [name for name, _shown in listed]
        found = await self.store.run(ratings_op(self.ratings, names))
        people: dict[str, accounts.Player] = {}
        for found_one in await asyncio.gather(  # at once: one round trip, not one a row
            *(self.store.run(accounts.players_op(self.keys, [name])) for name in names
              if not name.startswith(BOT_PREFIX))
        ):  # fmt: skip
            people.update(found_one)
        rows = []
        for number, (name, figure) in enumerate(listed):
            if number and figure < listed[number - 1][1]:
                above = offset + number
            rating = found[name]
            rows.append(
                answers.RatedPlayer(
                    above + 1, name, _name(name, people), figure, provisional(rating),
                    rating.games, rating.mu, rating.sigma,
                )
            )  # fmt: skip
        return answers.RatingList(total, offset, tuple(rows))

    async def of(self, player: answers.PlayerInfo) -> answers.PlayerInfo:
        """The player's public face with their rating."""
        rating = (await self.store.run(ratings_op(self.ratings, [player.player_id])))[
            player.player_id
        ]
        if not rating.games:
            return player
        return msgspec.structs.replace(
            player, rating=shown(rating), provisional=provisional(rating),
            rated_games=rating.games,
        )  # fmt: skip

    async def shown_for(self, players: Sequence[str]) -> tuple[int | None, ...]:
        """The rating shown for each of these players (None: never rated)."""
        found = await self.store.run(ratings_op(self.ratings, players))
        return tuple(shown(found[p]) if found[p].games else None for p in players)


def _name(rated: str, people: dict[str, accounts.Player]) -> str:
    if rated.startswith(BOT_PREFIX):
        level = rated.removeprefix(BOT_PREFIX)
        return BOT_NAMES.get(level, f"{level} bot")
    player = people.get(rated)
    return player.name if player is not None else rated

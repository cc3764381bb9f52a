"""Players: making one with its bearer token, finding the player a token acts for, and the
names others read. A token is shown once and kept only as a hash (store.accounts)."""

from __future__ import annotations

import base64
import secrets
from collections.abc import Callable

from cachetools import LRUCache

from domain.names import clean_name
from server.schema import answers
from server.schema.errors import NotFound, Unauthorized
from store import accounts
from store.client import AsyncEventStore
from store.clock import Clock, iso, system_clock


def new_secret(token_bytes: Callable[[int], bytes]) -> str:
    """A secret to give a client (a bearer token, a stream ticket): 256 random bits, in
    URL-safe base64 without padding (43 characters)."""
    return base64.urlsafe_b64encode(token_bytes(32)).rstrip(b"=").decode()


class AccountService:
    def __init__(
        self,
        store: AsyncEventStore,
        keys: accounts.Accounts,
        *,
        clock: Clock = system_clock,
        token_bytes: Callable[[int], bytes] = secrets.token_bytes,
        cache_size: int = 4096,
    ) -> None:
        self.store = store
        self.keys = keys
        self.clock = clock
        self.token_bytes = token_bytes
        # A token's player never changes, nor does a player's name: both are kept.
        self._tokens: LRUCache[str, str] = LRUCache(cache_size)
        self._names: LRUCache[str, str] = LRUCache(cache_size)

    async def create_player(self, name: str) -> answers.PlayerCreated:
        player_id = "p" + self.token_bytes(9).hex()
        player = accounts.Player(player_id, clean_name(name), iso(self.clock()))
        token = new_secret(self.token_bytes)
        await self.store.run(accounts.create_player_op(self.keys, player, token))
        return answers.PlayerCreated(player.player_id, token)

    async def create_bot(self, level: str, name: str) -> str:
        """A player played by a bot of `level`: it has no token (nobody acts for it over the
        API); the workers play its seats (`workers.jobs`)."""
        player_id = "b" + self.token_bytes(9).hex()
        player = accounts.Player(player_id, clean_name(name), iso(self.clock()), bot=level)
        await self.store.run(accounts.create_bot_op(self.keys, player))
        self._names[player_id] = player.name
        return player_id

    async def authenticate(self, token: str) -> str:
        """The player a bearer token acts for; `Unauthorized` for a token of nobody."""
        player = self._tokens.get(token)
        if player is None:
            player = await self.store.run(accounts.authenticate_op(self.keys, token))
            if player is None:
                raise Unauthorized("unknown token")
            self._tokens[token] = player
        return player

    async def name_of(self, player_id: str) -> str:
        """A player's name; `NotFound` for an unknown id."""
        name = self._names.get(player_id)
        if name is None:
            found = await self.store.run(accounts.players_op(self.keys, [player_id]))
            if player_id not in found:
                raise NotFound(f"no player has the id {player_id!r}")
            name = self._names[player_id] = found[player_id].name
        return name

    async def player(self, player_id: str) -> answers.PlayerInfo:
        return answers.PlayerInfo(player_id, await self.name_of(player_id))

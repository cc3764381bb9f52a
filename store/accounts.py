"""Players, their bearer tokens, the games each one plays, and the lobby of open games.

A token is a random secret shown once; only its SHA-256 is kept (a token is 256 random bits,
so a plain hash cannot be brute-forced and lets a lookup be one GET). Store operations in the
style of `store.protocol`, so the asyncio server and sync tools share them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import msgspec

from store.errors import CommandIdReused
from store.protocol import Call, Op, evaluate


class Player(msgspec.Struct, frozen=True):
    player_id: str
    name: str
    created: str
    bot: str = ""
    """The level of the bot that plays as this player ("" for a person)."""


_player_encoder = msgspec.json.Encoder()
_player_decoder = msgspec.json.Decoder(Player)


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class Accounts:
    """Key names of the player records under the store's prefix. Each operation touches one
    key, so they run unchanged on Redis Cluster; `cluster` says the keys are on one, for the
    reads of several players' keys at once (`store.vacations`)."""

    def __init__(self, prefix: str, *, cluster: bool = False) -> None:
        self.prefix = prefix
        self.cluster = cluster

    def player(self, player_id: str) -> str:
        return f"{self.prefix}:player:{player_id}"

    def token(self, digest: str) -> str:
        return f"{self.prefix}:token:{digest}"

    def creations(self, player_id: str) -> str:
        """The games the player created, by the command id of the request that created each."""
        return f"{self.prefix}:player:{player_id}:creations"

    def games(self, player_id: str) -> str:
        return f"{self.prefix}:player:{player_id}:games"

    def lobby(self) -> str:
        return f"{self.prefix}:lobby"


def create_player_op(accounts: Accounts, player: Player, token: str) -> Op[None]:
    """Record the player, then its token: a token never points to a missing player."""
    yield Call("set", (accounts.player(player.player_id), _player_encoder.encode(player)))
    yield Call("set", (accounts.token(token_digest(token)), player.player_id))


def create_bot_op(accounts: Accounts, player: Player) -> Op[None]:
    """Record a player that a bot plays: no token points to it."""
    yield Call("set", (accounts.player(player.player_id), _player_encoder.encode(player)))


def bot_level_op(accounts: Accounts, player_id: str) -> Op[str]:
    """The level of the bot that plays as the player ("" for a person or an unknown id)."""
    raw = yield Call("get", (accounts.player(player_id),))
    return "" if raw is None else _player_decoder.decode(raw).bot


def authenticate_op(accounts: Accounts, token: str) -> Op[str | None]:
    """The player id a bearer token belongs to, or None."""
    found = yield Call("get", (accounts.token(token_digest(token)),))
    return None if found is None else bytes(found).decode()


def players_op(accounts: Accounts, player_ids: Sequence[str]) -> Op[dict[str, Player]]:
    """The records of these players (unknown ids are left out)."""
    players = {}
    for player_id in player_ids:  # one GET each, not MGET: the keys lie in different slots
        raw = yield Call("get", (accounts.player(player_id),))
        if raw is not None:
            players[player_id] = _player_decoder.decode(raw)
    return players


def claim_creation_op(
    accounts: Accounts, player_id: str, command_id: str, game_id: str, request: str
) -> Op[str]:
    """The game a creation request makes: `game_id` for a new command id, the game of the
    first request for one seen before (a retry); `CommandIdReused` when that first request
    asked for something else. Claimed before the game is created, so that a retry after a
    lost answer creates the same game (or finds it made) and never a second one."""
    key = accounts.creations(player_id)
    claimed = yield Call("hsetnx", (key, command_id, f"{game_id} {request}"))
    if claimed:
        return game_id
    found = yield Call("hget", (key, command_id))
    first_game, _, first_request = bytes(found).decode().partition(" ")
    if first_request != request:
        raise CommandIdReused(command_id)
    return first_game


def list_game(accounts: Accounts, player_id: str, game_id: str, score: float) -> Call:
    """List a game among the player's, scored by when it was last listed: made before the
    append that seats the player (see `store.games`), and again by each retried join, so
    that a listing is always younger than the append it waits for."""
    return Call("zadd", (accounts.games(player_id), {game_id: score}))


def games_of_op(accounts: Accounts, player_id: str) -> Op[list[tuple[str, float]]]:
    """The player's games and when each was listed (seconds since the epoch)."""
    found = yield Call("zrange", (accounts.games(player_id), 0, -1, False, True))
    return [(bytes(game).decode(), float(score)) for game, score in found]


def unlist_game_op(
    accounts: Accounts, player_id: str, game_id: str, listed_before: float
) -> Op[None]:
    """Take a game off the player's list if it was listed before `listed_before` and not
    since: a listing whose append never landed."""
    yield from _unlist(accounts.games(player_id), game_id, listed_before)


def drop_listing_op(accounts: Accounts, player_id: str, game_id: str) -> Op[None]:
    """Take a game off the player's list for good: they left its table."""
    yield Call("zrem", (accounts.games(player_id), game_id))


def _unlist(key: str, member: str, listed_before: float) -> Op[None]:
    yield from evaluate("unlist", 1, (key, member, repr(listed_before)))


def open_game(accounts: Accounts, game_id: str, score: float) -> Call:
    """List a game in the lobby while it waits for players. Made before the append that
    creates the game (see `store.games`)."""
    return Call("zadd", (accounts.lobby(), {game_id: score}))


def close_game_op(accounts: Accounts, game_id: str) -> Op[None]:
    """Take a game out of the lobby: once its table is full, it never waits again."""
    yield Call("zrem", (accounts.lobby(), game_id))


def drop_open_game_op(accounts: Accounts, game_id: str, listed_before: float) -> Op[None]:
    """Take a game out of the lobby if it was listed before `listed_before`: a listing whose
    creation never landed."""
    yield from _unlist(accounts.lobby(), game_id, listed_before)


def lobby_op(accounts: Accounts, limit: int) -> Op[list[tuple[str, float]]]:
    """The games waiting for players, oldest first, and when each was listed."""
    found = yield Call("zrange", (accounts.lobby(), 0, limit - 1, False, True))
    return [(bytes(game).decode(), float(score)) for game, score in found]

"""Players, their bearer tokens, the games each one plays, and the lobby of open games.

A token is a random secret shown once; only its SHA-256 is kept (a token is 256 random bits,
so a plain hash cannot be brute-forced and lets a lookup be one GET). Store operations in the
style of `store.ops`, so the asyncio server and sync tools share them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import msgspec

from store import ops


class Player(msgspec.Struct, frozen=True):
    player_id: str
    name: str
    created: str


_player_encoder = msgspec.json.Encoder()
_player_decoder = msgspec.json.Decoder(Player)


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class Accounts:
    """Key names of the player records under the store's prefix. Each operation touches one
    key, so they run unchanged on Redis Cluster."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix

    def player(self, player_id: str) -> str:
        return f"{self.prefix}:player:{player_id}"

    def token(self, digest: str) -> str:
        return f"{self.prefix}:token:{digest}"

    def games(self, player_id: str) -> str:
        return f"{self.prefix}:player:{player_id}:games"

    def lobby(self) -> str:
        return f"{self.prefix}:lobby"


def create_player_op(accounts: Accounts, player: Player, token: str) -> ops.Op[None]:
    """Record the player, then its token: a token never points to a missing player."""
    yield ops.Call("set", (accounts.player(player.player_id), _player_encoder.encode(player)))
    yield ops.Call("set", (accounts.token(token_digest(token)), player.player_id))


def authenticate_op(accounts: Accounts, token: str) -> ops.Op[str | None]:
    """The player id a bearer token belongs to, or None."""
    found = yield ops.Call("get", (accounts.token(token_digest(token)),))
    return None if found is None else bytes(found).decode()


def players_op(accounts: Accounts, player_ids: Sequence[str]) -> ops.Op[dict[str, Player]]:
    """The records of these players (unknown ids are left out)."""
    players = {}
    for player_id in player_ids:  # one GET each, not MGET: the keys lie in different slots
        raw = yield ops.Call("get", (accounts.player(player_id),))
        if raw is not None:
            players[player_id] = _player_decoder.decode(raw)
    return players


def list_game(accounts: Accounts, player_id: str, game_id: str, score: float) -> ops.Call:
    """List a game among the player's, scored by when it was last listed: made before the
    append that seats the player (see `store.games`), and again by each retried join, so
    that a listing is always younger than the append it waits for."""
    return ops.Call("zadd", (accounts.games(player_id), {game_id: score}))


def games_of_op(accounts: Accounts, player_id: str) -> ops.Op[list[tuple[str, float]]]:
    """The player's games and when each was listed (seconds since the epoch)."""
    found = yield ops.Call("zrange", (accounts.games(player_id), 0, -1, False, True))
    return [(bytes(game).decode(), float(score)) for game, score in found]


def unlist_game_op(
    accounts: Accounts, player_id: str, game_id: str, listed_before: float
) -> ops.Op[None]:
    """Take a game off the player's list if it was listed before `listed_before` and not
    since: a listing whose append never landed."""
    yield from _unlist(accounts.games(player_id), game_id, listed_before)


def _unlist(key: str, member: str, listed_before: float) -> ops.Op[None]:
    yield from ops.evaluate("unlist", 1, (key, member, repr(listed_before)))


def open_game(accounts: Accounts, game_id: str, score: float) -> ops.Call:
    """List a game in the lobby while it waits for players. Made before the append that
    creates the game (see `store.games`)."""
    return ops.Call("zadd", (accounts.lobby(), {game_id: score}))


def close_game_op(accounts: Accounts, game_id: str) -> ops.Op[None]:
    """Take a game out of the lobby: once its table is full, it never waits again."""
    yield ops.Call("zrem", (accounts.lobby(), game_id))


def drop_open_game_op(accounts: Accounts, game_id: str, listed_before: float) -> ops.Op[None]:
    """Take a game out of the lobby if it was listed before `listed_before`: a listing whose
    creation never landed."""
    yield from _unlist(accounts.lobby(), game_id, listed_before)


def lobby_op(accounts: Accounts, limit: int) -> ops.Op[list[tuple[str, float]]]:
    """The games waiting for players, oldest first, and when each was listed."""
    found = yield ops.Call("zrange", (accounts.lobby(), 0, limit - 1, False, True))
    return [(bytes(game).decode(), float(score)) for game, score in found]

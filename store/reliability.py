"""Where the reliability record is kept: each finished game's turns by seat, and the turns the
clock played for a player during their quiet hours. Store operations in the style of
`store.protocol`; what a turn is and how the record counts is `projections.reliability`'s.

- `<prefix>:turns`: game id -> its `GameTurns` (MessagePack), written by the follow-up of the
  game's end (`workers.reliability`) and made again by `patrician rebuild-projections`, so that
  a player's page reads a finished game's turns in one HMGET instead of its whole log.
- `<prefix>:player:<id>:quiet`: the set of `<game id>:<version>`, each a turn the clock played
  for the player while their quiet hours held (as they were set then: a setting is not kept
  with its history, so the follow-up of the clock's append notes it at once). The record
  counts those turns as on time. Not made again by a rebuild: it is no fold of the games.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import msgspec

from store.accounts import Accounts
from store.protocol import Call, Op, reply_text


class SeatTurns(msgspec.Struct, frozen=True, gc=False):
    """One seat's turns in a game, as the reliability record counts them."""

    player: str
    own: int = 0
    """Turns its player played (a bot player's own turns included)."""
    handed: int = 0
    """Turns a bot played after the player handed the seat over (resigned): not theirs."""
    clocked: tuple[tuple[int, float], ...] = ()
    """The turns the clock played when their deadline passed: the first version of the
    clock's append in each, and when it was made (seconds since the epoch)."""


class GameTurns(msgspec.Struct, frozen=True, gc=False):
    """A finished game's turns, seat by seat (seat 0 first)."""

    ended: str
    seats: tuple[SeatTurns, ...]


_encode = msgspec.msgpack.encode
_GAME = msgspec.msgpack.Decoder(GameTurns)


def turns_key(prefix: str) -> str:
    return f"{prefix}:turns"


def quiet_key(accounts: Accounts, player_id: str) -> str:
    return f"{accounts.player(player_id)}:quiet"


def quiet_member(game_id: str, version: int) -> str:
    return f"{game_id}:{version}"


def write_turns_op(prefix: str, game_id: str, turns: GameTurns) -> Op[None]:
    """Keep a finished game's turns (the same again when written twice)."""
    yield Call("hset", (turns_key(prefix), game_id, _encode(turns)))


def turns_op(prefix: str, game_ids: Sequence[str]) -> Op[dict[str, GameTurns]]:
    """The turns kept of these games (a game not kept, or not read, is left out)."""
    if not game_ids:
        return {}
    found = yield Call("hmget", (turns_key(prefix), *game_ids))
    kept = {}
    for game_id, raw in zip(game_ids, found, strict=True):
        if raw is not None:
            try:
                kept[game_id] = _GAME.decode(raw)
            except msgspec.DecodeError:  # written by a newer server: counted from its log
                continue
    return kept


def clear_turns_op(prefix: str) -> Op[None]:
    yield Call("delete", (turns_key(prefix),))


def mark_quiet_op(accounts: Accounts, player_id: str, game_id: str, version: int) -> Op[None]:
    """Note that the clock played the player's turn at `version` during their quiet hours."""
    yield Call("sadd", (quiet_key(accounts, player_id), quiet_member(game_id, version)))


def quiet_marks_op(accounts: Accounts, player_id: str) -> Op[frozenset[str]]:
    """The player's turns the clock played during their quiet hours (`quiet_member`)."""
    found: Iterable[object] = yield Call("smembers", (quiet_key(accounts, player_id),))
    return frozenset(reply_text(member) for member in found)

"""Seats handed to a bot for good during play (a player resigns): the bot that plays each one
from then on. Kept beside the game, not in its rules log: who moves a seat is not a rule; the
record shows it in each command's `by`. Store operations in the style of `store.protocol`."""

from __future__ import annotations

from store.protocol import Call, Op, reply_text


def handovers_key(prefix: str, game_id: str) -> str:
    return f"{prefix}:handed:{game_id}"


def hand_over_op(prefix: str, game_id: str, player_id: str, level: str) -> Op[str]:
    """Hand the player's seat to a bot of `level`, once: the level that plays it now (the
    first one, when it was handed over before)."""
    key = handovers_key(prefix, game_id)
    yield Call("hsetnx", (key, player_id, level))
    return reply_text((yield Call("hget", (key, player_id))))


def handovers_op(prefix: str, game_id: str) -> Op[dict[str, str]]:
    """The bot level of each player who handed their seat over in this game."""
    found = yield Call("hgetall", (handovers_key(prefix, game_id),))
    return {reply_text(player): reply_text(level) for player, level in found.items()}


def handed_over_op(prefix: str, game_id: str, player_id: str) -> Op[bool]:
    """Whether the player handed their seat over: then they may no longer act in the game."""
    return bool((yield Call("hexists", (handovers_key(prefix, game_id), player_id))))

"""Where a finished game's analysis is kept while it is made and once it is made: one hash per
game, a field per slice of its decisions. Store operations in the style of `store.protocol`;
what a slice holds is worked out above (`projections.analysis`), this only keeps its bytes.

Why slices: a game is analysed by jobs of a few seconds each (`workers.analysis`), so that
no job holds a worker for a minute; each writes its slice under its first decision's index,
the same bytes however often it runs, and the count of slices written is the progress.
Once the last slice is written, each player's accuracy in the game is kept beside their other
games' (`accuracy_key`), so that a player's page reads one hash, not the analysis of each game.
"""

from __future__ import annotations

from collections.abc import Mapping

import msgspec

from store.protocol import Call, Op, reply_text

DECISIONS = "decisions"
"""The field that holds how many decisions the game has (written by the first slice)."""


def analysis_key(prefix: str, game_id: str) -> str:
    """The game's analysis (in the game's own hash tag: one slot with nothing else)."""
    return f"{prefix}:analysis:{{{game_id}}}"


def slice_field(start: int) -> str:
    return f"from:{start}"


def write_slice_op(prefix: str, game_id: str, decisions: int, start: int, data: bytes) -> Op[None]:
    """Keep one slice of the analysis: the decisions from index `start` (of `decisions`)."""
    key = analysis_key(prefix, game_id)
    yield Call("hset", (key, None, None, {DECISIONS: decisions, slice_field(start): data}))


def analysis_op(prefix: str, game_id: str) -> Op[tuple[int, dict[int, bytes]]]:
    """How many decisions the game has (0: its analysis has not begun) and the slices kept so
    far, by their first decision's index."""
    found = yield Call("hgetall", (analysis_key(prefix, game_id),))
    decisions = 0
    slices: dict[int, bytes] = {}
    for field, value in (found or {}).items():
        name = reply_text(field)
        if name == DECISIONS:
            decisions = int(reply_text(value))
        elif name.startswith("from:"):
            slices[int(name[5:])] = value if isinstance(value, bytes) else value.encode()
    return decisions, slices


class GameAccuracy(msgspec.Struct, frozen=True, gc=False):
    """A player's accuracy in one analysed game (`projections.analysis`), kept for their page."""

    accuracy: float
    own_decisions: int
    """Their own judged decisions in it (the weight of its accuracy in their record)."""


_ACCURACY = msgspec.msgpack.Decoder(GameAccuracy)


def accuracy_key(prefix: str, player_id: str) -> str:
    """game id -> the player's `GameAccuracy` in it (MessagePack), for every analysed game of
    theirs in which they made a judged decision."""
    return f"{prefix}:accuracy:{player_id}"


def write_accuracies_op(
    prefix: str, game_id: str, accuracies: Mapping[str, GameAccuracy]
) -> Op[None]:
    """Keep each player's accuracy in the game (the same bytes however often)."""
    for player_id, accuracy in accuracies.items():
        key = accuracy_key(prefix, player_id)
        yield Call("hset", (key, game_id, msgspec.msgpack.encode(accuracy)))


def accuracies_op(prefix: str, player_id: str) -> Op[dict[str, GameAccuracy]]:
    """The player's accuracy in each analysed game of theirs, by game id."""
    found = yield Call("hgetall", (accuracy_key(prefix, player_id),))
    return {reply_text(game): _ACCURACY.decode(value) for game, value in (found or {}).items()}

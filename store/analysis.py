"""Where a finished game's analysis is kept while it is made and once it is made: one hash per
game, a field per slice of its decisions. Store operations in the style of `store.protocol`;
what a slice holds is worked out above (`projections.analysis`), this only keeps its bytes.

Why slices: a game is analysed by jobs of a few seconds each (`workers.analysis`), so that
no job holds a worker for a minute; each writes its slice under its first decision's index,
the same bytes however often it runs, and the count of slices written is the progress.
"""

from __future__ import annotations

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

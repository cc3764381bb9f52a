"""Rematches: the pointer from a finished game to the one new table its players were offered
(`server.services.rematch`). Kept beside the game, never in its log: the log of a finished
game ends with its seed, and a rematch changes nothing in it. One key per game, claimed
before the new game is created, so that two players asking at once (or one asking again
after a lost answer) get the same table and never a second one. Store operations in the
style of `store.protocol`.
"""

from __future__ import annotations

import msgspec

from domain.view import RematchView
from store.command_path import CommandPath
from store.errors import GameNotFound
from store.protocol import Call, Op
from store.reads import current_op
from store.tables import invite_code_of


class Rematch(msgspec.Struct, frozen=True):
    """Read leniently: a field added later gets its default."""

    game_id: str
    """The new game (it may not exist yet: its creation follows the claim)."""
    by: str
    """Who asked for it: the new game's creator."""
    name: str
    """Their name, as the offer shows it."""


_decoder = msgspec.json.Decoder(Rematch)


def rematch_key(prefix: str, game_id: str) -> str:
    return f"{prefix}:rematch:{game_id}"


def claim_op(prefix: str, game_id: str, rematch: Rematch) -> Op[Rematch]:
    """The rematch of the game: `rematch` if none was claimed before, else the first one."""
    key = rematch_key(prefix, game_id)
    claimed = yield Call("setnx", (key, msgspec.json.encode(rematch)))
    if claimed:
        return rematch
    first = yield from rematch_op(prefix, game_id)
    assert first is not None  # claimed, and never deleted
    return first


def rematch_op(prefix: str, game_id: str) -> Op[Rematch | None]:
    """The rematch claimed for the game, or None."""
    found = yield Call("get", (rematch_key(prefix, game_id),))
    return None if found is None else _decoder.decode(found)


def offer_op(path: CommandPath, prefix: str, game_id: str, seated: bool) -> Op[RematchView | None]:
    """The rematch of a finished game as a reader of its board sees it: with the code that
    opens the new table for its players (`seated`) only, as a waiting table's own board gives
    it only to the players at it. None until the new game exists (it is created right after
    its claim)."""
    claimed = yield from rematch_op(prefix, game_id)
    if claimed is None:
        return None
    try:
        state = yield from current_op(path, claimed.game_id)
    except GameNotFound:
        return None
    code = invite_code_of(state) if seated else None
    return RematchView(claimed.game_id, claimed.by, claimed.name, code)

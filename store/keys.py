"""Where a game lives in Redis: key names, hash tags, shards and stream entry ids.

Every key of one game and the outbox feed of its shard share one hash tag (`{s07}`), so the
append script, which writes the events, the command memo and the outbox together, touches a
single Redis Cluster slot and runs unchanged on a cluster. The shard is a stable hash of the game
id (never Python's `hash`, which changes per process), so every process agrees on it.
"""

from __future__ import annotations

import hashlib
import re
from typing import NamedTuple

_GAME_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")
_PREFIX = re.compile(r"[A-Za-z0-9_.:-]{1,64}")
MAX_COMMAND_ID = 256


class GameKeys(NamedTuple):
    events: str
    commands: str
    snapshot: str
    outbox: str
    handed: str
    """The players who handed their seat to a bot for good (`store.handovers`): in the game's
    slot, so that the append script checks it on a cluster too."""


def entry_id(version: int) -> str:
    """The stream entry id of `version`: `<version>-1`. Ids grow with versions, so XADD itself
    refuses an id at or below the stream's top, and XREAD after `<v>-1` starts at `v + 1`."""
    return f"{version}-1"


def check_game_id(game_id: str) -> str:
    if not isinstance(game_id, str) or not _GAME_ID.fullmatch(game_id):
        raise ValueError(f"a game id is 1-128 of [A-Za-z0-9_.-], not {game_id!r}")
    return game_id


def check_command_id(command_id: str) -> str:
    if not isinstance(command_id, str) or not 0 < len(command_id) <= MAX_COMMAND_ID:
        raise ValueError(f"a command id is a non-empty str of at most {MAX_COMMAND_ID} chars")
    return command_id


class KeySpace:
    """The key names under one prefix and shard count. Both must stay fixed for the life of a
    deployment: changing either moves every game to keys that hold nothing."""

    def __init__(self, prefix: str = "patrician", shards: int = 16) -> None:
        if not _PREFIX.fullmatch(prefix):
            # Braces would start a hash tag of their own and put games in one slot.
            raise ValueError(f"a key prefix is 1-64 of [A-Za-z0-9_.:-], not {prefix!r}")
        if not 1 <= shards <= 16384:
            raise ValueError("shards must be between 1 and 16384 (the cluster's slot count)")
        self.prefix = prefix
        self.shards = shards
        self._width = max(2, len(str(shards - 1)))
        self._games: dict[str, GameKeys] = {}

    def shard(self, game_id: str) -> int:
        digest = hashlib.sha256(check_game_id(game_id).encode()).digest()
        return int.from_bytes(digest[:8], "big") % self.shards

    def tag(self, shard: int) -> str:
        return f"{{s{shard:0{self._width}d}}}"

    def game(self, game_id: str) -> GameKeys:
        keys = self._games.get(game_id)
        if keys is None:  # names are pure functions of the id: remember the recent ones
            shard = self.shard(game_id)
            base = f"{self.prefix}:{self.tag(shard)}:game:{game_id}:"
            keys = GameKeys(
                base + "events",
                base + "commands",
                base + "snapshot",
                self.outbox(shard),
                base + "handed",
            )
            if len(self._games) >= 4096:
                self._games.clear()
            self._games[game_id] = keys
        return keys

    def outbox(self, shard: int) -> str:
        """The outbox feed of one shard, which the workers consume with consumer groups."""
        if not 0 <= shard < self.shards:
            raise ValueError(f"no shard {shard} among {self.shards}")
        return f"{self.prefix}:{self.tag(shard)}:outbox"

    def outbox_keys(self) -> list[str]:
        """Every outbox feed, one per shard, in shard order."""
        return [self.outbox(shard) for shard in range(self.shards)]

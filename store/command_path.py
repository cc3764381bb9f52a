"""What the command path works with besides Redis: the store's context, the card data new
games are created with, the cache of recent states and the snapshot policy. Apart from the
operations of the path (`store.games`, `store.tables`) and its reads (`store.reads`), which
all take it, so that none of them needs another to know its shape.
"""

from __future__ import annotations

from threading import Lock

from cachetools import LRUCache

from domain.gamedata import GameData
from domain.state import State
from store.context import Context
from store.loading import SnapshotPolicy


class StateCache:
    """The latest states of recently used games, by game id. A cached state is only a
    starting point: the append checks the version, and reads catch up from Redis. Safe to
    share between threads (a follower follows several games at once): cachetools' caches
    are not, so a lock guards it."""

    def __init__(self, size: int = 2048) -> None:
        self._states: LRUCache[str, State] = LRUCache(size)
        self._lock = Lock()

    def get(self, game_id: str) -> State | None:
        with self._lock:
            return self._states.get(game_id)

    def put(self, game_id: str, state: State) -> None:
        with self._lock:
            known = self._states.get(game_id)
            if known is None or known.version <= state.version:
                self._states[game_id] = state


class CommandPath:
    """What the command path needs besides Redis: the store context, the card data new games
    are created with, the state cache and the snapshot policy."""

    def __init__(
        self,
        context: Context,
        game_data: GameData,
        *,
        cache: StateCache | None = None,
        snapshots: SnapshotPolicy | None = None,
        conflict_retries: int = 3,
    ) -> None:
        self.context = context
        self.game_data = game_data
        self.cache = cache or StateCache()
        self.snapshots = snapshots or SnapshotPolicy()
        self.conflict_retries = conflict_retries

"""What the command path works with besides Redis: the store's context, the card data new
games are created with, the cache of recent states and the snapshot policy. Apart from the
operations of the path (`store.games`, `store.tables`) and its reads (`store.reads`), which
all take it, so that none of them needs another to know its shape.
"""

from __future__ import annotations

from domain.gamedata import GameData
from domain.state import State
from store.context import Context
from store.loading import SnapshotPolicy
from store.shared_lru import SharedLRU


class StateCache:
    """The latest states of recently used games, by game id. A cached state is only a
    starting point: the append checks the version, and reads catch up from Redis. Shared by
    the threads of a follower (`store.shared_lru`)."""

    def __init__(self, size: int = 2048) -> None:
        self._states: SharedLRU[str, State] = SharedLRU(size)

    def get(self, game_id: str) -> State | None:
        return self._states.get(game_id)

    def put(self, game_id: str, state: State) -> None:
        self._states.put(game_id, state, unless=lambda known: known.version > state.version)


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

"""How much Redis memory one game takes: `MEMORY USAGE` of each of its keys.

The operator sizes a Redis by games, and the archive (docs/store.md, "Archive") exists to
bring a finished game's footprint down: this is the one measure both the memory benchmark
(bench/memory.py) and the load benchmark print. `SAMPLES 0` makes Redis count every element
of a stream or hash rather than estimate from a sample, so the figure is exact. Every key
the server keeps for one game counts, the ones beside its hash tag too (its table talk, its
time control and timers, its seats' last decisions), so the figure is what a game costs.
"""

from __future__ import annotations

from typing import Any

from store.accounts import Accounts
from store.archived import archive_key
from store.handovers import legacy_handovers_key
from store.keys import KeySpace
from store.notifications import NotificationKeys
from store.talk import talk_key
from store.time_controls import time_control_key
from store.timers import game_timers_key


def key_memory(client: Any, key: str) -> int:
    """The bytes `MEMORY USAGE key SAMPLES 0` reports (0 for a key that does not exist)."""
    used = client.execute_command("MEMORY", "USAGE", key, "SAMPLES", "0")
    return 0 if used is None else int(used)


def game_keys(keys: KeySpace, game_id: str) -> dict[str, str]:
    """Each key the server may keep for the game, by a name for it: all but those that
    expire within minutes (a player's count of messages, their live-stream marker) and the
    outbox, which is the shard's, not the game's."""
    own = keys.game(game_id)
    prefix = keys.prefix
    return {
        **{name: key for name, key in zip(own._fields, own, strict=True) if name != "outbox"},
        "archive": archive_key(own),
        "talk": talk_key(prefix, game_id),
        "clock": time_control_key(prefix, game_id),
        "timers": game_timers_key(prefix, game_id),
        "decided": NotificationKeys(Accounts(prefix)).decided(game_id),
        "handed_before": legacy_handovers_key(prefix, game_id),
    }


def game_memory(client: Any, keys: KeySpace, game_id: str) -> dict[str, int]:
    """Bytes per key of one game (`game_keys`), and their `total`."""
    found = {name: key_memory(client, key) for name, key in game_keys(keys, game_id).items()}
    found["total"] = sum(found.values())
    return found

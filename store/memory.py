"""How much Redis memory one game takes: `MEMORY USAGE` of each of its keys.

The operator sizes a Redis by games, and the archive (docs/store.md, "Archive") exists to
bring a finished game's footprint down: this is the one measure both the memory benchmark
(bench/memory.py) and the load benchmark print. `SAMPLES 0` makes Redis count every element
of a stream or hash rather than estimate from a sample, so the figure is exact.
"""

from __future__ import annotations

from typing import Any

from store.archived import archive_key
from store.keys import GameKeys


def key_memory(client: Any, key: str) -> int:
    """The bytes `MEMORY USAGE key SAMPLES 0` reports (0 for a key that does not exist)."""
    used = client.execute_command("MEMORY", "USAGE", key, "SAMPLES", "0")
    return 0 if used is None else int(used)


def game_memory(client: Any, keys: GameKeys) -> dict[str, int]:
    """Bytes per key of one game (its events, commands, snapshot, hand-overs and archive; the
    outbox is the shard's, not the game's, and is left out), and their `total`."""
    found = {
        name: key_memory(client, key)
        for name, key in zip(keys._fields, keys, strict=True)
        if name != "outbox"
    }
    found["archive"] = key_memory(client, archive_key(keys))
    found["total"] = sum(found.values())
    return found

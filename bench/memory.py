"""Redis memory per game, from `MEMORY USAGE` (issue "Run it for real"). Run:
`.venv/bin/python bench/memory.py [--redis-url URL]`.

Plays finished games through the command path on the given Redis (default the machine's,
127.0.0.1:6379) under a unique key prefix: one 5-seat game with both modules and one 2-seat
game, each command sent on its own (the most appends a game can take, so the most command
records and metadata). Prints the bytes of each key of each game finished, then archived
(`store.archive`), against the targets: at most 100 KB per finished 5-seat game, at most
40 KB per archived one. Deletes its keys at the end.
"""

from __future__ import annotations

import argparse
import random
import sys
import uuid
from pathlib import Path
from typing import Any

# Run as a script, this file's folder comes first on sys.path and would shadow `store`.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).parent.resolve()]

import redis  # noqa: E402

from domain.legal import legal_commands  # noqa: E402
from server.config.card_data import load_game_data  # noqa: E402
from store.archiving import archive_game  # noqa: E402
from store.client import EventStore  # noqa: E402
from store.command_path import CommandPath  # noqa: E402
from store.games import execute_op  # noqa: E402
from store.memory import game_memory  # noqa: E402
from store.reads import current_op  # noqa: E402
from store.tables import create_op, invite_code_of, join_op  # noqa: E402

NOW = "2026-12-01T12:00:00.000Z"
FINISHED_TARGET = 100_000
ARCHIVED_TARGET = 40_000
NAMES = ("Mary", "John", "Ada", "Ugo", "Lia")


def play_finished_game(
    store: EventStore, path: CommandPath, game_id: str, *, seats: int, modules: tuple[str, ...],
    seed: int,
) -> int:  # fmt: skip
    """Create, fill and play a game to its end with random legal commands; its last version."""
    rng = random.Random(seed)
    # ids as the server makes them: players "p" + 18 hex digits, the web client's command
    # ids 32 hex digits (stored as "cmd:<player>:<id>")
    players = [f"p{rng.randbytes(9).hex()}" for _seat in range(seats)]
    created = store.run(
        create_op(
            path, game_id, player=players[0], name=NAMES[0], edition="towers", seats=seats,
            modules=modules, entropy=f"{rng.getrandbits(64):x}",
            server_seed=rng.randbytes(32), now=NOW,
        )
    )  # fmt: skip
    code = invite_code_of(created.state)
    for seat, player in enumerate(players[1:], 1):
        store.run(
            join_op(
                path, game_id, player=player, name=NAMES[seat], invite_code=code,
                entropy=f"{rng.getrandbits(64):x}", now=NOW,
            )
        )  # fmt: skip
    state = store.run(current_op(path, game_id))
    count = 0
    while state.pending is not None:
        seat = state.pending.seat
        command = rng.choice(legal_commands(state, seat))
        count += 1
        state = store.run(
            execute_op(
                path, game_id, player=state.players[state.seat_players[seat]],
                expected_version=state.version, command_id=rng.randbytes(16).hex(),
                commands=[command],
                now=NOW,
            )
        ).state  # fmt: skip
    return state.version


def _line(label: str, used: dict[str, int], target: int | None) -> str:
    parts = " ".join(f"{name} {size / 1000:.1f}" for name, size in used.items() if name != "total")
    verdict = "" if target is None else (
        f"  target <= {target / 1000:.0f} KB: {'ok' if used['total'] <= target else 'MISSED'}"
    )  # fmt: skip
    return f"{label:<34} {used['total'] / 1000:7.1f} KB  ({parts}){verdict}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/0")
    args = parser.parse_args()
    client: Any = redis.Redis.from_url(args.redis_url)
    prefix = f"bench-memory-{uuid.uuid4().hex[:10]}"
    store = EventStore(client, prefix=prefix)
    path = CommandPath(store.context, load_game_data())
    ok = True
    try:
        for label, seats, modules, seed in (
            ("5 seats, both modules", 5, ("trade_routes", "delegates"), 2),
            ("2 seats, no module", 2, (), 1),
        ):
            game_id = f"mem{seats}"
            version = play_finished_game(
                store, path, game_id, seats=seats, modules=modules, seed=seed
            )
            finished = game_memory(client, store.keys, game_id)
            target = FINISHED_TARGET if seats == 5 else None
            print(_line(f"{label}, {version} events: finished", finished, target))
            assert archive_game(store, game_id) == "archived"
            archived = game_memory(client, store.keys, game_id)
            print(_line(f"{label}: archived", archived, ARCHIVED_TARGET))
            ok = ok and archived["total"] <= ARCHIVED_TARGET
            ok = ok and (target is None or finished["total"] <= target)
    finally:
        for key in client.scan_iter(match=f"{prefix}:*", count=1000):
            client.delete(key)
        client.close()
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()

"""Seats handed to a bot for good during play (a player resigns): the bot that plays each one
from then on. Kept beside the game, not in its rules log: who moves a seat is not a rule; the
record shows it in each command's `by`. Store operations in the style of `store.protocol`.

A game's hand-overs are a hash in the game's own slot (`GameKeys.handed`), so that the
append script refuses a command of a player who handed their seat over in the same atomic
step, on a cluster too. They were kept under `<prefix>:handed:<game>` before (another slot):
those are still read, and a new hand-over is written there too, so that the processes of the
version before, while a rolling upgrade runs them beside these, refuse the player and let the
bot play the seat as well (`legacy_handovers_key`; docs/operations.md, "Upgrading").

Once every process runs this version, `patrician move-handovers` copies those into their
games' slots and marks the store (`move_earlier`, `handovers_moved_key`): a command on a
cluster, which had to ask the old place before its append (the script cannot reach it
there), then asks it no more, for as long as the mark is there (docs/operations.md,
"Upgrading": when to take it away).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

from store.archived import archive_key
from store.context import Context
from store.errors import StoreError, StoreUnavailable
from store.keys import KeySpace
from store.protocol import Call, Op, evaluate, reply_text


def legacy_handovers_key(prefix: str, game_id: str) -> str:
    """Where a game's hand-overs made before they moved into its slot are."""
    return f"{prefix}:handed:{game_id}"


def handovers_moved_key(prefix: str) -> str:
    """Set once the hand-overs of before were copied into their games' slots."""
    return f"{prefix}:handovers-moved"


def hand_over_op(keys: KeySpace, game_id: str, player_id: str, level: str) -> Op[str]:
    """Hand the player's seat to a bot of `level`, once: the level that plays it now (the
    first one, when it was handed over before)."""
    earlier = yield Call("hget", (legacy_handovers_key(keys.prefix, game_id), player_id))
    if earlier is not None:
        return reply_text(earlier)
    key = keys.game(game_id).handed
    yield Call("hsetnx", (key, player_id, level))
    level = reply_text((yield Call("hget", (key, player_id))))
    yield Call("hsetnx", (legacy_handovers_key(keys.prefix, game_id), player_id, level))
    return level


def handovers_op(keys: KeySpace, game_id: str) -> Op[dict[str, str]]:
    """The bot level of each player who handed their seat over in this game (the two parts
    below, one after the other; gathered with others, ask each part as an op of its own)."""
    found = yield from game_handovers_op(keys, game_id)
    return handover_levels(found, (yield from earlier_handovers_op(keys, game_id)))


def handover_levels(found: dict[str, str], earlier: dict[str, str]) -> dict[str, str]:
    """The level of each seat handed over, from the game's hand-overs and those kept where
    they were before (the first level given wins, and those were given first)."""
    return found | earlier


def game_handovers_op(keys: KeySpace, game_id: str) -> Op[dict[str, str]]:
    """The hand-overs kept in the game's slot."""
    return _levels((yield Call("hgetall", (keys.game(game_id).handed,))))


def earlier_handovers_op(keys: KeySpace, game_id: str) -> Op[dict[str, str]]:
    """The hand-overs made before they moved into the game's slot (none in a new game)."""
    return _levels((yield Call("hgetall", (legacy_handovers_key(keys.prefix, game_id),))))


def _levels(found: dict[bytes | str, bytes | str]) -> dict[str, str]:
    return {reply_text(player): reply_text(level) for player, level in found.items()}


def handed_over_op(ctx: Context, game_id: str, player_id: str) -> Op[bool]:
    """Whether the player handed their seat over: then they may no longer act in the game.
    One round trip on a single Redis (`handed.lua` asks both places); two on a cluster."""
    game_key = ctx.keys.game(game_id).handed
    earlier_key = legacy_handovers_key(ctx.keys.prefix, game_id)
    if not ctx.cluster:
        return bool((yield from evaluate("handed", 2, (game_key, earlier_key, player_id))))
    if (yield Call("hexists", (game_key, player_id))):
        return True
    return (yield from handed_over_earlier_op(ctx, game_id, player_id))


def handed_over_earlier_op(ctx: Context, game_id: str, player_id: str) -> Op[bool]:
    """Whether the player handed their seat over before the hand-overs moved into the game's
    slot: what a command path on a cluster asks before its append, whose script checks the
    game's own hand-overs but cannot reach these there. Not asked once they were copied into
    the games' slots (`earlier_moved_op`)."""
    if (yield from earlier_moved_op(ctx)):
        return False
    earlier_key = legacy_handovers_key(ctx.keys.prefix, game_id)
    return bool((yield Call("hexists", (earlier_key, player_id))))


def earlier_moved_op(ctx: Context) -> Op[bool]:
    """Whether the hand-overs of before were copied into their games' slots, as last asked
    of Redis (`store.context.MovedFlag`: now and then, whatever it answered before)."""
    moved = ctx.handovers_moved
    if moved.due():
        moved.done = bool((yield Call("exists", (handovers_moved_key(ctx.keys.prefix),))))
    return moved.done


def earlier_handover_keys(client: Any, prefix: str) -> Iterator[str]:
    """The keys of hand-overs kept where they were before (by SCAN, on every master of a
    cluster: for the tool that moves them, never for a request)."""
    for key in client.scan_iter(f"{legacy_handovers_key(prefix, '')}*", 1000):
        yield reply_text(key)


def move_earlier_op(keys: KeySpace, game_id: str) -> Op[int]:
    """Copy the game's hand-overs of before into its slot, the level of before where both
    have one (as `handover_levels` reads them); how many. The old ones stay: the version
    before reads only those. Refused (ValueError) for a game with neither events nor an
    archive under these keys: a prefix or shard count other than the deployment's."""
    game = keys.game(game_id)
    if not (yield Call("exists", (game.events, archive_key(game)))):
        raise ValueError(
            f"game {game_id} has neither events nor an archive under the prefix "
            f"{keys.prefix!r} with {keys.shards} shards (PATRICIAN_SHARDS as the deployment's?)"
        )
    earlier = yield from earlier_handovers_op(keys, game_id)
    for player, level in earlier.items():
        yield Call("hset", (game.handed, player, level))
    return len(earlier)


class Moved(NamedTuple):
    games: int
    handovers: int
    problems: list[str]
    """A line for each key that could not be moved; the store is marked only without any."""


def move_earlier(client: Any, run: Callable[[Op[Any]], Any], keys: KeySpace) -> Moved:
    """Copy every game's hand-overs of before into its slot, then mark the store, only if
    every one was copied (a move cut short, or one with problems, is done again whole)."""
    games = handovers = 0
    problems: list[str] = []
    old = legacy_handovers_key(keys.prefix, "")
    for key in earlier_handover_keys(client, keys.prefix):
        try:
            handovers += run(move_earlier_op(keys, key.removeprefix(old)))
        except StoreUnavailable:
            raise
        except (ValueError, StoreError) as error:  # a game id or a key not of the store's
            problems.append(f"{key}: {error}")
        else:
            games += 1
    if not problems:
        run(_mark_moved_op(keys))
    return Moved(games, handovers, problems)


def _mark_moved_op(keys: KeySpace) -> Op[None]:
    yield Call("set", (handovers_moved_key(keys.prefix), "1"))

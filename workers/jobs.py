"""The jobs, small functions with primitive arguments that RQ calls by name (JSON, never
pickle). Each is idempotent: run twice, it does what it did once.

`game_moved(game_id, version)` follows an append: if the game still stands at `version` and a
bot plays the seat that decides now, the bot chooses from what that seat may see and sends its
command through the command path, as that seat, with the version it decided on and a command
id of its own per version (a second run is the first one's duplicate); a game that moved on
meanwhile is left alone, since the newer append has a job of its own.
"""

from __future__ import annotations

import random

from bots.levels import make
from bots.seen import seen_by
from store.accounts import bot_level_op
from store.clock import iso
from store.errors import VersionConflict
from store.games import execute_op
from store.reads import current_op, log_op
from workers.context import WorkerContext, current


def game_moved(game_id: str, version: int) -> str:
    """What follows the append that brought `game_id` to `version` (see the module)."""
    context = current()
    state = context.store.run(current_op(context.path, game_id))
    if state.version != version:
        return "moved on"
    pending = state.pending
    if pending is None:
        return "nothing to decide"
    player = state.players[state.seat_players[pending.seat]]
    level = _level(context, player)
    if not level:
        return "a person decides"
    log = [event for _v, event, _d, _h in context.store.run(log_op(context.path, game_id))]
    seen = seen_by(state, log[:version], pending.seat)
    bot = make(level, **context.bot_options.get(level, {}))
    command = bot.choose(seen, random.Random(f"{game_id}:{version}"))
    try:
        context.store.run(
            execute_op(
                context.path,
                game_id,
                player=player,
                expected_version=version,
                command_id=f"bot:{version}",
                commands=[command],
                now=iso(context.clock()),
                by=f"bot:{level}",
            )
        )
    except VersionConflict:  # somebody got in first: the newer append has its own job
        return "moved on"
    return f"{level} played"


def _level(context: WorkerContext, player: str) -> str:
    level = context.levels.get(player)
    if level is None:
        level = context.levels[player] = context.store.run(bot_level_op(context.accounts, player))
    return level

"""The jobs that follow a game's changes, small functions with primitive arguments that RQ
calls by name (JSON, never pickle; the names are stored with the jobs in Redis, so they stay
as they are). Each is idempotent: run twice, it does what it did once.

- `game_moved(game_id, first_version, version)` follows the append that added the events
  `first_version..version` to `game_id`: the gather and the steps of `workers.follow_up`
  (the notifications, the inboxes, the clock's timers, a bot's seat, the first webhooks), run
  with the worker's context.
- `handed_over(game_id, player_id)` follows a player handing their seat to a bot.
- `bot_turn(game_id, version)`: a slow bot (`workers.bot_play.SLOW_LEVELS`) plays the
  decision pending at `version`, left to this job by a follower (`workers.follower`).
"""

from __future__ import annotations

from projections.notices import Notice
from store.reads import current_op
from workers.bot_play import levels_of, play_pending
from workers.context import current
from workers.follow_up import gather, run_steps
from workers.telling import enqueue_notices


def game_moved(game_id: str, first_version: int, version: int) -> str:
    """What follows the append that brought `game_id` to `version` (`workers.follow_up`)."""
    context = current()
    follow_up = gather(context, game_id, first_version, version)
    if follow_up is None:
        return "moved on"  # the turn it began is over, and that is all it could announce
    return run_steps(context, follow_up)


def bot_turn(game_id: str, version: int) -> str:
    """The bot whose seat decides at `version` plays, if the game still stands there."""
    context = current()
    state = context.store.run(current_op(context.path, game_id))
    if state.version != version:
        return "moved on"  # the newer append's follow-up plays what is pending now
    return play_pending(context, game_id, state, levels_of(context, game_id, state))


def handed_over(game_id: str, player_id: str) -> str:
    """What follows a player handing their seat to a bot (`store.handovers`): the others are
    told, and the bot plays the seat's decision if it is pending (no append would wake the
    workers)."""
    context = current()
    state = context.store.run(current_op(context.path, game_id))
    levels = levels_of(context, game_id, state)
    told = [
        Notice(player, state.seat_of(player), "seat.resigned", state.seat_of(player_id))
        for player, level in levels.items()
        if not level and player != player_id
    ]
    enqueue_notices(context, game_id, state.version, told)
    return play_pending(context, game_id, state, levels)

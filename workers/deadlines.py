"""The clocks of timed games, kept by the workers: after each append the game's timers are set
for the turn that begins (its deadline, and the reminders its player asked for before it), and
the timers that come due are fired as jobs.

- `keep_time` (called by `workers.jobs.game_moved` for the head version) sets them, from the
  clocks of `projections.timekeeping`; a bot's turn needs none (it plays at once).
- `fire_due` (the workers' timer loop, about once a second) enqueues the job of every timer
  due, with an id made of the game, the version and the timer, then marks it fired: a timer is
  never lost, and one fired twice runs a job that acts once.
- `timed_out(game_id, version)`: the deadline of the turn at `version` passed: the game's bot
  (`on_timeout`) plays that seat's whole turn through the command path, as the seat, in one
  append whose `by` says `clock:<level>`; a game that moved on is left as it is.
- `remind(game_id, version, hours)`: the player whose turn it still is gets `turn.reminder`.
- `player_away(player_id)`: a vacation started or ended: the player's games' timers are set
  again.
"""

from __future__ import annotations

from datetime import datetime

from rq import Queue
from rq.queue import EnqueueData

from domain.state import State
from domain.view import ClockView
from projections.notices import Notice
from projections.timekeeping import CLOCK_BY, deadline_seconds
from store.accounts import games_of_op
from store.errors import GameNotFound
from store.notifications import channels_op
from store.reads import current_op, last_change_op
from store.time_controls import HOUR, time_control_op
from store.timers import Timer, due_op, fired_op, set_timers_op
from workers.bot_play import levels_of, play_for
from workers.context import WorkerContext, current
from workers.dispatcher import job_id
from workers.game_clocks import clock_of, clock_under
from workers.inboxes import keep_inboxes
from workers.retries import MOVED_RETRY
from workers.telling import enqueue_notices

TIMED_OUT = "workers.deadlines.timed_out"
REMIND = "workers.deadlines.remind"


def keep_time(
    context: WorkerContext, game_id: str, state: State, levels: dict[str, str],
    clock: ClockView | None,
) -> None:  # fmt: skip
    """Set the game's timers for the state's version (see the module), by its clocks there
    (None: an untimed game, nothing to do)."""
    if clock is None:
        return
    timers: list[tuple[Timer, float]] = []
    due = deadline_seconds(clock)
    if clock.running is not None and due is not None:
        player = state.players[state.seat_players[clock.running]]
        if not levels[player]:  # a person decides; a bot plays at once
            timers.append((Timer("timeout", game_id, state.version), due))
            channels = context.store.run(channels_op(context.notifications, player))
            assert clock.turn_started is not None
            started = datetime.fromisoformat(clock.turn_started).timestamp()
            for hours in channels.reminder_hours:
                if due - hours * HOUR > started:
                    timers.append(
                        (Timer("remind", game_id, state.version, hours), due - hours * HOUR)
                    )
    context.store.run(set_timers_op(context.accounts.prefix, game_id, state.version, timers))


def fire_due(context: WorkerContext) -> int:
    """Enqueue the job of every timer due now, then mark them fired; how many."""
    prefix = context.accounts.prefix
    due = context.store.run(due_op(prefix, context.clock().timestamp()))
    if not due:
        return 0
    context.queue.enqueue_many([_job(timer) for timer in due])
    for timer in due:
        context.store.run(fired_op(prefix, timer))
    return len(due)


def _job(timer: Timer) -> EnqueueData:
    if timer.kind == "remind":
        minutes = round(timer.hours * 60)
        return Queue.prepare_data(
            REMIND, args=(timer.game_id, timer.version, timer.hours),
            job_id=job_id(timer.game_id, timer.version, f"remind{minutes}m"), retry=MOVED_RETRY,
        )  # fmt: skip
    return Queue.prepare_data(
        TIMED_OUT, args=(timer.game_id, timer.version),
        job_id=job_id(timer.game_id, timer.version, "timeout"), retry=MOVED_RETRY,
    )  # fmt: skip


def timed_out(game_id: str, version: int) -> str:
    """The deadline of the turn at `version` passed (see the module)."""
    context = current()
    state = context.store.run(current_op(context.path, game_id))
    if state.version != version or state.pending is None:
        return "moved on"
    clock = clock_of(context, game_id, state)
    due = None if clock is None else deadline_seconds(clock)
    if due is None or due > context.clock().timestamp():
        return "not due"  # its deadline moved since the timer was set
    player = state.players[state.seat_players[state.pending.seat]]
    if levels_of(context, game_id, state)[player]:
        return "a bot plays it"
    control = context.store.run(time_control_op(context.accounts.prefix, game_id))
    assert control is not None
    level = control.on_timeout
    return play_for(context, game_id, state, level, by=CLOCK_BY + level, whole_turn=True)


def remind(game_id: str, version: int, hours: float) -> str:
    """Remind the player whose turn it still is, `hours` before its deadline."""
    context = current()
    state = context.store.run(current_op(context.path, game_id))
    if state.version != version or state.pending is None:
        return "moved on"
    seat = state.pending.seat
    player = state.players[state.seat_players[seat]]
    if levels_of(context, game_id, state)[player]:
        return "a bot plays it"
    minutes = round(hours * 60)
    notice = Notice(player, seat, "turn.reminder")
    enqueue_notices(context, game_id, version, [notice], detail=f"{minutes}m")
    return "reminded"


def player_away(player_id: str) -> str:
    """A player's vacation started or ended: the timers of their games in play are set again
    (their deadlines move)."""
    context = current()
    moved = 0
    for game_id, _listed in context.store.run(games_of_op(context.accounts, player_id)):
        try:
            state = context.store.run(current_op(context.path, game_id))
        except GameNotFound:
            continue  # a listing whose creation never landed
        if state.phase == "playing" and player_id in state.players:
            control, since = context.store.gather(
                time_control_op(context.accounts.prefix, game_id),
                last_change_op(context.path, game_id),
            )
            clock = clock_under(context, game_id, state, control)
            keep_time(context, game_id, state, levels_of(context, game_id, state), clock)
            keep_inboxes(context, game_id, state, since, clock)  # their deadlines moved
            moved += 1
    return f"{moved} games"

"""The clocks of timed games, kept by the workers: after each append the game's timers are set
for the turn that begins (its deadline, and the reminders its player asked for before it), and
the timers that come due are fired as jobs.

- `keep_time` (called by the follow-up of each append, `workers.follow_up`, for the head
  version) sets them, from the clocks of `projections.timekeeping`; a bot's turn needs none
  (it plays at once).
- `fire_due` (the workers' timer loop, about once a second) enqueues the job of every timer
  due, with an id made of the game, the version and the timer, then marks it fired: a timer is
  never lost, and one fired twice runs a job that acts once.
- `timed_out(game_id, version)`: the deadline of the turn at `version` passed: the game's bot
  (`on_timeout`) plays that seat's whole turn through the command path, as the seat, in one
  append whose `by` says `clock:<level>`; a game that moved on is left as it is.
- `remind(game_id, version, hours)`: the player whose turn it still is gets `turn.reminder`.
- `player_away(player_id)`: a vacation started or ended: the player's games' timers are set
  again.
- `fire_digests` (with `fire_due`): the players' daily digests that come due are enqueued
  (`workers.mail.send_digest`, one job id per player and day), and each one's next is
  scheduled, in Redis too (`store.notifications`, `<prefix>:digests`), by the same clock.
"""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta
from zoneinfo import ZoneInfo

from rq import Queue
from rq.queue import EnqueueData

from domain.state import State
from domain.view import ClockView
from projections.notices import Notice
from projections.timekeeping import CLOCK_BY, deadline_seconds
from store.accounts import games_of_op
from store.errors import GameNotFound
from store.notifications import (
    Digest,
    channels_op,
    due_digests_op,
    schedule_digest_op,
    unschedule_digest_op,
)
from store.reads import current_op, last_change_op
from store.time_controls import HOUR, time_control_op
from store.timers import Timer, due_op, fired_op, set_timers_op
from workers.bot_play import levels_of, play_for
from workers.context import WorkerContext, current
from workers.game_clocks import clock_of, clock_under
from workers.inboxes import keep_inboxes
from workers.job_ids import job_id
from workers.repairs import repair_lobby_now
from workers.retries import DELIVERY_RETRY, MOVED_RETRY
from workers.telling import enqueue_notices

TIMED_OUT = "workers.deadlines.timed_out"
REMIND = "workers.deadlines.remind"
DIGEST = "workers.mail.send_digest"


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
            named = set()  # two reminders within one second are one (they would share an id)
            for hours in channels.reminder_hours:
                timer = Timer("remind", game_id, state.version, hours)
                before = reminder_before(Timer.parse(timer.member()).hours)
                if due - hours * HOUR > started and before not in named:
                    named.add(before)
                    timers.append((timer, due - hours * HOUR))
    context.store.run(set_timers_op(context.accounts.prefix, game_id, state.version, timers))


def fire_due(context: WorkerContext) -> int:
    """Enqueue the job of every timer due now, then mark them fired, and the digests due
    (`fire_digests`); how many. (And the lobby's repair, once a minute by one of the
    workers: `workers.repairs`.)"""
    repair_lobby_now(context)
    prefix = context.accounts.prefix
    due = context.store.run(due_op(prefix, context.clock().timestamp()))
    if not due:
        return fire_digests(context)
    context.queue.enqueue_many([_job(timer) for timer in due])
    for timer in due:
        context.store.run(fired_op(prefix, timer))
    return len(due) + fire_digests(context)


def fire_digests(context: WorkerContext) -> int:
    """Enqueue the daily digest of every player whose digest is due now, then schedule their
    next one (from their setting as it is now: a digest late, the workers having been down,
    goes once, for its own day, and the next at its hour); how many were enqueued.

    A setting changed meanwhile wins: the next one is set only if the player's schedule is
    still there (`xx`: one turned off stays off), and worked out again (due 0) if the setting
    read is no longer theirs. Two workers firing at once enqueue one job id; it sends once."""
    keys = context.notifications
    now = context.clock()
    enqueued = 0
    for player_id, at in context.store.run(due_digests_op(keys, now.timestamp())):
        digest = context.store.run(channels_op(keys, player_id)).digest
        if digest is None:  # turned off (its setting removes it too; this is for a race)
            context.store.run(unschedule_digest_op(keys, player_id))
            if context.store.run(channels_op(keys, player_id)).digest is not None:
                context.store.run(schedule_digest_op(keys, player_id, 0.0))  # on again
            continue
        if at > 0:
            day = digest_day(digest, at)
            context.queue.enqueue(
                DIGEST, player_id, day, job_id=digest_id(player_id, day), retry=DELIVERY_RETRY
            )
            enqueued += 1
        upcoming = next_digest(digest, now).timestamp()
        context.store.run(schedule_digest_op(keys, player_id, upcoming, xx=True))
        if context.store.run(channels_op(keys, player_id)).digest != digest:
            context.store.run(schedule_digest_op(keys, player_id, 0.0, xx=True))
    return enqueued


def next_digest(digest: Digest, after: datetime) -> datetime:
    """When the next digest goes after `after`: the start of its hour in its time zone, on
    the first day it is still to come (an hour a clock change skips is the one after it; one
    that comes twice, the first)."""
    zone = ZoneInfo(digest.time_zone)
    today = after.astimezone(zone).date()
    for days in range(3):
        due = datetime.combine(today + timedelta(days=days), time(digest.hour), tzinfo=zone)
        if due.astimezone(UTC) > after:
            return due.astimezone(UTC)
    raise AssertionError("an hour of the day comes within two days")


def digest_day(digest: Digest, due: float) -> str:
    """The day (ISO, in the digest's time zone) of the digest due at `due`."""
    return datetime.fromtimestamp(due, ZoneInfo(digest.time_zone)).date().isoformat()


def digest_id(player_id: str, day: str) -> str:
    """The one id of a player's digest of a day: its job's, its sending claim's, its
    delivery log's and its e-mail's (`Message-ID`)."""
    return f"digest-{day}-{player_id}-email"


def reminder_before(hours: float) -> str:
    """How long before the deadline a reminder comes, as its ids say it (its job's, its
    notification's): `<minutes>m` for a whole number of minutes, else `<seconds>s`, so that
    two reminders of one turn have two ids."""
    seconds = round(hours * HOUR)
    return f"{seconds // 60}m" if seconds % 60 == 0 else f"{seconds}s"


def _job(timer: Timer) -> EnqueueData:
    if timer.kind == "remind":
        before = reminder_before(timer.hours)
        return Queue.prepare_data(
            REMIND, args=(timer.game_id, timer.version, timer.hours),
            job_id=job_id(timer.game_id, timer.version, f"remind{before}"), retry=MOVED_RETRY,
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
    return play_for(context, game_id, state, level, by=CLOCK_BY + level)


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
    notice = Notice(player, seat, "turn.reminder")
    enqueue_notices(context, game_id, version, [notice], detail=reminder_before(hours))
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

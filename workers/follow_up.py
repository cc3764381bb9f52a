"""What follows an append, as one gather and a list of small steps: the path of every move.

`gather` reads what the steps need, in the round trips to Redis the follow-up has always
cost (the head state, the appended events, the time control and, unless the notice carried
it, the last append's metadata in one; who
plays each seat and how each player is told in a second; a bot level not seen before, the
clocks of a timed game), into one frozen value, `FollowUp`. Then each step of `STEPS` takes
the context and that value, does one thing and gives the value back (with what it leaves for
the steps after it), in this order:

1. `name_notices`: the notifications the append calls for (`projections.notices`) are named,
   and the e-mails enqueued as jobs (one round trip); the webhooks' first attempts are left
   for the last step;
2. `write_inboxes`: each player's inbox entry for this version (`workers.inboxes`);
3. `set_timers`: the deadline and reminders of the turn that begins (`workers.deadlines`),
   none for a bot's turn (it plays at once);
4. `rate_finished_game`: at the end of a game, its players' ratings (`workers.ratings`),
   once; `keep_reliability`: a turn the clock played during its player's quiet hours noted,
   and at the end of a game its turns by seat kept (`workers.reliability`);
   `analyse_finished_game`: at the end of a game, the first job of its analysis enqueued
   (`workers.analysis`);
5. `play_bot_seat`: the bot whose seat decides now plays, through the command path
   (`workers.bot_play`); its append has a follow-up of its own (a follower leaves a search
   bot's decision to a job, `workers.jobs.bot_turn`, rather than hold up other games);
6. `send_first_webhooks`: the first attempt at each webhook, made here rather than by a job
   of its own (a job costs RQ a dozen round trips); last, so that a slow receiver holds up
   neither the bot nor the clock.

Steps 2, 3 and 5 act only while the game still stands at the append's version: a game that moved
on has a newer append, whose follow-up does them. Every step is idempotent (a follow-up run
twice does what it did once) and takes its context as an argument: the steps do not depend
on who runs them (`follow`, called by the followers of `workers.follower` for each notice, is
their driver; `workers.jobs.game_moved` runs them for the jobs of before the followers).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import msgspec

from domain.events import Event, GameCancelled, GameEnded, GameStarted
from domain.evolve import fold
from domain.state import State
from domain.view import ClockView
from projections.notices import Notice, notices_for
from projections.timekeeping import CLOCK_BY
from store.handovers import earlier_handovers_op, game_handovers_op, handover_levels
from store.notifications import Channels, channels_op, decided_op
from store.protocol import Op
from store.reads import (
    current_op,
    events_op,
    last_batch_op,
    last_change_op,
    log_op,
    metadata_at_op,
)
from store.stored import AppendMeta, Batch, OutboxEntry, meta_decoder
from store.time_controls import time_control_op
from workers.analysis import analysis_begun, enqueue_analysis
from workers.bot_play import SLOW_LEVELS, levels_of, pending_level, play_pending
from workers.context import WorkerContext
from workers.deadlines import keep_time
from workers.game_clocks import clock_under
from workers.inboxes import keep_inboxes
from workers.job_ids import job_id
from workers.ratings import finished_game, rate_game, rating_keys
from workers.reliability import keep_game_turns, note_quiet_timeout
from workers.retries import MOVED_RETRY
from workers.telling import enqueue_notices
from workers.webhooks import send_first

BOT_TURN = "workers.jobs.bot_turn"
TABLE_EVENTS = (GameStarted, GameEnded, GameCancelled)
"""What is announced to the whole table, even once the game has moved on (and so is a turn
the clock played)."""


class FollowUp(msgspec.Struct, frozen=True):
    """What the steps that follow the append of `first_version..version` to `game_id` work
    with, read by `gather`; and what a step leaves for the ones after it."""

    game_id: str
    first_version: int
    version: int
    state: State
    """The game at `version` (its head, unless it moved on)."""
    appended: tuple[Event, ...]
    moved_on: bool
    """Whether the game has moved on from `version` (a newer append landed)."""
    acted_by: str
    """The player who made the move ("" for a join, a leave...: see `_mover`)."""
    timed_out: bool
    """Whether the clock played the append, for the seat whose time ran out."""
    since: str | None
    """When the append was made (None if not read: the game moved on, or no append ends at
    `version`)."""
    levels: dict[str, str]
    """The bot level that plays each player ("" for a person), seats handed over included."""
    channels: dict[str, Channels]
    """How each player is told."""
    clock: ClockView | None
    """The game's clocks at `version` (None: untimed, or the game moved on)."""
    first_attempts: tuple[tuple[str, Notice, Channels], ...] = ()
    """Left by `name_notices`: the webhooks to try at once (id, notice, recipient's channels)."""
    outcome: str = "moved on"
    """Left by `play_bot_seat`: what became of the seat that decides now."""
    by_follower: bool = False
    """Run by a follower (`workers.follower`), which leaves a slow bot's decision to a job."""


Step = Callable[[WorkerContext, FollowUp], FollowUp]


class _Append(NamedTuple):
    """What the metadata of the append says, and the game it leads to."""

    state: State
    acted_by: str
    timed_out: bool
    since: str | None
    decided: Op[None] | None
    """The note of the person's own decision, to write with the second round trip."""


def gather(
    context: WorkerContext, game_id: str, first_version: int, version: int,
    meta: AppendMeta | None = None,
) -> FollowUp | None:  # fmt: skip
    """What the steps need (see the module); None when there is nothing to follow up: the
    game moved on and the append told the table nothing. `meta`: the append's metadata, if
    its notice carried it (else it is read)."""
    # the reads in one round trip to Redis: this is the path of every move
    head, appended, last, control = context.store.gather(
        current_op(context.path, game_id),
        events_op(context.path, game_id, first_version, version),
        last_batch_op(context.path, game_id) if meta is None else _given(meta, version),
        time_control_op(context.accounts.prefix, game_id),
    )
    moved_on = head.version != version
    if moved_on:
        append = _moved_on(context, game_id, first_version, version, appended, meta=meta)
        if append is None:
            return None
    else:  # the common case: the state is the head's
        append = _at_head(context, game_id, version, head, last)
    # who plays each seat and how each player is told, in one round trip again (with the
    # note of the person's decision: what they are told next starts after it)
    players = append.state.players
    handed, earlier, *found = context.store.gather(
        game_handovers_op(context.path.context.keys, game_id),
        earlier_handovers_op(context.path.context.keys, game_id),
        *(channels_op(context.notifications, player) for player in players),
        *([append.decided] if append.decided is not None else []),
    )
    state = append.state
    return FollowUp(
        game_id, first_version, version, state, appended,
        moved_on=moved_on, acted_by=append.acted_by, timed_out=append.timed_out,
        since=append.since,
        levels=levels_of(context, game_id, state, handover_levels(handed, earlier)),
        channels=dict(zip(players, found[: len(players)], strict=True)),
        clock=None if moved_on else clock_under(context, game_id, state, control),
    )  # fmt: skip


def _given(meta: AppendMeta, version: int) -> Op[tuple[AppendMeta, int]]:
    """The metadata a notice carried, as the last append's that ends at `version`, read
    from nowhere."""
    yield from ()
    return meta, version


def _at_head(
    context: WorkerContext, game_id: str, version: int, head: State,
    last: Batch | tuple[AppendMeta, int] | None,
) -> _Append:  # fmt: skip
    """The append that brought the game to its head, `version`, told by the last append's
    metadata (if that append is the one that ends at `version`), or by its notice's."""
    if isinstance(last, tuple):
        meta, last_version = last
    elif last is not None:
        meta, last_version = meta_decoder.decode(last.metadata), last.last_version
    if last is None or last_version != version:  # an append landed between the reads
        return _Append(head, "", timed_out=False, since=None, decided=None)
    decided = None
    if meta.seat is not None and not meta.by:  # the person's own decision
        decided = decided_op(context.notifications, game_id, meta.seat, version)
    return _Append(head, _mover(meta), meta.by.startswith(CLOCK_BY), meta.time, decided)


def _moved_on(
    context: WorkerContext, game_id: str, first_version: int, version: int,
    appended: tuple[Event, ...], *, meta: AppendMeta | None,
) -> _Append | None:  # fmt: skip
    """An append the game has moved on from: only what it told the table, or its timed-out
    seat, is still to be told (None: nothing), of the game folded up to `version`."""
    run = context.store.run
    if meta is None:
        meta = meta_decoder.decode(run(metadata_at_op(context.path, game_id, first_version)))
    timed_out = meta.by.startswith(CLOCK_BY)
    if not timed_out and not any(isinstance(event, TABLE_EVENTS) for event in appended):
        return None  # the turn it began is over, and that is all it could announce
    log = [event for _v, event, _d, _h in run(log_op(context.path, game_id))]
    return _Append(fold(log[:version]), _mover(meta), timed_out, since=None, decided=None)


def _mover(meta: AppendMeta) -> str:
    """The player who made a move with the append of this metadata ("" for a join, a
    leave...: the last to join starts the game, and is told of their turn like everybody
    else)."""
    return meta.player if meta.kind == "commands" else ""


def name_notices(context: WorkerContext, follow_up: FollowUp) -> FollowUp:
    """The notifications the append calls for, told to persons only (docs/notifications.md):
    one delivery job per e-mail, enqueued; the webhooks left for `send_first_webhooks`."""
    f = follow_up
    persons = {player for player, level in f.levels.items() if not level}
    notices = notices_for(f.state, f.appended, f.acted_by, persons, timed_out=f.timed_out)
    if f.moved_on:  # the decision passed on already: that turn is over
        notices = [n for n in notices if n.kind != "turn.started"]
    at_once = enqueue_notices(
        context, f.game_id, f.version, notices, webhooks_at_once=True, channels=f.channels
    )
    return msgspec.structs.replace(f, first_attempts=tuple(at_once))


def write_inboxes(context: WorkerContext, follow_up: FollowUp) -> FollowUp:
    """Each player's inbox entry for the game at this version (`/api/me/games`)."""
    f = follow_up
    if not f.moved_on:
        keep_inboxes(context, f.game_id, f.state, f.since, f.clock)
    return f


def set_timers(context: WorkerContext, follow_up: FollowUp) -> FollowUp:
    """In a timed game, the timers of the turn that begins: its deadline and reminders."""
    f = follow_up
    if not f.moved_on:
        keep_time(context, f.game_id, f.state, f.levels, f.clock)
    return f


def rate_finished_game(context: WorkerContext, follow_up: FollowUp) -> FollowUp:
    """At the end of a game, the ratings it moves, once (`workers.ratings`)."""
    f = follow_up
    if any(isinstance(event, GameEnded) for event in f.appended):
        ended = f.since or context.store.run(last_change_op(context.path, f.game_id))
        game = finished_game(context, f.game_id, f.state, ended)
        if game is not None:
            rate_game(context.store, rating_keys(context), game)
    return f


def keep_reliability(context: WorkerContext, follow_up: FollowUp) -> FollowUp:
    """The reliability record (`workers.reliability`): a turn the clock played noted if its
    player's quiet hours held; at the end of a game, its turns by seat kept."""
    f = follow_up
    if f.timed_out and f.acted_by:
        told = f.channels.get(f.acted_by)
        quiet = told.quiet_hours if told is not None else None
        note_quiet_timeout(
            context, f.game_id, f.first_version, f.acted_by, quiet=quiet, when=f.since
        )
    if any(isinstance(event, GameEnded) for event in f.appended):
        ended = f.since or context.store.run(last_change_op(context.path, f.game_id)) or ""
        keep_game_turns(context, f.game_id, f.state, ended)
    return f


def analyse_finished_game(context: WorkerContext, follow_up: FollowUp) -> FollowUp:
    """At the end of a game, its analysis begun: the job of its first decisions (a follow-up
    run again once it has begun enqueues nothing; the slices already kept are not made again,
    `workers.analysis`)."""
    f = follow_up
    ended = any(isinstance(event, GameEnded) for event in f.appended)
    if ended and context.analysis_iterations and not analysis_begun(context, f.game_id):
        enqueue_analysis(context, f.game_id)
    return f


def play_bot_seat(context: WorkerContext, follow_up: FollowUp) -> FollowUp:
    """The bot whose seat decides now plays (its outcome is the follow-up's); a follower
    leaves a slow one to a job (`workers.jobs.bot_turn`)."""
    f = follow_up
    if f.moved_on:
        return f
    level = pending_level(f.state, f.levels)
    if f.by_follower and level in SLOW_LEVELS:
        context.queue.enqueue(
            BOT_TURN, f.game_id, f.version, job_id=job_id(f.game_id, f.version, "bot"),
            retry=MOVED_RETRY,
        )  # fmt: skip
        return msgspec.structs.replace(f, outcome=f"{level} left to a job")
    return msgspec.structs.replace(f, outcome=play_pending(context, f.game_id, f.state, f.levels))


def send_first_webhooks(context: WorkerContext, follow_up: FollowUp) -> FollowUp:
    """The first attempt at each webhook named by `name_notices`; a failed one becomes a
    delivery job (`workers.webhooks.send_first`)."""
    f = follow_up
    for notice_id, told, theirs in f.first_attempts:
        send_first(context, notice_id, f.game_id, f.version, told, channels=theirs)
    return f


STEPS: tuple[Step, ...] = (
    name_notices,
    write_inboxes,
    set_timers,
    rate_finished_game,
    keep_reliability,
    analyse_finished_game,
    play_bot_seat,
    send_first_webhooks,
)
"""The steps of an append's follow-up, in their order (see the module for why)."""


def follow(context: WorkerContext, notice: OutboxEntry) -> str:
    """The whole follow-up of the append an outbox notice tells of, as a follower runs it
    (`workers.follower`): the gather, with the metadata the notice carried, and the steps;
    its outcome."""
    follow_up = gather(
        context, notice.game_id, notice.first_version, notice.last_version, notice.meta
    )
    if follow_up is None:
        return "moved on"  # the turn it began is over, and that is all it could announce
    return run_steps(context, msgspec.structs.replace(follow_up, by_follower=True))


def run_steps(context: WorkerContext, follow_up: FollowUp) -> str:
    """Each step of `STEPS` in turn, each given what the one before left; the follow-up's
    outcome."""
    for step in STEPS:
        follow_up = step(context, follow_up)
    return follow_up.outcome

"""A finished game analysed in the background: every decision judged from its mover's view
(`bots.analysis`), by RQ jobs of a slice of decisions each (`projections.analysis.SLICE`), each
enqueueing the next, so that no job holds a worker for long and a reader sees the progress.

The first slice is enqueued by the follow-up of the game's end (`analyse_finished_game`); each
job's id names the game and its slice, so a follow-up run twice or a job retried analyses
nothing twice, and a slice written twice is the same bytes (the search is seeded from the game
id and the version, and its budget is a number of iterations).
"""

from __future__ import annotations

import contextlib
from typing import NamedTuple

import msgspec
from rq import Queue
from rq.exceptions import DuplicateJobError, NoSuchJobError
from rq.job import Job, JobStatus

from bots.analysis import Analyst, Decision, decisions
from domain.events import Event
from domain.evolve import fold
from domain.state import State
from projections.analysis import SLICE, Slice, encode_slice, read_analysis
from store.analysis import GameAccuracy, analysis_op, write_accuracies_op, write_slice_op
from store.reads import batches_op, log_op
from store.shared_lru import SharedLRU
from store.stored import meta_decoder
from workers.bot_play import levels_of
from workers.context import WorkerContext, current
from workers.job_ids import job_id
from workers.retries import MOVED_RETRY

ANALYSE = "workers.analysis.analyse_game"
JOB_SECONDS = 600
"""The most a slice's job may take (a slice takes seconds; a machine under load, more)."""


def enqueue_analysis(context: WorkerContext, game_id: str, start: int = 0) -> None:
    """The job that analyses the slice of `game_id`'s decisions from index `start`, on the
    queue of the work nobody waits on (`workers.settings.later_queue_of`): a job worker
    takes it only when no other job waits."""
    enqueue_slice(context.later_queue or context.queue, game_id, start)


def enqueue_slice(queue: Queue, game_id: str, start: int = 0) -> None:
    """The job of the slice from `start` on `queue`, unless it is there already (one job id
    per slice, enqueued as unique: asked twice while it waits or runs, it is one job). One
    that failed all its tries keeps its id among RQ's failed jobs for a while: asked again,
    it is put back in the queue."""
    slice_id = job_id(game_id, start, "analysis")
    try:
        queue.enqueue(
            ANALYSE, game_id, start, job_id=slice_id, retry=MOVED_RETRY,
            job_timeout=JOB_SECONDS, result_ttl=0, unique=True,
        )  # fmt: skip
    except DuplicateJobError:
        with contextlib.suppress(NoSuchJobError):
            job = Job.fetch(slice_id, connection=queue.connection, serializer=queue.serializer)
            if job.get_status() == JobStatus.FAILED:
                job.requeue()


def analysis_begun(context: WorkerContext, game_id: str) -> bool:
    """Whether the game's analysis has begun (a slice is kept)."""
    count, _slices = context.store.run(analysis_op(context.accounts.prefix, game_id))
    return count > 0


def analyse_game(game_id: str, start: int) -> str:
    """Analyse the slice of `game_id`'s decisions from index `start`, and enqueue the next."""
    return analyse_slice(current(), game_id, start)


def analyse_slice(context: WorkerContext, game_id: str, start: int) -> str:
    """The slice from `start` judged and kept; the next one enqueued (or, with `start` past the
    last, nothing); what was done."""
    if context.analysis_iterations < 1:
        return "this worker analyses no game (PATRICIAN_ANALYSIS_ITERATIONS=0)"
    game = _finished(context, game_id)
    if game is None:
        return "not over"  # only a finished game is analysed: nothing may help a live one
    found = game.decisions
    part = found[start : start + SLICE]
    if not part:
        return "nothing left"
    end = start + len(part)
    _count, kept_slices = context.store.run(analysis_op(context.accounts.prefix, game_id))
    if start in kept_slices:  # a follow-up or a job run again: the work is done
        if end < len(found) and end not in kept_slices:
            enqueue_analysis(context, game_id, end)
        elif end >= len(found):  # (the job that wrote it may have died before this)
            keep_accuracies(context, game_id, game.state)
        return f"decisions {start + 1}-{end} were analysed"
    analyst = Analyst(iterations=context.analysis_iterations)
    judged, makers = [], []
    for decision in part:
        judgement = analyst.judge_decision(game.log, decision, game_id)
        if judgement is not None:
            judged.append(judgement)
            makers.append(game.made_by.get(decision.version, ""))
    kept = Slice(len(part), tuple(judged), tuple(makers))
    prefix = context.accounts.prefix
    context.store.run(write_slice_op(prefix, game_id, len(found), start, encode_slice(kept)))
    if end < len(found):
        enqueue_analysis(context, game_id, end)
    else:
        keep_accuracies(context, game_id, game.state)
    return f"analysed decisions {start + 1}-{end} of {len(found)}"


class _Finished(NamedTuple):
    """What every slice of a finished game's analysis starts from."""

    log: list[Event]
    state: State
    decisions: list[Decision]
    made_by: dict[int, str]
    """Who made the decision at a version for its seat's player, when it was not the player
    (`_by_version`)."""


_FINISHED: SharedLRU[tuple[str, str], _Finished] = SharedLRU(8)
"""The last finished games analysed in this process: a finished game never changes, and its
slices' jobs, one after the other, mostly come to the same worker (read once, not each
slice: its log, its fold, its decisions and its appends' metadata)."""


def _finished(context: WorkerContext, game_id: str) -> _Finished | None:
    key = (context.accounts.prefix, game_id)
    if (kept := _FINISHED.get(key)) is not None:
        return kept
    log = [event for _v, event, _d, _h in context.store.run(log_op(context.path, game_id))]
    state = fold(log)
    if state.result is None:
        return None  # (not kept: it ends later)
    found = list(decisions(log))
    by = _by_version(context, game_id, levels_of(context, game_id, state, {}))
    seat_player = _players_by_seat(state)
    made_by = {d.version: made for d in found if (made := by.get((d.version, seat_player[d.seat])))}
    game = _Finished(log, state, found, made_by)
    _FINISHED.put(key, game)
    return game


def keep_accuracies(context: WorkerContext, game_id: str, state: State) -> None:
    """Each player's accuracy in the analysed game, kept for their page (the players whose
    own decisions were judged)."""
    prefix = context.accounts.prefix
    decisions_count, slices = context.store.run(analysis_op(prefix, game_id))
    found = read_analysis(state.board.seats, decisions_count, slices)
    if not found.complete:
        return  # (the last slice's job runs after the others': met only by hand)
    seat_player = _players_by_seat(state)
    kept = {
        seat_player[seat.seat]: GameAccuracy(round(seat.accuracy, 1), seat.own_decisions)
        for seat in found.seats
        if seat.accuracy is not None
    }
    context.store.run(write_accuracies_op(prefix, game_id, kept))


def _players_by_seat(state: State) -> list[str]:
    return [state.players[index] for index in state.seat_players]


def _by_version(
    context: WorkerContext, game_id: str, levels: dict[str, str]
) -> dict[tuple[int, str], str]:
    """Who made the decision at each version for a player, when it was not the player: the
    `by` of the append that holds the version after it, unless that is the player's own bot
    (a bot that plays its seat from the start makes its own decisions)."""
    made: dict[tuple[int, str], str] = {}
    for batch in context.store.run(batches_op(context.path, game_id)):
        try:
            meta = meta_decoder.decode(batch.metadata)
        except msgspec.DecodeError:
            continue  # an append of the game's set-up, not a decision
        if not meta.by or (levels.get(meta.player) and meta.by == f"bot:{levels[meta.player]}"):
            continue
        for version in range(batch.first_version, batch.last_version + 1):
            made[version - 1, meta.player] = meta.by  # the decision at v appends v + 1 on
    return made

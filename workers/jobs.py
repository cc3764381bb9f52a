"""The job that follows an append, a small function with primitive arguments that RQ calls by
name (JSON, never pickle). It is idempotent: run twice, it does what it did once.

`game_moved(game_id, first_version, version)` follows the append that added the events
`first_version..version` to `game_id`:
- it names the notifications the append calls for (`projections.notices.notices_for`) and
  enqueues one delivery job per recipient and channel, with an id made of the kind, the
  version, the game, the seat and the channel: a notice handled twice enqueues it once;
- if the game still stands at `version` and a bot plays the seat that decides now, the bot
  chooses from what that seat may see and sends its command through the command path, as that
  seat, with the version it decided on and a command id of its own per version (a second run
  is the first one's duplicate). A game that moved on meanwhile is left to the newer append's
  job (no turn is announced that is already over).
"""

from __future__ import annotations

import random

from rq import Queue

from bots.levels import make
from bots.seen import seen_by
from domain.events import GameCancelled, GameEnded, GameStarted
from domain.evolve import fold
from domain.state import State
from projections.notices import Notice, notices_for
from store.accounts import bot_level_op
from store.clock import iso
from store.errors import VersionConflict
from store.games import execute_op
from store.handovers import handovers_op
from store.notifications import channels_op, decided_op
from store.reads import batches_op, current_op, events_op, last_batch_op, log_op
from store.records import Batch, meta_decoder
from workers.context import WorkerContext, current
from workers.dispatcher import job_id
from workers.retries import DELIVERY_RETRY

DELIVER = "workers.webhooks.deliver"
TABLE_EVENTS = (GameStarted, GameEnded, GameCancelled)
"""What is announced to the whole table, even once the game has moved on."""


def game_moved(game_id: str, first_version: int, version: int) -> str:
    """What follows the append that brought `game_id` to `version` (see the module)."""
    context = current()
    run = context.store.run
    head = run(current_op(context.path, game_id))
    appended = run(events_op(context.path, game_id, first_version, version))
    if head.version == version:  # the common case: the state is the head's
        state = head
        last = run(last_batch_op(context.path, game_id))
        acted_by = "" if last is None else _mover(last)
        if last is not None and (seat := meta_decoder.decode(last.metadata).seat) is not None:
            run(decided_op(context.notifications, game_id, seat, version))
    elif not any(isinstance(event, TABLE_EVENTS) for event in appended):
        return "moved on"  # the turn it began is over, and that is all it could announce
    else:  # the game started (or ended) and moved on at once: the state the append left
        log = [event for _v, event, _d, _h in run(log_op(context.path, game_id))]
        state = fold(log[:version])
        acted_by = next(
            (
                _mover(b)
                for b in run(batches_op(context.path, game_id))
                if b.last_version == version
            ),
            "",
        )
    levels = _levels(context, game_id, state)
    persons = {player for player, level in levels.items() if not level}
    notices = notices_for(state, appended, acted_by, persons)
    if head.version != version:  # the decision passed on already: that turn is over
        notices = [n for n in notices if n.kind != "turn.started"]
    _enqueue(context, game_id, version, notices)
    if head.version != version:
        return "moved on"
    return _bot_move(context, game_id, state, levels)


def handed_over(game_id: str, player_id: str) -> str:
    """What follows a player handing their seat to a bot (`store.handovers`): the others are
    told, and the bot plays the seat's decision if it is pending."""
    context = current()
    state = context.store.run(current_op(context.path, game_id))
    levels = _levels(context, game_id, state)
    told = [
        Notice(player, state.seat_of(player), "seat.resigned", state.seat_of(player_id))
        for player, level in levels.items()
        if not level and player != player_id
    ]
    _enqueue(context, game_id, state.version, told)
    return _bot_move(context, game_id, state, levels)


def delivery_id(game_id: str, version: int, notice: Notice, channel: str = "webhook") -> str:
    """The one id of a notification on a channel: its `webhook-id` too, the same on every
    attempt and every copy (`<kind>-<version>-<game>-<seat>-<channel>`)."""
    seat = "x" if notice.seat is None else str(notice.seat)
    return f"{job_id(game_id, version, notice.kind.replace('.', '-'))}-{seat}-{channel}"


def _enqueue(context: WorkerContext, game_id: str, version: int, notices: list[Notice]) -> None:
    """One delivery job per notice whose recipient has a webhook on."""
    hooks = {
        player: context.store.run(channels_op(context.notifications, player)).webhook
        for player in {n.player_id for n in notices}
    }
    jobs = [
        Queue.prepare_data(
            DELIVER,
            args=(n.player_id, game_id, version, n.kind, n.seat),
            kwargs={"about": n.about} if n.about is not None else None,
            job_id=delivery_id(game_id, version, n),
            retry=DELIVERY_RETRY,
        )
        for n in notices
        if (hook := hooks[n.player_id]) is not None and not hook.disabled
    ]
    if jobs:
        context.queue.enqueue_many(jobs)


def _bot_move(context: WorkerContext, game_id: str, state: State, levels: dict[str, str]) -> str:
    pending = state.pending
    if pending is None:
        return "nothing to decide"
    player = state.players[state.seat_players[pending.seat]]
    level = levels[player]
    if not level:
        return "a person decides"
    log = [event for _v, event, _d, _h in context.store.run(log_op(context.path, game_id))]
    seen = seen_by(state, log[: state.version], pending.seat)
    bot = make(level, **context.bot_options.get(level, {}))
    command = bot.choose(seen, random.Random(f"{game_id}:{state.version}"))
    try:
        context.store.run(
            execute_op(
                context.path,
                game_id,
                player=player,
                expected_version=state.version,
                command_id=f"bot:{state.version}",
                commands=[command],
                now=iso(context.clock()),
                by=f"bot:{level}",
            )
        )
    except VersionConflict:  # somebody got in first: the newer append has its own job
        return "moved on"
    return f"{level} played"


def _mover(batch: Batch) -> str:
    """The player who made a move with this append ("" for a join, a leave...: the last to
    join starts the game, and is told of their turn like everybody else)."""
    meta = meta_decoder.decode(batch.metadata)
    return meta.player if meta.kind == "commands" else ""


def _levels(context: WorkerContext, game_id: str, state: State) -> dict[str, str]:
    """The bot level that plays each player of the game ("" for a person), seats handed
    over included."""
    handed = context.store.run(handovers_op(context.accounts.prefix, game_id))
    return {player: handed.get(player) or _level(context, player) for player in state.players}


def _level(context: WorkerContext, player: str) -> str:
    level = context.levels.get(player)
    if level is None:
        level = context.levels[player] = context.store.run(bot_level_op(context.accounts, player))
    return level

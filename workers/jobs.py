"""The job that follows an append, a small function with primitive arguments that RQ calls by
name (JSON, never pickle). It is idempotent: run twice, it does what it did once.

`game_moved(game_id, first_version, version)` follows the append that added the events
`first_version..version` to `game_id`:
- it names the notifications the append calls for (`projections.notices.notices_for`) and
  enqueues one delivery job per recipient and channel, with an id made of the kind, the
  version, the game, the seat and the channel: a notice handled twice enqueues it once. A
  webhook's first attempt it makes itself, last (`workers.webhooks.send_first`), and only a
  failed one becomes a job under that id: a job per move less;
- if the game still stands at `version` and a bot plays the seat that decides now, the bot
  chooses from what that seat may see and sends its command through the command path, as that
  seat, with the version it decided on and a command id of its own per version (a second run
  is the first one's duplicate). A game that moved on meanwhile is left to the newer append's
  job (no turn is announced that is already over);
- in a timed game, it sets the game's timers for that version: the deadline of the turn that
  begins and its reminders (`workers.deadlines`).
"""

from __future__ import annotations

from domain.events import GameCancelled, GameEnded, GameStarted
from domain.evolve import fold
from domain.state import State
from projections.notices import Notice, notices_for
from projections.timekeeping import CLOCK_BY
from store.handovers import earlier_handovers_op, game_handovers_op, handover_levels
from store.notifications import channels_op, decided_op
from store.reads import current_op, events_op, last_batch_op, log_op, metadata_at_op
from store.records import AppendMeta, meta_decoder
from store.time_controls import time_control_op
from workers.bot_play import levels_of, play_for
from workers.context import WorkerContext, current
from workers.deadlines import keep_time
from workers.game_clocks import clock_under
from workers.inboxes import keep_inboxes
from workers.telling import enqueue_notices
from workers.webhooks import send_first

TABLE_EVENTS = (GameStarted, GameEnded, GameCancelled)
"""What is announced to the whole table, even once the game has moved on (and so is a turn
the clock played)."""


def game_moved(game_id: str, first_version: int, version: int) -> str:
    """What follows the append that brought `game_id` to `version` (see the module)."""
    context = current()
    run = context.store.run
    # the reads in one round trip to Redis: this is the path of every move
    head, appended, last, control = context.store.gather(
        current_op(context.path, game_id),
        events_op(context.path, game_id, first_version, version),
        last_batch_op(context.path, game_id),
        time_control_op(context.accounts.prefix, game_id),
    )
    timed_out, decided, since = False, None, None
    if last is not None and last.last_version != version:
        last = None  # an append landed between the reads: the game moved on
    if head.version == version:  # the common case: the state is the head's
        state = head
        acted_by = ""
        if last is not None:
            meta = meta_decoder.decode(last.metadata)
            since = meta.time
            acted_by = _mover(meta)
            timed_out = meta.by.startswith(CLOCK_BY)
            if meta.seat is not None and not meta.by:  # the person's own decision
                decided = decided_op(context.notifications, game_id, meta.seat, version)
    else:  # the game moved on: only what this append told the table, or its timed-out seat
        meta = meta_decoder.decode(run(metadata_at_op(context.path, game_id, first_version)))
        acted_by = _mover(meta)
        timed_out = meta.by.startswith(CLOCK_BY)
        if not timed_out and not any(isinstance(event, TABLE_EVENTS) for event in appended):
            return "moved on"  # the turn it began is over, and that is all it could announce
        log = [event for _v, event, _d, _h in run(log_op(context.path, game_id))]
        state = fold(log[:version])
    # who plays each seat and how each player is told, in one round trip again (with the
    # note of the person's decision: what they are told next starts after it)
    players = state.players
    handed, earlier, *found = context.store.gather(
        game_handovers_op(context.path.context.keys, game_id),
        earlier_handovers_op(context.path.context.keys, game_id),
        *(channels_op(context.notifications, player) for player in players),
        *([decided] if decided is not None else []),
    )
    channels = dict(zip(players, found[: len(players)], strict=True))
    levels = levels_of(context, game_id, state, handover_levels(handed, earlier))
    persons = {player for player, level in levels.items() if not level}
    notices = notices_for(state, appended, acted_by, persons, timed_out=timed_out)
    if head.version != version:  # the decision passed on already: that turn is over
        notices = [n for n in notices if n.kind != "turn.started"]
    at_once = enqueue_notices(
        context, game_id, version, notices, webhooks_at_once=True, channels=channels
    )
    outcome = "moved on"
    if head.version == version:
        clock = clock_under(context, game_id, state, control)
        keep_inboxes(context, game_id, state, since, clock)
        keep_time(context, game_id, state, levels, clock)
        outcome = _bot_move(context, game_id, state, levels)
    # The webhooks last: a slow receiver holds up neither the bot nor the clock.
    for notice_id, told, theirs in at_once:
        send_first(context, notice_id, game_id, version, told, channels=theirs)
    return outcome


def handed_over(game_id: str, player_id: str) -> str:
    """What follows a player handing their seat to a bot (`store.handovers`): the others are
    told, and the bot plays the seat's decision if it is pending."""
    context = current()
    state = context.store.run(current_op(context.path, game_id))
    levels = levels_of(context, game_id, state)
    told = [
        Notice(player, state.seat_of(player), "seat.resigned", state.seat_of(player_id))
        for player, level in levels.items()
        if not level and player != player_id
    ]
    enqueue_notices(context, game_id, state.version, told)
    return _bot_move(context, game_id, state, levels)


def _bot_move(context: WorkerContext, game_id: str, state: State, levels: dict[str, str]) -> str:
    pending = state.pending
    if pending is None:
        return "nothing to decide"
    level = levels[state.players[state.seat_players[pending.seat]]]
    if not level:
        return "a person decides"
    if play_for(context, game_id, state, level, by=f"bot:{level}", whole_turn=False) != "played":
        return "moved on"
    return f"{level} played"


def _mover(meta: AppendMeta) -> str:
    """The player who made a move with the append of this metadata ("" for a join, a
    leave...: the last to join starts the game, and is told of their turn like everybody
    else)."""
    return meta.player if meta.kind == "commands" else ""

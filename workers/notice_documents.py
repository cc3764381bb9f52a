"""The document of a notification (`projections.notices.NoticeDocument`): what a webhook
posts and an e-mail or a daily digest is written from, the same for every channel. Made from
the game as the recipient's seat may see it at the notification's version: what happened
since that seat was last told (`told_since`), who acted for a seat meanwhile (a bot, the
clock; once a turn), the table talk since, the deadline of the recipient's turn and the
receipt of the append."""

from __future__ import annotations

from domain.events import GameStarted, event_decoder
from domain.evolve import fold
from domain.state import State
from projections.notices import Notice, NoticeDocument, notice
from store.notifications import last_decided_op
from store.reads import batches_around_op, current_op, hash_at_op, log_op, read_op
from store.stored import AppendMeta, Batch, meta_decoder
from store.talk import KEPT, thread_op
from store.time_controls import time_control_op
from workers.context import WorkerContext
from workers.game_clocks import clock_under

TALK_IN_NOTICE = 20
"""The newest messages of table talk a notification carries."""


def document_of(
    context: WorkerContext, target: Notice, game_id: str, version: int, since: int | None = None
) -> NoticeDocument:
    """The document of the notification, as the recipient's seat may see the game at
    `version`: what happened since that seat was last told (`told_since`); `since`, the
    version of the seat's last decision (`workers.follow_up` notes it) if read already."""
    return document_and_state(context, target, game_id, version, since)[0]


def document_and_state(
    context: WorkerContext, target: Notice, game_id: str, version: int, since: int | None = None
) -> tuple[NoticeDocument, State]:
    """`document_of`, and the game's state at `version` it was made from (whatever else a
    channel says of the game, its players' names, without reading it again)."""
    run = context.store.run
    seat = target.seat
    decided, ending = context.store.gather(
        last_decided_op(context.notifications, game_id, seat if seat is not None else -1),
        batches_around_op(context.path, game_id, version, version),
    )
    if since is not None:
        decided = since
    # read from the append the notification is about at least: its mover is told of it too
    low = min(decided, version, *(b.first_version - 1 for b in ending[-1:]))
    head, stored, batches, said, control = context.store.gather(
        current_op(context.path, game_id),
        read_op(context.path, game_id, low, version),
        batches_around_op(context.path, game_id, low, version),
        thread_op(context.accounts.prefix, game_id, count=KEPT),
        time_control_op(context.accounts.prefix, game_id),
    )
    events = [event_decoder.decode(item.data) for item in stored]
    # the append that started the game: `game.started` told every seat of it
    started = [n for n, e in enumerate(events, low + 1) if isinstance(e, GameStarted)]
    ends = [b.last_version for b in batches for n in started if b.first_version <= n]
    # (the last of them ends the append that holds it)
    told = max([decided, *(end for end in ends[-1:] if end < version)])
    since = told_since(target, version, batches, decided=told, low=low)
    events = events[since - low :]
    if head.version == version:
        state = head
    else:  # the game moved on (a table event announced late): the state it describes
        state = fold(event for _v, event, _d, _h in run(log_op(context.path, game_id))[:version])
    acted, since_time = _acted(batches, since, version)
    clock = clock_under(context, game_id, state, control)
    new_talk = [m for m in said if m.time > since_time and m.seat != target.seat]
    head_hash = stored[-1].hash if stored else run(hash_at_op(context.path, game_id, version))
    receipt = None
    if ending and ending[-1].last_version == version:  # the receipt of the append to `version`
        accepted = meta_decoder.decode(ending[-1].metadata).time
        receipt = context.signer.receipt(game_id, version, head_hash, accepted)
    document = notice(
        state,
        events,
        target,
        game_id=game_id,
        head_hash=head_hash,
        receipt=receipt,
        since_version=since,
        play_url=f"{context.public_url}/games/{game_id}",
        deadline=clock.deadline if clock is not None and clock.running == target.seat else None,
        acted=acted,
        talk=new_talk[-TALK_IN_NOTICE:],  # the newest, the recipient's own left out
    )
    return document, state


def told_since(
    target: Notice, version: int, batches: list[Batch], *, decided: int, low: int
) -> int:
    """The version up to which the recipient's seat was last told the game, where its
    notification at `version` begins (never before `low`, where `batches` begin). After the
    seat's own appends that end at `version` (a `turn.timed_out`, or the `game.ended` of the
    move that ended the game), the start of their turn: its `turn.started` told it up to
    there. Else its last decision or the start of the game (`decided`, the later), or the end
    of the last append made for it (the clock or a bot played its turn: `turn.timed_out`
    told it so), whichever is latest. A reminder tells nothing its turn's `turn.started`
    told: it begins at its version."""
    if target.seat is None:
        return low
    if target.kind == "turn.reminder":
        return version
    own = [
        b for b in batches
        if b.last_version <= version and _mover(meta_decoder.decode(b.metadata)) == target.seat
    ]  # fmt: skip
    start = version  # the start of the seat's own appends that end at `version`
    for batch in reversed(own):
        if batch.last_version != start:
            break
        start = batch.first_version - 1
    if start < version:
        return max(start, low)
    return max(min(max([decided, *(b.last_version for b in own)]), version), low)


def _mover(meta: AppendMeta) -> int | None:
    """The seat an append of commands was made for (None: not one of commands)."""
    return meta.seat if meta.kind == "commands" else None


def _acted(
    batches: list[Batch], since: int, version: int
) -> tuple[dict[int, tuple[int, str]], str]:
    """The turns after `since` up to `version` that a bot or the clock played for a seat, by
    their first version (once a turn: an append that goes on with the turn of the one before
    it, for the same seat by the same hand, is not told again); and when the append that
    took `since` was made ("" for none)."""
    acted, since_time = {}, ""
    before: tuple[int | None, str] | None = None
    for batch in batches:
        meta = meta_decoder.decode(batch.metadata)
        if batch.first_version <= since <= batch.last_version:
            since_time = meta.time
        hand, goes_on = (_mover(meta), meta.by), before
        before = hand
        if hand == goes_on or not meta.by or meta.seat is None:
            continue  # the same turn as the append before it, or the seat's own
        if since < batch.first_version <= version:
            acted[batch.first_version] = (meta.seat, meta.by)
    return acted, since_time

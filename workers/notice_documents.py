"""The document of a notification (`projections.notices.NoticeDocument`): what a webhook
posts and an e-mail or a daily digest is written from, the same for every channel. Made from
the game as the recipient's seat may see it at the notification's version: what happened
since that seat last decided, who acted for a seat meanwhile (a bot, the clock), the table
talk since, the deadline of the recipient's turn and the receipt of the append."""

from __future__ import annotations

from domain.events import event_decoder
from domain.evolve import fold
from projections.notices import Notice, NoticeDocument, notice
from store.notifications import last_decided_op
from store.reads import batches_around_op, current_op, hash_at_op, log_op, read_op
from store.stored import Batch, meta_decoder
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
    `version`: what happened since that seat last decided (`workers.follow_up` notes when; `since`,
    that version if read already)."""
    run = context.store.run
    if since is None:
        since = 0
        if target.seat is not None:
            since = run(last_decided_op(context.notifications, game_id, target.seat))
    since = min(since, version)
    head, stored, batches, said, control = context.store.gather(
        current_op(context.path, game_id),
        read_op(context.path, game_id, since, version),
        batches_around_op(context.path, game_id, since, version),
        thread_op(context.accounts.prefix, game_id, count=KEPT),
        time_control_op(context.accounts.prefix, game_id),
    )
    events = [event_decoder.decode(item.data) for item in stored]
    if head.version == version:
        state = head
    else:  # the game moved on (a table event announced late): the state it describes
        state = fold(event for _v, event, _d, _h in run(log_op(context.path, game_id))[:version])
    acted, since_time = _acted(batches, since, version)
    clock = clock_under(context, game_id, state, control)
    new_talk = [m for m in said if m.time > since_time and m.seat != target.seat]
    head_hash = stored[-1].hash if stored else run(hash_at_op(context.path, game_id, version))
    ending = next((b for b in batches if b.last_version == version), None)
    receipt = None
    if ending is not None:  # the receipt of the append that brought the game to `version`
        accepted = meta_decoder.decode(ending.metadata).time
        receipt = context.signer.receipt(game_id, version, head_hash, accepted)
    return notice(
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


def _acted(
    batches: list[Batch], since: int, version: int
) -> tuple[dict[int, tuple[int, str]], str]:
    """The appends after `since` up to `version` that a bot or the clock made for a seat;
    and when the append that took `since` was made ("" for none)."""
    acted, since_time = {}, ""
    for batch in batches:
        meta = meta_decoder.decode(batch.metadata)
        if batch.first_version <= since <= batch.last_version:
            since_time = meta.time
        if since < batch.first_version <= version and meta.by and meta.seat is not None:
            acted[batch.first_version] = (meta.seat, meta.by)
    return acted, since_time

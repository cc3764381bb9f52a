"""The reliability record kept up to date (`projections.reliability`, `store.reliability`):
each finished game's turns by seat, kept by the follow-up of its end and made again by
`patrician rebuild-projections`; and each turn the clock played during its player's quiet
hours, noted by the follow-up of the clock's append (the setting as it is then)."""

from __future__ import annotations

from datetime import datetime

from domain.state import State
from projections.reliability import game_turns
from projections.timekeeping import appends
from store.errors import GameNotFound
from store.notifications import QuietHours
from store.reads import batches_op, current_op, last_change_op, metadata_at_op
from store.reliability import GameTurns, clear_turns_op, mark_quiet_op, write_turns_op
from store.stored import meta_decoder
from workers.bot_play import levels_of
from workers.context import WorkerContext
from workers.delivery_attempts import after_quiet_hours


def keep_game_turns(context: WorkerContext, game_id: str, state: State, ended: str) -> None:
    """Keep a finished game's turns by seat (the same again when done twice)."""
    batches = context.store.run(batches_op(context.path, game_id))
    log = appends([batch for batch in batches if batch.last_version <= state.version])
    levels = levels_of(context, game_id, state, {})  # the players' own: bots from the start
    players = [state.players[index] for index in state.seat_players]
    bots = {player for player in players if levels.get(player)}
    turns = GameTurns(ended, game_turns(log, players, bots, deciding=None))
    context.store.run(write_turns_op(context.accounts.prefix, game_id, turns))


def note_quiet_timeout(
    context: WorkerContext, game_id: str, first_version: int, player: str, *,
    quiet: QuietHours | None, when: str | None,
) -> bool:  # fmt: skip
    """The clock played `player`'s turn with the append at `first_version`, made at `when`
    (None: read it): note it if their quiet hours held then; whether they did."""
    if quiet is None:
        return False
    if when is None:
        raw = context.store.run(metadata_at_op(context.path, game_id, first_version))
        when = meta_decoder.decode(raw).time
    if after_quiet_hours(quiet, datetime.fromisoformat(when)) is None:
        return False
    context.store.run(mark_quiet_op(context.accounts, player, game_id, first_version))
    return True


def rebuild_game_turns(context: WorkerContext) -> int:
    """Every finished game's turns made again from its event stream; how many games."""
    context.store.run(clear_turns_op(context.accounts.prefix))
    kept = 0
    for game_id in context.store.game_ids():
        try:
            state = context.store.run(current_op(context.path, game_id))
        except GameNotFound:
            continue
        if state.phase != "over":
            continue
        ended = context.store.run(last_change_op(context.path, game_id)) or ""
        keep_game_turns(context, game_id, state, ended)
        kept += 1
    return kept

"""The projections the workers keep beside the games: every player's inbox (`store.inbox`),
written after each append, and their rebuilding from the event streams
(`patrician rebuild-projections`, which repairs the lists beside the games first), which
must come out equal to the live ones."""

from __future__ import annotations

from collections.abc import Iterator

from domain.state import State
from domain.view import ClockView
from projections.inbox import entry_of
from store.errors import GameNotFound
from store.inbox import InboxEntry, inbox_key, project_op, replace_inbox_op
from store.reads import current_op, last_change_op
from store.time_controls import time_control_op
from workers.context import WorkerContext
from workers.game_clocks import clock_under
from workers.repairs import repair_games_of, repair_lobby


def keep_inboxes(
    context: WorkerContext, game_id: str, state: State, since: str | None, clock: ClockView | None
) -> None:
    """Write the game's entry at `state` in the inbox of each of its players (in one round
    trip; an entry for an older version than the one there is not written)."""
    prefix = context.accounts.prefix
    context.store.gather(
        *(
            project_op(prefix, player, entry_of(game_id, state, player, since, clock))
            for player in state.players
        )
    )


def rebuild_inboxes(context: WorkerContext) -> tuple[int, int]:
    """Every inbox made again from the games' event streams (the game at its head, as the
    workers leave it after its last append), after the lobby and every player's list are
    repaired (`workers.repairs`): how many games and players."""
    repair_lobby(context)
    for player in _listing_players(context):
        repair_games_of(context, player)
    rebuilt: dict[str, list[InboxEntry]] = {}
    games = 0
    for game_id in context.store.game_ids():
        try:
            state = context.store.run(current_op(context.path, game_id))
        except GameNotFound:
            continue
        since, control = context.store.gather(
            last_change_op(context.path, game_id),
            time_control_op(context.accounts.prefix, game_id),
        )
        clock = clock_under(context, game_id, state, control)
        for player in state.players:
            rebuilt.setdefault(player, []).append(entry_of(game_id, state, player, since, clock))
        games += 1
    prefix = context.accounts.prefix
    stale = {_player_of(key, prefix) for key in _inbox_keys(context)} - set(rebuilt)
    for player in sorted(stale | set(rebuilt)):
        context.store.run(replace_inbox_op(prefix, player, rebuilt.get(player, [])))
    return games, len(rebuilt)


def _listing_players(context: WorkerContext) -> Iterator[str]:
    """Every player with a list of games."""
    pattern = context.accounts.games("*")
    head, _, tail = pattern.partition("*")
    for key in context.store.client.scan_iter(pattern, 1000):
        name = key.decode() if isinstance(key, bytes) else str(key)
        yield name.removeprefix(head).removesuffix(tail)


def _inbox_keys(context: WorkerContext) -> Iterator[str]:
    for key in context.store.client.scan_iter(inbox_key(context.accounts.prefix, "*"), 1000):
        yield key.decode() if isinstance(key, bytes) else str(key)


def _player_of(key: str, prefix: str) -> str:
    return key.removeprefix(inbox_key(prefix, ""))

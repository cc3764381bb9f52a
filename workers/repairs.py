"""The repair of the lists kept beside the games, by the workers (a GET never writes).

The lobby and each player's list of games are written before the append that creates or
joins a game (`store.games`), so no crash leaves a game out of them; the price is a listing
whose append never landed, or a table that filled while the lobby was not told. Readers skip
those; these repairs take them off, once a listing is older than `LISTING_GRACE_SECONDS`
(before that its append may still be on its way). The lobby is repaired about once a minute
by one of the workers (`repair_lobby_now`, from the timers' loop); every player's list by
`patrician rebuild-projections`.
"""

from __future__ import annotations

import msgspec

from domain.state import State
from store import accounts
from store.errors import GameNotFound
from store.protocol import Call, Op
from store.reads import current_op
from workers.context import WorkerContext

LISTING_GRACE_SECONDS = 600.0
"""How long a listing may wait for the game or the seat it was made for."""
REPAIR_SECONDS = 60
"""How often the lobby is repaired (by whichever worker comes first)."""


class Repaired(msgspec.Struct, frozen=True):
    """What a repair took off: listings whose append never landed, tables that filled."""

    dropped: int = 0
    closed: int = 0


def repair_lobby_now(context: WorkerContext) -> Repaired | None:
    """Repair the lobby, if no worker did in the last `REPAIR_SECONDS` (None then)."""
    key = f"{context.accounts.prefix}:repaired:lobby"
    if not context.store.run(_claim(key)):
        return None
    return repair_lobby(context)


def _claim(key: str) -> Op[bool]:
    return bool((yield Call("set", (key, "1", REPAIR_SECONDS, None, True))))


def repair_lobby(context: WorkerContext, limit: int = 1000) -> Repaired:
    """Take off the lobby the tables that filled or were cancelled, and the listings of
    creations that never landed."""
    dropped = closed = 0
    cutoff = _cutoff(context)
    run, keys = context.store.run, context.accounts
    for game_id, listed in run(accounts.lobby_op(keys, limit)):
        state = _listed(context, game_id)
        if state is None and listed < cutoff:
            run(accounts.drop_open_game_op(keys, game_id, cutoff))
            dropped += 1
        elif state is not None and state.phase != "waiting":
            run(accounts.close_game_op(keys, game_id))
            closed += 1
    return Repaired(dropped, closed)


def repair_games_of(context: WorkerContext, player: str) -> Repaired:
    """Take off a player's list the games whose creation or join never landed."""
    dropped = 0
    cutoff = _cutoff(context)
    run, keys = context.store.run, context.accounts
    for game_id, listed in run(accounts.games_of_op(keys, player)):
        state = _listed(context, game_id)
        if (state is None or player not in state.players) and listed < cutoff:
            run(accounts.unlist_game_op(keys, player, game_id, cutoff))
            dropped += 1
    return Repaired(dropped=dropped)


def _listed(context: WorkerContext, game_id: str) -> State | None:
    """A listed game's state; None for a game listed before a creation that failed."""
    try:
        return context.store.run(current_op(context.path, game_id))
    except GameNotFound:
        return None


def _cutoff(context: WorkerContext) -> float:
    """Listings made before this moment whose append has not landed never will."""
    return context.clock().timestamp() - LISTING_GRACE_SECONDS

"""Setting a table through the command path: creating a game, joining it, leaving it, and
cancelling it before it starts (R1-R7). The invite code that opens a waiting table is derived
from the game's secret seed, so it is kept nowhere.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable, Sequence

from domain.board import RULES_VERSION
from domain.events import Event
from domain.evolve import fold
from domain.setup import cancel_game, create_game, join_game, leave_game
from domain.state import NEW_GAME, State
from store import streams
from store.appending import digest
from store.command_path import CommandPath
from store.errors import DuplicateCommand, VersionConflict, WrongInvite
from store.games import Outcome, append_op, first_result_op
from store.keys import check_game_id
from store.protocol import Call, Op
from store.reads import current_op
from store.stored import AppendMeta


def invite_code_of(state: State) -> str:
    """The code that opens a waiting game's table: derived from its secret seed (HMAC), so it
    is kept nowhere and can be shown again to the players at the table. Once the seed is
    published the table is closed for good, so the code opens nothing any more."""
    seed = bytes.fromhex(state.server_seed)
    return hmac.new(seed, b"patrician-invite", hashlib.sha256).hexdigest()[:24]


def create_op(
    path: CommandPath,
    game_id: str,
    *,
    player: str,
    name: str,
    edition: str,
    seats: int,
    modules: Sequence[str],
    entropy: str,
    server_seed: bytes,
    now: str,
    beside: Sequence[Call] = (),
    rules_version: int = RULES_VERSION,
) -> Op[Outcome]:
    """Create a game with its creator in the first seat; raises `InvalidOptions`. Creating
    it again (the same id: a retried request) answers the first creation. The server creates
    every game by the current rules; `rules_version` makes a game of an older supported
    version, as one created before an upgrade (its events are stored in that version's shape).

    `beside` are the writes kept beside the game's log: its listings (the lobby, the
    creator's games) and its clock. They are made after every check and before the append:
    should the append fail or the process die in between, a listed game that does not exist
    is skipped by its readers, whereas listing after the append could leave a game in no list
    at all (and whoever sees the game sees its clock)."""
    check_game_id(game_id)
    events = create_game(
        edition=edition,
        seats=seats,
        modules=modules,
        game_data=path.game_data,
        server_seed=server_seed,
        player=player,
        entropy=entropy,
        name=name,
        rules_version=rules_version,
    )
    yield from _each(beside)
    try:
        return (
            yield from append_op(
                path,
                game_id,
                state=NEW_GAME,
                events=events,
                after=fold(events),
                command_id="create",
                meta=AppendMeta("create", player, now),
                request=digest(b"create", player.encode()),
            )
        )
    except DuplicateCommand as done:
        return (yield from first_result_op(path, game_id, done.first_result))


def _each(calls: Sequence[Call]) -> Op[None]:
    """Make each call in turn (a plain `yield from` a list could not be sent the replies)."""
    for call in calls:  # noqa: UP028 (see above)
        yield call


def join_op(
    path: CommandPath,
    game_id: str,
    *,
    player: str,
    name: str,
    invite_code: str,
    entropy: str,
    now: str,
    listings: Sequence[Call] = (),
) -> Op[Outcome]:
    """Take a seat with the invite code; the last seat starts and deals the game.

    `listings` (the player's game list) are written after the invite is checked and before
    the append, as in `create_op`: a listed game where the player holds no seat (the table
    filled in between) is skipped by its readers."""
    state = yield from current_op(path, game_id)
    offered = invite_code.encode("utf-8", "surrogatepass")
    if state.finished or not hmac.compare_digest(invite_code_of(state).encode(), offered):
        raise WrongInvite(game_id)
    if player in state.players:  # a retried join: its first answer again
        first = state.players[0] == player
        known = yield from streams.command_memo(
            path.context, game_id, "create" if first else _join_id(state, player)
        )
        if known is not None:
            yield from _each(listings)  # so that a retry restores a listing lost since
            return (yield from first_result_op(path, game_id, known[0]))
    join_game(state, player, entropy, name)  # refuses a full table before any listing
    yield from _each(listings)
    return (
        yield from _seating_op(
            path,
            game_id,
            state,
            AppendMeta("join", player, now),
            decide=lambda state: join_game(state, player, entropy, name),
            command_id=lambda state: _join_id(state, player),
        )
    )


def _join_id(state: State, player: str) -> str:
    """A player may join, leave and join again: each join has its own command id."""
    times = state.left.count(player)
    return f"join:{player}" + (f":{times}" if times else "")


def _seating_op(
    path: CommandPath,
    game_id: str,
    state: State,
    meta: AppendMeta,
    *,
    decide: Callable[[State], list[Event]],
    command_id: Callable[[State], str],
    repeats: str | None = None,
) -> Op[Outcome]:
    """Append a change of the table (a join, a leave, a cancellation) decided on `state`, and
    decided again on a newer state after a conflict. `repeats` names the command id of an
    earlier change this request may be sent again for: if it was made, its first answer is
    the answer."""
    if repeats is not None:
        known = yield from streams.command_memo(path.context, game_id, repeats)
        if known is not None:
            return (yield from first_result_op(path, game_id, known[0]))
    for _attempt in range(path.conflict_retries + 1):
        events = decide(state)
        try:
            return (
                yield from append_op(
                    path,
                    game_id,
                    state=state,
                    events=events,
                    after=fold(events, state),
                    command_id=command_id(state),
                    meta=meta,
                    request=digest(meta.kind.encode(), meta.player.encode()),
                )
            )
        except DuplicateCommand as done:
            return (yield from first_result_op(path, game_id, done.first_result))
        except VersionConflict:
            state = yield from current_op(path, game_id)
    raise VersionConflict(state.version)


def leave_op(path: CommandPath, game_id: str, *, player: str, now: str) -> Op[Outcome]:
    """Give up a place at a table that waits (not the creator's: they cancel). Leaving again
    after a lost answer is answered with the first answer."""
    state = yield from current_op(path, game_id)
    gone = player not in state.players and player in state.left
    return (
        yield from _seating_op(
            path,
            game_id,
            state,
            AppendMeta("leave", player, now),
            decide=lambda state: leave_game(state, player),
            command_id=lambda state: f"leave:{player}:{state.left.count(player)}",
            repeats=f"leave:{player}:{state.left.count(player) - 1}" if gone else None,
        )
    )


def cancel_op(path: CommandPath, game_id: str, *, player: str, now: str) -> Op[Outcome]:
    """Call off a game that has not started (its creator only); answered again if retried."""
    state = yield from current_op(path, game_id)
    done = state.phase == "cancelled" and state.players[:1] == (player,)
    return (
        yield from _seating_op(
            path,
            game_id,
            state,
            AppendMeta("cancel", player, now),
            decide=lambda state: cancel_game(state, player),
            command_id=lambda _state: "cancel",
            repeats="cancel" if done else None,
        )
    )

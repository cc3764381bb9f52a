"""Who plays each seat, and a bot playing one: through the command path, as that seat, with
the version it decided on and a command id of its own per version, so that a job run twice
plays once (the second is the first one's duplicate) and a job that meets a game that moved
on does nothing."""

from __future__ import annotations

import random

from bots.levels import make
from bots.seen import seen_by
from domain.commands import Command
from domain.decide import decide, turns_up_a_card
from domain.state import State
from store.accounts import bot_level_op
from store.clock import iso
from store.errors import VersionConflict
from store.games import execute_op
from store.handovers import handovers_op
from store.reads import log_op
from workers.context import WorkerContext
from workers.metrics import APPENDS

SLOW_LEVELS = frozenset({"ismcts"})
"""Levels whose decision is a search (tenths of a second): a follower leaves it to a job
(`workers.jobs.bot_turn`) rather than hold up the notices of other games behind it."""


def levels_of(
    context: WorkerContext, game_id: str, state: State, handed: dict[str, str] | None = None
) -> dict[str, str]:
    """The bot level that plays each player of the game ("" for a person), seats handed
    over included (`handed`, the game's handovers, if read already)."""
    if handed is None:
        handed = context.store.run(handovers_op(context.path.context.keys, game_id))
    return {player: handed.get(player) or _level(context, player) for player in state.players}


def _level(context: WorkerContext, player: str) -> str:
    level = context.levels.get(player)
    if level is None:
        level = context.levels[player] = context.store.run(bot_level_op(context.accounts, player))
    return level


def play_for(context: WorkerContext, game_id: str, state: State, level: str, *, by: str) -> str:
    """The bot of `level` plays the decision pending at `state` (the game's head) and every
    decision of that seat after it until another seat's comes, in one append (up to a hidden
    card turned up, where an append ends, R42: the rest follows in the next); "played", or
    "moved on" when somebody got in first."""
    pending = state.pending
    assert pending is not None
    seat, player = pending.seat, state.players[state.seat_players[pending.seat]]
    log = [event for _v, event, _d, _h in context.store.run(log_op(context.path, game_id))]
    log = log[: state.version]
    bot = make(level, **context.bot_options.get(level, {}))
    commands: list[Command] = []
    deciding: State | None = state
    while deciding is not None and deciding.pending is not None and deciding.pending.seat == seat:
        rng = random.Random(f"{game_id}:{deciding.version}")
        command = bot.choose(seen_by(deciding, log, seat), rng)
        events, deciding = decide(deciding, seat, command)
        log += events
        commands.append(command)
        if turns_up_a_card(events):
            break
    try:
        outcome = context.store.run(
            execute_op(
                context.path,
                game_id,
                player=player,
                expected_version=state.version,
                command_id=f"{by.partition(':')[0]}:{state.version}",
                commands=commands,
                now=iso(context.clock()),
                by=by,
            )
        )
    except VersionConflict:  # somebody got in first: the newer append has its own job
        return "moved on"
    if not outcome.repeated:
        APPENDS.labels("commands", by.partition(":")[0]).inc()
    return "played"


def pending_level(state: State, levels: dict[str, str]) -> str:
    """The bot level that plays the decision pending at `state` ("" a person, or nothing
    pending)."""
    pending = state.pending
    return "" if pending is None else levels[state.players[state.seat_players[pending.seat]]]


def play_pending(context: WorkerContext, game_id: str, state: State, levels: dict[str, str]) -> str:
    """The bot of the seat whose decision is pending at `state` plays it, and the rest of that
    seat's turn (up to a card turned up, R42), in one append, if a bot plays that seat
    (`levels`, by `levels_of`); what became of it. A whole turn rather than one decision an
    append: the same decisions (each made from the seat's view at its own version, with the
    randomness of that version), but one append and one follow-up instead of two or three."""
    if state.pending is None:
        return "nothing to decide"
    level = pending_level(state, levels)
    if not level:
        return "a person decides"
    if play_for(context, game_id, state, level, by=f"bot:{level}") != "played":
        return "moved on"
    return f"{level} played"

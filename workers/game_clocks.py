"""A timed game's clocks as the jobs read them: at a state's version, from the game's time
control (`store.time_controls`) and the appends' times (`projections.timekeeping`)."""

from __future__ import annotations

from domain.state import State
from domain.view import ClockView
from projections.timekeeping import clocks_op
from store.time_controls import TimeControl, time_control_op
from workers.context import WorkerContext


def clock_of(context: WorkerContext, game_id: str, state: State) -> ClockView | None:
    """The game's clocks at the state's version (None: an untimed game)."""
    control = context.store.run(time_control_op(context.accounts.prefix, game_id))
    return clock_under(context, game_id, state, control)


def clock_under(
    context: WorkerContext, game_id: str, state: State, control: TimeControl | None
) -> ClockView | None:
    """The game's clocks at the state's version, its time control read already."""
    if control is None:
        return None
    clocks, _away = context.store.run(
        clocks_op(context.path, context.accounts, game_id, state, control)
    )
    return clocks[-1][1] if clocks else None

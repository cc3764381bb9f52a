"""What the jobs of a worker process run with: the store, the command path, the keys of the
accounts, the clock and the budget of the bots. Set once when the process starts (RQ calls job
functions by name, with primitive arguments only), read by every job."""

from __future__ import annotations

from dataclasses import dataclass, field

from store.accounts import Accounts
from store.client import EventStore
from store.clock import Clock, system_clock
from store.games import CommandPath


@dataclass
class WorkerContext:
    store: EventStore
    path: CommandPath
    accounts: Accounts
    clock: Clock = system_clock
    bot_options: dict[str, dict[str, object]] = field(
        default_factory=lambda: {"ismcts": {"iterations": 300}}
    )
    """The options of each level of bot (the search's budget: iterations, so that a bot's
    move does not depend on how busy the machine is)."""
    levels: dict[str, str] = field(default_factory=dict)
    """The bot level of each player seen (a player never changes: kept)."""


_current: list[WorkerContext] = []


def configure(context: WorkerContext) -> None:
    _current[:] = [context]


def current() -> WorkerContext:
    if not _current:
        raise RuntimeError("no worker context: call workers.context.configure first")
    return _current[0]

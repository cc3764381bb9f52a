"""The one way time enters the server and the workers: an injected clock (tests pass a fake
one), and the one format the command path writes times in."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

Clock = Callable[[], datetime]


def system_clock() -> datetime:
    return datetime.now(UTC)


def iso(moment: datetime) -> str:
    """UTC, ISO 8601, to the millisecond: `2026-11-30T01:36:40.811Z`."""
    if moment.utcoffset():
        moment = moment.astimezone(UTC)
    # isoformat is C: a third of the time of a strftime pattern, on the path of every append
    return moment.isoformat(timespec="milliseconds")[:23] + "Z"

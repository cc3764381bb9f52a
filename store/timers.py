"""The timers of timed games, in Redis, not in a process: each turn's deadline and its
reminders, due at a moment (a sorted set of every timer by when it is due), so that they
survive a worker or a Redis restart (with the AOF of `deploy/redis.conf`). The workers set a
game's timers after each of its appends (`set_timers_op`, for that version: one set late for an
older version is refused) and fire those due (`due_op`, then `fired_op` once their job is
enqueued: a timer is never lost, and one fired twice acts once, its job being idempotent).
Store operations in the style of `store.protocol`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from store.protocol import Call, Op, evaluate, reply_text


class Timer(NamedTuple):
    """A timer: `kind` "timeout" (the turn's deadline) or "remind" (`hours` before it)."""

    kind: str
    game_id: str
    version: int
    hours: float = 0.0

    def member(self) -> str:
        if self.kind == "remind":
            return f"remind {self.game_id} {self.version} {self.hours:g}"
        return f"timeout {self.game_id} {self.version}"

    @classmethod
    def parse(cls, member: str) -> Timer:
        kind, game_id, version, *hours = member.split(" ")
        return cls(kind, game_id, int(version), float(hours[0]) if hours else 0.0)


def timers_key(prefix: str) -> str:
    return f"{prefix}:timers"


def game_timers_key(prefix: str, game_id: str) -> str:
    """The game's own timers: under the hash tag `{<prefix>:timers}`, the slot of the sorted
    set of every timer (a key without braces hashes whole), for `timers.lua` writes both and a
    script's keys must share a slot on Redis Cluster."""
    return f"{{{timers_key(prefix)}}}:{game_id}"


def set_timers_op(
    prefix: str, game_id: str, version: int, timers: Sequence[tuple[Timer, float]]
) -> Op[bool]:
    """Make `timers` (each with when it is due, in seconds since the epoch) the game's
    timers at `version` (none: the game needs none now); False if a newer version's are
    there."""
    args: list[str | int | float] = [version]
    for timer, due in timers:
        args += [timer.member(), due]
    keys = (timers_key(prefix), game_timers_key(prefix, game_id))
    return bool((yield from evaluate("timers", 2, (*keys, *args))))


def due_op(prefix: str, now: float, count: int = 100) -> Op[list[Timer]]:
    """The timers due at `now`, the earliest first."""
    found = yield Call("zrangebyscore", (timers_key(prefix), "-inf", now, 0, count))
    return [Timer.parse(reply_text(member)) for member in found]


def fired_op(prefix: str, timer: Timer) -> Op[None]:
    """Its job is enqueued: the timer is done."""
    yield Call("zrem", (timers_key(prefix), timer.member()))
    yield Call("hdel", (game_timers_key(prefix, timer.game_id), timer.member()))

"""The archiving of finished games (docs/workers.md, "Archiving"): every so often, one worker
process goes over the live games and moves each finished one whose last append is older than
`PATRICIAN_ARCHIVE_AFTER_SECONDS` into its archive (`store.archiving`), out of Redis memory's
live form. Also `patrician archive`, the same sweep once, for the operator.

A sweep is safe to run twice at once or to stop anywhere (archiving a game is), but it reads
every live game's last entry, so a lock (one key, `SET NX EX`) lets one process sweep per
period however many workers run.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Mapping
from datetime import datetime, timedelta

import msgspec
import structlog

from domain.events import SeedRevealed, event_decoder
from store.archiving import Outcome, archive_game
from store.client import EventStore
from store.clock import Clock, system_clock
from store.errors import StoreError
from store.stored import meta_decoder
from workers.rq_workers import Loop

log = structlog.get_logger("patrician.workers")

ARCHIVE_AFTER_SECONDS = 7 * 24 * 3600.0
"""How long a finished game stays live before it is archived, unless the operator says
otherwise (`PATRICIAN_ARCHIVE_AFTER_SECONDS`; 0: never archive)."""
SWEEP_SECONDS = 3600.0
"""How often a sweep starts, among all the workers."""


def archive_after_seconds(environ: Mapping[str, str] = os.environ) -> float:
    """`PATRICIAN_ARCHIVE_AFTER_SECONDS`: a number of seconds at least 0 (0: never)."""
    raw = environ.get("PATRICIAN_ARCHIVE_AFTER_SECONDS", "")
    try:
        seconds = float(raw) if raw else ARCHIVE_AFTER_SECONDS
    except ValueError:
        seconds = -1.0
    if not seconds >= 0:  # a negative number, NaN or no number at all
        raise ValueError(f"PATRICIAN_ARCHIVE_AFTER_SECONDS is seconds, at least 0, not {raw!r}")
    return seconds


def finished_before(store: EventStore, game_id: str, cutoff: datetime) -> bool:
    """Whether the game's log ends with its last event (the seed revealed: R19) appended
    before `cutoff`: one short read of its end."""
    batch = store.last_batch(game_id)
    if batch is None:
        return False
    last = store.read(game_id, after=batch.last_version - 1)
    try:
        if not last or not isinstance(event_decoder.decode(last[-1].data), SeedRevealed):
            return False
    except msgspec.MsgspecError:  # not an event of the game's: the archiving would refuse it
        return False
    return datetime.fromisoformat(meta_decoder.decode(batch.metadata).time) < cutoff


def archive_finished(
    store: EventStore, older_than_seconds: float, *, clock: Clock = system_clock
) -> Counter[Outcome | str]:
    """Archive every live game finished more than `older_than_seconds` ago; what became of
    them, counted (`failed`: a game that does not archive, logged and left live)."""
    cutoff = clock() - timedelta(seconds=older_than_seconds)
    done: Counter[Outcome | str] = Counter()
    for game_id in store.game_ids(archived=False):
        try:
            if finished_before(store, game_id, cutoff):
                done[archive_game(store, game_id)] += 1
        except StoreError as error:  # one game that does not archive stops no other
            log.error("a game could not be archived", game_id=game_id, reason=str(error))
            done["failed"] += 1
    return done


class ArchiveLoop(Loop):
    """The sweeps of one worker process: one per `sweep_seconds` among all the workers (the
    one that takes the lock), the first a minute after the start."""

    def __init__(
        self,
        store: EventStore,
        older_than_seconds: float,
        *,
        sweep_seconds: float = SWEEP_SECONDS,
        clock: Clock = system_clock,
    ) -> None:
        super().__init__("archiving")
        self.store = store
        self.older_than_seconds = older_than_seconds
        self.sweep_seconds = sweep_seconds
        self.clock = clock
        self.lock = f"{store.keys.prefix}:archive-sweep"

    def _run(self) -> None:
        wait = min(60.0, self.sweep_seconds)
        while not self.stopped.wait(wait):
            wait = self.sweep_seconds
            try:
                if self.store.client.set(self.lock, b"1", nx=True, px=int(wait * 1000)):
                    done = archive_finished(self.store, self.older_than_seconds, clock=self.clock)
                    if done:
                        log.info("archived finished games", **done)
            except Exception:
                log.exception("the archiving failed a sweep; it goes on")

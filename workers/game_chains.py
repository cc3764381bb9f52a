"""A batch of notices as chains, one per game: each game's notices followed in turn, on
any thread, the games of a batch at once (`workers.follower` reads the batch, runs the chains
on its threads, and keeps the books: what to acknowledge, what to try again).

A chain changes nothing but its own outcome, so that several run at once without a lock:
what became of each notice (followed, failed, held back behind a failed one of its game, or
not tried because Redis was found out of reach) is settled by the follower afterwards.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import structlog
from redis import exceptions as redis_errors

from store import tracing
from store.stored import OutboxEntry
from store.streams import outbox_entry

log = structlog.get_logger("patrician.workers")

Entry = tuple[bytes, dict[bytes, bytes]]
Follow = Callable[[OutboxEntry], object]
"""What a notice calls for, run by the follower (raises: the notice stays pending)."""
_GONE = (redis_errors.ConnectionError, redis_errors.TimeoutError, redis_errors.BusyLoadingError)


class RedisOutOfReach(Exception):
    """A follow-up found Redis out of reach: the batch stopped there, its notices kept to be
    tried again once Redis answers."""


def out_of_reach(error: BaseException) -> bool:
    """Whether an error says that Redis could not be reached or is loading its data (raised
    by redis-py, or by the store, which translates it, `store.errors.StoreUnavailable`)."""
    return isinstance(error, (RedisOutOfReach, *_GONE)) or isinstance(error.__cause__, _GONE)


@dataclass
class Chain:
    """The notices of one game in a batch, in their order."""

    feed: str
    game: str
    entries: list[Entry] = field(default_factory=list)
    held_from: int = 0
    """The first of `entries` that a notice of the game not in the batch, waiting to be
    tried again, comes before (it and the rest are held back behind it; `len(entries)`:
    none). Set by `chains_of`."""


@dataclass
class Outcome:
    """What became of a chain's notices, filled in as they are followed."""

    done: list[bytes] = field(default_factory=list)
    failed: list[bytes] = field(default_factory=list)
    held: list[bytes] = field(default_factory=list)
    """Held back behind a failed one of their game."""
    requests: list[str] = field(default_factory=list)
    away: BaseException | None = None
    """The error of the notice that found Redis out of reach (the rest of the chain untried)."""


def chains_of(
    feeds: Sequence[tuple[str, list[Entry]]], waiting: Sequence[tuple[str, bytes, str]]
) -> list[Chain]:
    """The notices of a batch by game, each game's in their order, with the first of them
    that a notice of that game not in the batch (of those `waiting` to be tried again: feed,
    id, game) comes before (a game's notices all lie in one feed)."""
    chains: dict[tuple[str, str], Chain] = {}
    for feed, entries in feeds:
        for entry_id, fields in entries:
            game = fields.get(b"g", b"").decode(errors="replace")
            chain = chains.get((feed, game))
            if chain is None:
                chain = chains[feed, game] = Chain(feed, game)
            chain.entries.append((entry_id, fields))
    for chain in chains.values():
        ours = {entry_id for entry_id, _fields in chain.entries}
        earlier = [
            order(entry_id) for feed, entry_id, game in waiting
            if game == chain.game and feed == chain.feed and entry_id not in ours
        ]  # fmt: skip
        first_waiting = min(earlier, default=None)
        chain.held_from = next(
            (n for n, (entry_id, _f) in enumerate(chain.entries)
             if first_waiting is not None and first_waiting < order(entry_id)),
            len(chain.entries),
        )  # fmt: skip
    return list(chains.values())


def follow_chain(chain: Chain, follow: Follow, away: threading.Event) -> Outcome:
    """Follow one game's notices of a batch in turn: once one fails, the rest are held back
    behind it; once any notice of the batch found Redis out of reach (`away`), no other is
    started."""
    outcome = Outcome()
    for number, (entry_id, fields) in enumerate(chain.entries):
        if outcome.failed or number >= chain.held_from:  # a failed one of its game first
            outcome.held.append(entry_id)
            continue
        if away.is_set():
            return outcome
        try:
            notice = outbox_entry(entry_id, fields)
            request_id = notice.meta.request_id if notice.meta is not None else ""
            outcome.requests.append(request_id)
            token = tracing.current.set(request_id)
            try:
                with structlog.contextvars.bound_contextvars(request_id=request_id):
                    follow(notice)
            finally:
                tracing.current.reset(token)
        except Exception as error:
            if out_of_reach(error):  # not the notice's failure: Redis is away
                away.set()
                outcome.away = error
                return outcome
            log.exception("a follow-up failed; its notice stays pending",
                          game_id=chain.game, entry_id=text(entry_id))  # fmt: skip
            outcome.failed.append(entry_id)
            continue
        outcome.done.append(entry_id)
    return outcome


def order(entry_id: bytes) -> tuple[int, int]:
    """A stream entry id as the pair it stands for (its time and sequence)."""
    ms, _dash, sequence = entry_id.partition(b"-")
    return int(ms), int(sequence or 0)


def text(value: object) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)

"""Looking up a webhook host's name on a thread of its own, at most `LOOKUP_THREADS` at once.

Why: the system's resolver (`getaddrinfo`) cannot be cancelled, and a name server that never
answers keeps it trying for 10 to 30 s (its time-out, times its attempts, times the name
servers). A player who names such a host must not hold a worker's job or an API request that
long, nor make lookups pile up. So each lookup runs on a daemon thread of its own and its
caller waits only as long as it chooses (`Future.result(timeout)`, or the event loop without
a thread: `asyncio.wrap_future`). A lookup given up on still holds its thread until the
resolver gives up, so at most `LOOKUP_THREADS` run in a process: beyond them a lookup fails at
once (`Busy`) instead of waiting behind names that never answer, and as daemon threads they
never hold up the process's exit.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import Future

LOOKUP_THREADS = 16
"""Lookups of one process under way at once."""


class Busy(Exception):
    """Every lookup thread of the process is taken (by names whose servers do not answer)."""


_made = threading.Lock()
_slots: dict[int, threading.BoundedSemaphore] = {}


def _slots_of_this_process() -> threading.BoundedSemaphore:
    # Per process id: a process forked from another must not count the other's threads.
    with _made:
        return _slots.setdefault(os.getpid(), threading.BoundedSemaphore(LOOKUP_THREADS))


def lookup(resolve: Callable[[str, int], list[str]], host: str, port: int) -> Future[list[str]]:
    """`resolve(host, port)` started on a thread of its own: its answers, or its exception, in
    the future. Raises Busy when `LOOKUP_THREADS` lookups are under way."""
    slots = _slots_of_this_process()
    if not slots.acquire(blocking=False):
        raise Busy
    future: Future[list[str]] = Future()
    future.set_running_or_notify_cancel()  # not cancelled from now on: its result always lands

    def run() -> None:
        try:
            future.set_result(resolve(host, port))
        except BaseException as error:  # handed to the waiter, if one still waits
            future.set_exception(error)
        finally:
            slots.release()

    try:
        threading.Thread(target=run, name="webhook-lookup", daemon=True).start()
    except RuntimeError:  # no thread could be started
        slots.release()
        raise Busy from None
    return future

"""Where a server process's log lines go: its standard output, in batches of whole lines.

Why: every append is logged (its request id, the first line of its trail), and writing each
line on its own cost a command more CPU than its rules (measured: 40 to 90 us a command when
the output is a pipe, as under honcho, systemd or a container engine, where each write also
wakes the reader). Lines are gathered and written together, at the latest `DELAY` seconds
after the first of a batch, so a line is late by at most that much, and a process killed
outright loses at most that much of its log.

Each write is of whole lines and at most `PIPE_BUF` bytes (a longer line alone): a write that
large is atomic on a pipe, so the lines of the several processes that share one output (the
API processes of `patrician serve --workers N`) never interleave within a line.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import select
import threading
import time
from collections.abc import Callable

DELAY = 0.05
"""The longest a line waits to be written (seconds)."""


def standard_output(data: bytes) -> None:
    """Write to this process's standard output, the file descriptor: a batch goes out on a
    thread of its own at any time, when `sys.stdout` may be another's for a moment (a command
    line run inside the process, as its tests do, swaps it for its own capture)."""
    view = memoryview(data)
    while view:
        view = view[os.write(1, view) :]


class BatchedLines:
    """A binary file for structlog's `BytesLogger`: `write` gathers the lines, `flush` (which
    the logger calls after each line) leaves them gathered, a thread of its own hands them to
    `out` in batches (module docstring); `drain` hands them over now."""

    def __init__(
        self, out: Callable[[bytes], None] = standard_output, delay: float = DELAY
    ) -> None:
        self._out = out
        self._delay = delay
        self._pending: list[bytes] = []
        self._lock = threading.Lock()  # the gathered lines
        self._writing = threading.Lock()  # one batch out at a time, in order
        self._waiting = threading.Event()
        self._writer: threading.Thread | None = None
        atexit.register(self._drain_quietly)

    def write(self, data: bytes) -> None:
        with self._lock:
            first = not self._pending
            self._pending.append(data)
            if self._writer is None:
                self._writer = threading.Thread(target=self._run, name="log-output", daemon=True)
                self._writer.start()
        if first:  # the writer wakes once a batch
            self._waiting.set()

    def flush(self) -> None:
        """Called after each line: the batch goes out by time (`drain` sends it now)."""

    def drain(self) -> None:
        """Write every line gathered so far."""
        with self._writing:
            with self._lock:
                pending, self._pending = self._pending, []
            chunk: list[bytes] = []
            size = 0
            for line in pending:
                if chunk and size + len(line) > select.PIPE_BUF:
                    self._out(b"".join(chunk))
                    chunk, size = [], 0
                chunk.append(line)
                size += len(line)
            if chunk:
                self._out(b"".join(chunk))

    def _drain_quietly(self) -> None:
        # an output that is gone (a closed pipe) leaves the lines nowhere to be told
        with contextlib.suppress(OSError, ValueError):
            self.drain()

    def _run(self) -> None:
        while True:
            self._waiting.wait()
            self._waiting.clear()
            time.sleep(self._delay)  # gather what comes meanwhile
            self._drain_quietly()

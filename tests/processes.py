"""What the tests that start child processes share: free loopback ports and a stop that
cannot hang (the Redis servers of the store tests, the live `patrician serve` of the server
tests)."""

from __future__ import annotations

import socket
import subprocess
from types import TracebackType
from typing import Self


def free_port(*, bus: bool = False) -> int:
    """A free loopback port; with `bus`, one whose cluster bus port (+10000) is free too."""
    for _ in range(100):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port: int = probe.getsockname()[1]
        if not bus:
            return port
        if port + 10000 <= 65535:
            with socket.socket() as probe:
                try:
                    probe.bind(("127.0.0.1", port + 10000))
                except OSError:
                    continue
            return port
    raise RuntimeError("no free loopback port")


def stop_process(process: subprocess.Popen[bytes] | None) -> None:
    """SIGTERM, then SIGKILL if it has not ended within 10 s."""
    if process is None or process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=10)


class Started:
    """A child process as a context manager: started on entry, stopped on exit."""

    def start(self) -> None:
        raise NotImplementedError

    def stop(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.stop()

"""`make run` as a person meets it: `patrician serve` on its embedded store says in one plain
line where to open the game (its links lead there too), says nothing as a warning of the
mode it was asked for, and stops within 2 s of Ctrl+C, live streams of its pages open or not
(each is told its follower left, rather than waited for)."""

from __future__ import annotations

import signal
import time
from pathlib import Path

from tests.server.live import LiveServer, a_game_followed, unique_prefix

PROMPTLY = 2.0


def test_the_embedded_server_says_where_to_open_it_and_stops_at_ctrl_c_with_streams_open(
    tmp_path: Path,
) -> None:
    unset = {"PATRICIAN_PUBLIC_URL": ""}  # as `make run` is started, whatever a test set
    server = LiveServer(unique_prefix("run"), tmp_path, redis_url=None, env=unset)
    server.start()
    try:
        with a_game_followed(server.url):
            process = server.process
            assert process is not None
            started = time.monotonic()
            process.send_signal(signal.SIGINT)  # Ctrl+C
            process.wait(timeout=10)
            took = time.monotonic() - started
        assert took < PROMPTLY, f"stopped {took:.1f} s after Ctrl+C"
        assert process.returncode == 0
    finally:
        server.stop()
    log = server.log()
    plain = [line for line in log.splitlines() if line.startswith("Patrician is ready")]
    assert plain == [
        f"Patrician is ready: open {server.url} in your browser (Ctrl+C stops it; its games "
        "live as long as it runs)."
    ], log
    assert '"level":"warning"' not in log and '"level":"error"' not in log, log

"""The benchmark of the app without HTTP (bench/inprocess.py) works: its clients play real
games through the app's own ASGI handler, every request is answered 2xx, and it prints the CPU
each request cost the app, Redis and the clients. The figures themselves are the benchmark's
to measure."""

from __future__ import annotations

import shutil

import pytest

from bench.inprocess import main

pytestmark = [
    pytest.mark.redis,
    pytest.mark.skipif(shutil.which("redis-server") is None, reason="needs redis-server"),
]


def test_commands_played_in_process_are_all_answered_and_their_cost_is_printed(
    capfd: pytest.CaptureFixture[str],
) -> None:
    status = main(["--seconds", "0.5", "--rounds", "1", "--clients", "2"])
    printed = capfd.readouterr().out
    assert status == 0, printed
    assert "FAILED" not in printed
    lines = {line.split("  ")[0]: line.split() for line in printed.splitlines()}
    for name in ("commands (command lane)", "bare XADD POST (baseline app)"):
        rate, app_us, redis_us, client_us = lines[name][-4:]
        assert float(rate.replace(",", "")) > 0
        assert int(app_us) > 0 and int(redis_us) > 0 and int(client_us) >= 0
    assert "a command with a free transport" in printed
    assert '"event":"appended"' not in printed  # the app's log lines go to the drained pipe

"""The load benchmark (bench/load.py) works: a handful of games against the whole stack of
deploy/Procfile, with an API process killed while they are played (its supervisor starts
another), all finish, audit and were notified, with no error. The full load, and the drills
that kill a job worker, a follower and Redis, are the benchmark's to run."""

from __future__ import annotations

import shutil

import pytest

from bench.load import main

pytestmark = [
    pytest.mark.redis,
    pytest.mark.skipif(shutil.which("redis-server") is None, reason="needs redis-server"),
]


def test_a_few_games_survive_a_killed_api_process_and_every_check_holds(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status = main(
        ["--games", "3", "--max-seats", "3", "--seconds", "90", "--drills", "api", "--seed", "3"]
    )
    printed = capsys.readouterr().out
    assert status == 0, printed
    assert "drill api: SIGKILL of API process" in printed
    assert "errors: 0" in printed
    assert "3 games, 3 finished" in printed
    assert "all checks hold" in printed

"""`patrician worker`'s options are checked before it reaches for Redis: a bad value is
refused with the option's name and its range, and nothing starts."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from server.cli.main import main


@pytest.mark.parametrize("threads", ["0", "65", "many", "-1"])
def test_a_follower_thread_count_out_of_range_is_refused_naming_the_option(threads: str) -> None:
    outcome = CliRunner().invoke(
        main, ["worker", "--redis-url", "redis://127.0.0.1:1/0", "--follow-threads", threads]
    )
    assert outcome.exit_code == 2, outcome.output
    assert "--follow-threads" in outcome.output
    assert "Traceback" not in outcome.output


def test_the_follower_thread_count_is_read_from_the_environment_and_checked_too() -> None:
    outcome = CliRunner().invoke(
        main,
        ["worker", "--redis-url", "redis://127.0.0.1:1/0"],
        env={"PATRICIAN_FOLLOW_THREADS": "0"},
    )
    assert outcome.exit_code == 2, outcome.output
    assert "--follow-threads" in outcome.output and "1<=x<=64" in outcome.output

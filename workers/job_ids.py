"""The ids of the jobs the workers enqueue: one id per thing to do, so that the same thing
asked twice (a follow-up run again after a crash, a timer fired by two processes) is one job
(RQ keeps one job per id) and its log lines name the game and the version."""

from __future__ import annotations


def job_id(game_id: str, version: int, channel: str = "moved") -> str:
    """`<channel>-<version>-<game>`, in the letters RQ allows in an id (a game id's `.` and
    `_` written `_d` and `__`, so that no two games share one)."""
    game = game_id.replace("_", "__").replace(".", "_d")
    return f"{channel}-{version}-{game}"

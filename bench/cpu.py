"""The CPU time of processes, read from /proc (utime + stime): what the benchmarks that run
whole servers (bench/http.py, bench/load.py) print beside their rates, since on a shared
machine the rate alone says little of the cost."""

from __future__ import annotations

import os
from pathlib import Path

TICK = os.sysconf("SC_CLK_TCK")


def process_tree(root: int) -> list[int]:
    """`root` and its descendants (a server's supervisor and its workers)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            children.setdefault(int(stat.rsplit(")", 1)[1].split()[1]), []).append(int(entry))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, []))
    return found


def cpu_seconds(pids: list[int]) -> float:
    """utime + stime of these processes, in seconds (0 for one gone)."""
    ticks = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        ticks += int(fields[11]) + int(fields[12])
    return ticks / TICK


def load_average() -> str:
    """The 1- and 5-minute load averages, as /proc/loadavg gives them."""
    return Path("/proc/loadavg").read_text().split(" ", 1)[1].rsplit(" ", 2)[0].strip()

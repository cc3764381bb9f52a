"""The CPU time of processes, read from /proc (utime + stime): what the benchmarks that run
whole servers (bench/http.py, bench/load.py) print beside their rates, since on a shared
machine the rate alone says little of the cost."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bench.loadstack import Stack

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


class CpuByLine:
    """The CPU each line of the stack and the clients used from the games' start (from
    /proc: a process killed by a drill takes its share with it, so with drills the figures
    are a little low)."""

    def __init__(self, stack: Stack, clients: list[int]) -> None:
        self.stack, self.clients = stack, clients
        self.at_start = self.now()

    def now(self) -> dict[str, tuple[int, float]]:
        """Each line's (pid, CPU seconds of its process tree), and the clients' (pid 0)."""
        spent = {
            name: (line.popen.pid, cpu_seconds(process_tree(line.popen.pid)))
            for name, line in self.stack.lines.items()
            if line.popen is not None
        }
        return spent | {"clients": (0, cpu_seconds(self.clients))}

    def line(self, commands: int) -> str:
        """The CPU seconds by line, and in all per acknowledged command."""
        spent = self.spent()
        total = sum(spent.values())
        return (
            "CPU seconds since the games were set up: "
            + ", ".join(f"{name} {seconds:,.0f}" for name, seconds in spent.items())
            + f"; {total * 1000 / max(commands, 1):.1f} ms per command in all "
            f"({(total - spent['clients']) * 1000 / max(commands, 1):.1f} ms without the clients)"
        )

    def per_command(self, commands: int) -> dict[str, float]:
        """The CPU milliseconds per acknowledged command of each kind of line (follower-1 and
        follower-2 are followers), the clients apart, and of the whole stack without them."""
        kinds: dict[str, float] = {}
        for name, seconds in self.spent().items():
            kind = name.rsplit("-", 1)[0] if name[-1:].isdigit() else name
            kinds[kind] = kinds.get(kind, 0.0) + seconds * 1000 / max(commands, 1)
        kinds["stack"] = sum(ms for kind, ms in kinds.items() if kind != "clients")
        return kinds

    def spent(self) -> dict[str, float]:
        """The CPU seconds of each line (and the clients) since the start."""
        now = self.now()
        return {  # a line started again by a drill counts from its new start
            name: seconds - (before if before_pid == pid else 0.0)
            for name, (pid, seconds) in now.items()
            for before_pid, before in [self.at_start.get(name, (-1, 0.0))]
        }

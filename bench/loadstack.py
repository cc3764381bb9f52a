"""The stack the load benchmark (bench/load.py) plays against: the lines of deploy/Procfile,
the very commands `make up` runs, started here one by one (as the Procfile says a drill may)
so that a crash drill can SIGKILL one process by its pid.

The settings are deploy/stack.env's, read with honcho's parser as `make up` reads them, with
the ports, folders, key file and key prefix of this run put over them (a free loopback port
for Redis and for the API, a temporary folder), and `PATRICIAN_WEBHOOK_ALLOW=127.0.0.1` for
the benchmark's own webhook receiver (and no budget of notification settings per address:
every player of the benchmark comes from one). A module of its own: starting, killing and
restarting the processes is apart from the clients and the figures.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import redis
from honcho.environ import parse, parse_procfile  # type: ignore[import-untyped]

from tests.processes import free_port, stop_process

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
PROCFILE = ROOT / "deploy/Procfile"
ENV_FILE = ROOT / "deploy/stack.env"


@dataclass
class Line:
    """One line of the Procfile and the process that runs it."""

    name: str
    command: str
    popen: subprocess.Popen[bytes] | None = None


@dataclass
class Stack:
    """The Procfile's processes in `directory` (their data, key and logs there too)."""

    directory: Path
    prefix: str
    redis_port: int = field(default_factory=free_port)
    api_port: int = field(default_factory=free_port)
    lines: dict[str, Line] = field(default_factory=dict)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.api_port}"

    def settings(self) -> dict[str, str]:
        settings: dict[str, str] = parse(ENV_FILE.read_text())
        for name, value in settings.items():  # the stack's own folders, under this run's
            if value == "var" or value.startswith("var/"):
                settings[name] = str(self.directory / value.removeprefix("var").lstrip("/"))
        settings |= {
            "PATRICIAN_REDIS_PORT": str(self.redis_port),
            "PATRICIAN_REDIS_DIR": str(self.directory / "redis"),
            "REDIS_URL": f"redis://127.0.0.1:{self.redis_port}/0",
            "PATRICIAN_API_HOST": "127.0.0.1",
            "PATRICIAN_API_PORT": str(self.api_port),
            "PATRICIAN_PUBLIC_URL": self.base,
            "PATRICIAN_SIGNING_KEY_FILE": str(self.directory / "signing-key.pem"),
            "PATRICIAN_PREFIX": self.prefix,
            "PATRICIAN_STATE_DIR": str(self.directory),
            "PATRICIAN_WEBHOOK_ALLOW": "127.0.0.1",
            # every client of the benchmark is one address, each of its thousands of players
            # setting its webhook: the per-address budget is for the open internet
            "PATRICIAN_RATE_NOTIFICATIONS": "0",
            # no finished game analysed: this measures the commands' pipeline, and the
            # analysis (about half a minute of one core a game, bench/analysis.py) would
            # fill every idle moment of the job worker whose CPU it counts
            "PATRICIAN_ANALYSIS_ITERATIONS": "0",
        }
        return settings

    @property
    def api_processes(self) -> int:
        return int(self.settings().get("PATRICIAN_API_PROCESSES", "1"))

    def start(self) -> None:
        for name, value in self.settings().items():  # as `make up` makes them
            if name.endswith("_DIR"):
                Path(value).mkdir(parents=True, exist_ok=True)
        for command, key in (("keygen", "signing-key.pem"), ("push-keygen", "push-key.pem")):
            made = str(self.directory / key)  # the paths of its settings (the stack's folder)
            subprocess.run([str(BIN / "patrician"), command, made], check=True, capture_output=True)
        for name, command in parse_procfile(PROCFILE.read_text()).processes.items():
            self.lines[name] = Line(name, command)
            self.launch(name)

    def launch(self, name: str) -> None:
        """Start a line as `make up` would: by /bin/sh from the checkout's root, .venv/bin on
        PATH (`exec`: the line's pid is the program's own)."""
        line = self.lines[name]
        env = {**os.environ, **self.settings()}
        env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
        with (self.directory / f"{name}.log").open("ab") as log:
            line.popen = subprocess.Popen(
                ["/bin/sh", "-c", f"exec {line.command}"],
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                cwd=ROOT,
            )
        self.wait_up(name)

    def wait_up(self, name: str, timeout: float = 60.0) -> None:
        line = self.lines[name]
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert line.popen is not None
            if line.popen.poll() is not None:
                raise RuntimeError(f"{name} exited:\n{self.log(name)}")
            if self._is_up(line):
                return
            time.sleep(0.05)
        raise RuntimeError(f"{name} did not come up in {timeout:.0f} s:\n{self.log(name)}")

    def _is_up(self, line: Line) -> bool:
        if "redis-server" in line.command:
            client = self.client(timeout=1.0)
            try:
                return bool(client.ping())
            except redis.exceptions.ConnectionError:  # BusyLoadingError too: the AOF loads
                return False
            finally:
                client.close()
        if "patrician serve" in line.command:
            assert line.popen is not None
            if len(self.children(line.popen.pid)) < self.api_processes:
                return False
            try:
                answer = httpx.get(self.base + "/healthz", timeout=1.0)
            except httpx.HTTPError:
                return False
            return answer.status_code == 200 and answer.json().get("redis") == "ok"
        time.sleep(1.0)  # a worker has no port: up if it still runs a second later
        return True

    def names(self, word: str) -> list[str]:
        """The lines whose command holds `word` (`redis-server`, `patrician serve`...)."""
        return [name for name, line in self.lines.items() if word in line.command]

    @staticmethod
    def children(pid: int) -> list[int]:
        """The API processes the line's supervisor forked (multiprocessing's spawned ones)."""
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                stat = (entry / "stat").read_text()
                cmdline = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            parent = int(stat.rsplit(")", 1)[1].split()[1])
            if parent == pid and b"spawn_main" in cmdline:
                found.append(int(entry.name))
        return found

    def kill(self, name: str) -> None:
        """SIGKILL a line's process, as a crash: no shutdown, no final fsync."""
        popen = self.lines[name].popen
        assert popen is not None
        popen.send_signal(signal.SIGKILL)
        popen.wait(timeout=10)

    def kill_api_process(self, name: str) -> int:
        """SIGKILL one API process of the line (its supervisor starts another); its pid."""
        popen = self.lines[name].popen
        assert popen is not None
        victim = self.children(popen.pid)[0]
        os.kill(victim, signal.SIGKILL)
        deadline = time.monotonic() + 60
        while victim in self.children(popen.pid) or not self._is_up(self.lines[name]):
            if time.monotonic() > deadline:
                raise RuntimeError(f"no API process replaced {victim}:\n{self.log(name)}")
            time.sleep(0.05)
        return victim

    def exited(self) -> list[str]:
        """The lines that ended though nobody killed them (a drill starts its own again)."""
        return [
            line.name
            for line in self.lines.values()
            if line.popen is not None and line.popen.poll() is not None
        ]

    def stop(self) -> None:
        for line in reversed(list(self.lines.values())):
            stop_process(line.popen)

    def client(self, timeout: float = 10.0) -> redis.Redis:
        return redis.Redis(port=self.redis_port, socket_timeout=timeout)

    def log(self, name: str) -> str:
        """The end of a line's log."""
        return (self.directory / f"{name}.log").read_text(errors="replace")[-3000:]

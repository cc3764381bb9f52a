"""`make up` and `make down`: the whole stack of deploy/Procfile on this machine, under honcho.

`up` makes what the stack needs and does not ship (the Redis data folder, the signing key on
first start, an empty folder for the counts of /metrics), starts honcho in the background
(its pid and the stack's log in $PATRICIAN_STATE_DIR), waits until every API process is up
and ready, and says where to connect; a stack that does not come up within the bound is
stopped again and its last log lines printed (exit 1). `down` stops honcho (which stops its
lines) and makes sure no process of the stack is left. The settings are those of the env file
(deploy/stack.env or STACK_ENV), read with honcho's own parser so that both read the same
values.

Run from the checkout's root: `python deploy/stack.py up|down [--env FILE]`.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit

from honcho.environ import parse  # type: ignore[import-untyped]

BIN = Path(sys.executable).parent
PROCFILE = Path("deploy/Procfile")
STARTED = re.compile(r"^\S+ system +\| (\S+) started \(pid=(\d+)\)$", re.MULTILINE)
"""honcho's line for each process it starts (`12:00:00 system | api.1 started (pid=123)`)."""
API_UP = "signing with the key of the key file"
"""What each API process logs once its startup is done (server/app.py), just before it
accepts connections: counted to know that all of them are up, since they share one port."""
UP_SECONDS = float(os.environ.get("PATRICIAN_UP_SECONDS", "60"))
DOWN_SECONDS = 20.0


class StackError(Exception):
    """Something that stops `up` or `down`, said in one line."""


class Stack:
    """The stack of one env file: its settings, its pid file and its log."""

    def __init__(self, env_file: Path) -> None:
        if not env_file.is_file():
            raise StackError(f"{env_file}: no such env file")
        self.env_file = env_file
        self.settings: dict[str, str] = parse(env_file.read_text())
        state = Path(self.setting("PATRICIAN_STATE_DIR"))
        self.pid_file = state / "stack.pid"
        self.log = state / "stack.log"
        self.url = (
            f"http://{self.setting('PATRICIAN_API_HOST')}:{self.setting('PATRICIAN_API_PORT')}"
        )

    def setting(self, name: str) -> str:
        value = self.settings.get(name)
        if not value:
            raise StackError(f"{self.env_file} does not set {name}")
        return value

    def running(self) -> int | None:
        """The pid of this stack's honcho, if it runs."""
        try:
            pid = int(self.pid_file.read_text())
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except (OSError, ValueError):
            return None
        return pid if b"honcho" in cmdline else None  # a pid reused by another program

    def up(self) -> None:
        pid = self.running()
        if pid is not None:
            print(f"the stack of {self.env_file} is already up (honcho pid {pid}): {self.url}")
            print("stop it first with: make down")
            return
        self._check_settings()
        Path(self.setting("PATRICIAN_REDIS_DIR")).mkdir(parents=True, exist_ok=True)
        self._empty_metrics()
        self._make_key()
        self.log.parent.mkdir(parents=True, exist_ok=True)
        command = [str(BIN / "honcho"), "-f", str(PROCFILE), "-e", str(self.env_file)]
        command += ["start", "--no-colour"]
        env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
        with self.log.open("wb") as log:
            process = subprocess.Popen(
                command, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                env=env, start_new_session=True,  # outlives `make`; `down` stops it
            )  # fmt: skip
        self.pid_file.write_text(f"{process.pid}\n")
        try:
            self._wait_up(process)
        except StackError:
            self._stop(process.pid)
            print(f"--- the last lines of {self.log}:", file=sys.stderr)
            print(
                "\n".join(self.log.read_text(errors="replace").splitlines()[-40:]), file=sys.stderr
            )
            raise
        print(f"the stack is up: {self.url}  (API: {self.url}/api, OpenAPI: {self.url}/schema)")
        print(
            f"  Redis: {self.setting('REDIS_URL')} (data in {self.setting('PATRICIAN_REDIS_DIR')})"
        )
        print(f"  log: {self.log}   honcho pid: {process.pid}   stop it with: make down")

    def down(self) -> None:
        pid = self.running()
        if pid is None:
            print(f"the stack of {self.env_file} is not running")
            if self.pid_file.exists():  # its honcho was killed outright: its lines may be left
                self._reap()
                self.pid_file.unlink()
            return
        self._stop(pid)
        print("the stack is down")

    def _check_settings(self) -> None:
        port = self.setting("PATRICIAN_REDIS_PORT")
        url = urlsplit(self.setting("REDIS_URL"))
        if str(url.port or 6379) != port:
            raise StackError(
                f"REDIS_URL names port {url.port or 6379}, not PATRICIAN_REDIS_PORT {port}"
            )
        for name in ("PATRICIAN_REDIS_PORT", "PATRICIAN_API_PORT"):
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", int(self.setting(name)))) == 0:
                    raise StackError(f"port {self.setting(name)} ({name}) is taken already")

    def _empty_metrics(self) -> None:
        """The counts' folder, emptied: the files of the processes of a stack gone would be
        added to the new ones' (docs/api.md, "Metrics")."""
        folder = Path(self.setting("PROMETHEUS_MULTIPROC_DIR"))
        folder.mkdir(parents=True, exist_ok=True)
        for counts in folder.glob("*.db"):
            counts.unlink()

    def _make_key(self) -> None:
        """The keys every process shares, made once: the signing key and the Web Push key."""
        for setting, command in (
            ("PATRICIAN_SIGNING_KEY_FILE", "keygen"),
            ("PATRICIAN_PUSH_KEY_FILE", "push-keygen"),
        ):
            key = Path(self.setting(setting))
            if key.exists():
                continue
            key.parent.mkdir(parents=True, exist_ok=True)
            subprocess.run([str(BIN / "patrician"), command, str(key)], check=True)

    def _wait_up(self, process: subprocess.Popen[bytes]) -> None:
        wanted = int(self.setting("PATRICIAN_API_PROCESSES"))
        deadline = time.monotonic() + UP_SECONDS
        state = "no API process started"
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise StackError(f"honcho stopped (exit {process.returncode}): a line ended")
            started = self.log.read_text(errors="replace").count(API_UP)
            if started >= wanted:
                state = self._readiness()
                if not state:
                    return
            elif started:
                state = f"{started} of {wanted} API processes started"
            time.sleep(0.2)
        raise StackError(f"the stack did not come up within {UP_SECONDS:.0f} s: {state}")

    def _readiness(self) -> str:
        """What keeps the API from being ready ("" once ready): /readyz (the store, its
        scripts and a worker seen), or /healthz (the store) on a server without it."""
        for path in ("/readyz", "/healthz"):
            try:
                with urllib.request.urlopen(self.url + path, timeout=2) as answer:
                    body = json.loads(answer.read())
                if path == "/readyz" or body.get("redis") == "ok":
                    return ""
                return f"{path} answered {body}"
            except urllib.error.HTTPError as error:
                if error.code != 404:
                    return f"{path} answered {error.code} {error.read()[:300]!r}"
            except (OSError, ValueError) as error:
                return f"{path}: {error}"
        return "no /healthz"

    def _stop(self, pid: int) -> None:
        """SIGTERM to honcho (it stops its lines, SIGKILLing those that linger 5 s), then
        whatever is left of the lines' process groups is killed."""
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + DOWN_SECONDS
        while time.monotonic() < deadline and _alive(pid):
            time.sleep(0.1)
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)
        self._reap()
        self.pid_file.unlink(missing_ok=True)

    def _reap(self) -> None:
        """Kill the process group of every line honcho started (each has one of its own,
        led by the line's pid) that still has a live member."""
        try:
            text = self.log.read_text(errors="replace")
        except OSError:
            return
        for name, pid in STARTED.findall(text):
            if members(int(pid)):
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(int(pid), signal.SIGKILL)
                print(f"killed what was left of {name} (process group {pid})")


def members(group: int) -> list[int]:
    """The live processes of a process group (a zombie is dead: it only waits for its
    parent, here the machine's init, to collect it)."""
    found = []
    for path in Path("/proc").iterdir():
        if path.name.isdigit():
            state = _state(int(path.name))
            if state is not None and state[0] != "Z" and state[1] == group:
                found.append(int(path.name))
    return found


def _state(pid: int) -> tuple[str, int] | None:
    """A process's state letter and process group, from /proc (None: no such process)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return None
    return fields[0], int(fields[2])


def _alive(pid: int) -> bool:
    try:
        finished, _ = os.waitpid(pid, os.WNOHANG)  # our child when `up` stops it
    except ChildProcessError:
        state = _state(pid)
        return state is not None and state[0] != "Z"
    return finished == 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("action", choices=["up", "down"])
    parser.add_argument("--env", type=Path, default=Path("deploy/stack.env"))
    arguments = parser.parse_args()
    try:
        stack = Stack(arguments.env)
        stack.up() if arguments.action == "up" else stack.down()
    except (StackError, subprocess.CalledProcessError) as error:
        print(f"make {arguments.action}: {error}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()

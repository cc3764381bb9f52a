"""A whole stack of deploy/Procfile started by `make up` for a test, in a temporary copy of the
settings: free loopback ports, its Redis data, key, pid file and log in the test's folder.
`make down` stops it; `leftovers` names any process of it still alive."""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
from pathlib import Path
from types import ModuleType

from tests.processes import free_port

ROOT = Path(__file__).resolve().parents[2]


def _script() -> ModuleType:
    """deploy/stack.py (a script, not a package): its reading of honcho's log and of /proc."""
    spec = importlib.util.spec_from_file_location("stack_script", ROOT / "deploy" / "stack.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SCRIPT = _script()


class Stack:
    """The settings of deploy/stack.env, but for the values a test stack needs its own."""

    def __init__(self, directory: Path, prefix: str) -> None:
        self.directory = directory
        self.redis_port = free_port()
        self.api_port = free_port()
        self.data = directory / "redis"
        self.key_file = directory / "signing-key.pem"
        self.log = directory / "stack.log"
        self.prefix = prefix
        own = {
            "PATRICIAN_REDIS_PORT": str(self.redis_port),
            "PATRICIAN_REDIS_DIR": str(self.data),
            "REDIS_URL": f"redis://127.0.0.1:{self.redis_port}/0",
            "PATRICIAN_API_PORT": str(self.api_port),
            "PATRICIAN_PUBLIC_URL": self.url,
            "PATRICIAN_SIGNING_KEY_FILE": str(self.key_file),
            "PATRICIAN_PUSH_KEY_FILE": str(directory / "push-key.pem"),
            "PATRICIAN_PREFIX": prefix,
            "PATRICIAN_STATE_DIR": str(directory),
            "PROMETHEUS_MULTIPROC_DIR": str(directory / "metrics"),
        }
        lines = []
        for line in (ROOT / "deploy" / "stack.env").read_text().splitlines():
            name = line.partition("=")[0]
            lines.append(f"{name}={own.pop(name)}" if name in own else line)
        assert not own, f"deploy/stack.env no longer sets {sorted(own)}"
        self.env_file = directory / "stack.env"
        self.env_file.write_text("\n".join(lines) + "\n")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.api_port}"

    def make(self, target: str, timeout: float = 90) -> subprocess.CompletedProcess[str]:
        """`make up` or `make down` as a person runs it (the virtualenv taken as installed)."""
        env = {key: value for key, value in os.environ.items() if not key.startswith("MAKE")}
        return subprocess.run(
            ["make", "--no-print-directory", "-o", ".venv/bin/.installed", target,
             f"STACK_ENV={self.env_file}"],
            cwd=ROOT, capture_output=True, text=True, timeout=timeout, env=env, check=False,
        )  # fmt: skip

    def started(self) -> dict[str, int]:
        """The processes honcho started, by line: each leads a process group of its own."""
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        return {name: int(pid) for name, pid in SCRIPT.STARTED.findall(text)}

    def leftovers(self) -> list[str]:
        """The lines of which a process is still alive, and the ports still listening."""
        left = []
        for name, group in self.started().items():
            if SCRIPT.members(group):
                left.append(name)
        for port in (self.redis_port, self.api_port):
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    left.append(f"port {port}")
        return left

    def stop(self) -> None:
        """`make down`, whatever the test left (a failing test too)."""
        if self.started():
            self.make("down")

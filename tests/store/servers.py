"""Private `redis-server` processes for the tests that must kill, restart or cluster one.

Each binds 127.0.0.1 only, on a free port, in its own temporary directory, and is always
stopped by the test that started it (the classes are context managers).
"""

from __future__ import annotations

import shutil
import signal
import subprocess
import time
from pathlib import Path
from types import TracebackType

import redis

from tests.processes import Started, free_port, stop_process

REDIS_SERVER = shutil.which("redis-server")
REDIS_CLI = shutil.which("redis-cli")


class RedisServer(Started):
    """One redis-server on 127.0.0.1 in `directory`, restartable on the same port and data."""

    def __init__(self, directory: Path, *args: str, port: int | None = None) -> None:
        if REDIS_SERVER is None:
            raise RuntimeError("redis-server is not installed")
        self.directory = directory
        self.port = port or free_port()
        self.args = args
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, *, wait: bool = True) -> None:
        assert REDIS_SERVER is not None
        command = [REDIS_SERVER, "--bind", "127.0.0.1", "--port", str(self.port)]
        command += ["--dir", str(self.directory), "--save", "", "--protected-mode", "yes"]
        command += list(self.args)
        self.process = subprocess.Popen(
            command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=self.directory
        )
        if wait:
            self.wait_ready()

    def wait_ready(self, timeout: float = 10.0) -> None:
        client = redis.Redis(port=self.port, socket_timeout=1)
        deadline = time.monotonic() + timeout
        try:
            while True:
                assert self.process is not None
                if self.process.poll() is not None:
                    raise RuntimeError(f"redis-server exited with {self.process.returncode}")
                try:
                    if client.ping():
                        return
                except redis.exceptions.AuthenticationError:
                    return  # it answers: it asks for a password
                except redis.exceptions.BusyLoadingError:
                    pass
                except redis.exceptions.ConnectionError:
                    pass
                if time.monotonic() > deadline:
                    raise RuntimeError("redis-server did not come up")
                time.sleep(0.02)
        finally:
            client.close()

    def kill(self) -> None:
        """SIGKILL: no shutdown, no final fsync, as in a crash of the process."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=10)
        self.process = None

    def stop(self) -> None:
        stop_process(self.process)
        self.process = None


def _cluster_ok(info: object) -> bool:
    # redis-py parses CLUSTER INFO into a dict; older versions return the text.
    if isinstance(info, dict):
        return str(info.get("cluster_state")) == "ok"
    return isinstance(info, bytes | str) and "cluster_state:ok" in str(info)


class RedisClusterServers:
    """A local Redis Cluster of three masters and no replicas on loopback ports."""

    def __init__(self, directory: Path) -> None:
        self.nodes: list[RedisServer] = []
        for index in range(3):
            node_dir = directory / f"node{index}"
            node_dir.mkdir()
            port = free_port(bus=True)
            self.nodes.append(
                RedisServer(
                    node_dir,
                    "--cluster-enabled",
                    "yes",
                    "--cluster-config-file",
                    "nodes.conf",
                    "--cluster-node-timeout",
                    "2000",
                    "--appendonly",
                    "no",
                    port=port,
                )
            )

    @property
    def port(self) -> int:
        return self.nodes[0].port

    def __enter__(self) -> RedisClusterServers:
        if REDIS_CLI is None:
            raise RuntimeError("redis-cli is not installed")
        try:
            for node in self.nodes:
                node.start()
            addresses = [f"127.0.0.1:{node.port}" for node in self.nodes]
            subprocess.run(
                [
                    REDIS_CLI,
                    "--cluster",
                    "create",
                    *addresses,
                    "--cluster-replicas",
                    "0",
                    "--cluster-yes",
                ],
                check=True,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                timeout=60,
            )
            self._wait_ok()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def _wait_ok(self, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        for node in self.nodes:
            client = redis.Redis(port=node.port, socket_timeout=2)
            try:
                while not _cluster_ok(client.cluster("INFO")):
                    if time.monotonic() > deadline:
                        raise RuntimeError("the cluster did not reach state ok")
                    time.sleep(0.05)
            finally:
                client.close()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        for node in self.nodes:
            node.stop()

"""The ways of running the stack agree with deploy/Procfile, the one the tests start: the
compose file, the Containerfile and the systemd units run the same programs with the same
arguments and the same settings (deploy/stack.env), but for what a container or a unit spells
its own way, listed here with why. No container engine or systemd runs here: the files are
read as they are."""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml  # type: ignore[import-untyped]
from honcho.environ import parse, parse_procfile  # type: ignore[import-untyped]

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
SETTING = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?")

CONTAINER_VALUES = {
    "REDIS_URL": "Redis is reached by its service name, not over loopback",
    "PATRICIAN_API_HOST": "the API listens on its container's address (published on loopback)",
    "PATRICIAN_REDIS_DIR": "the data live in a volume",
    "PATRICIAN_SIGNING_KEY_FILE": "the key lives in a volume",
    "PATRICIAN_PUSH_KEY_FILE": "the key lives in a volume",
    "PROMETHEUS_MULTIPROC_DIR": "the counts of /metrics live in a volume shared by the services",
}
"""The settings whose values differ in the containers, and why."""
HOST_ONLY = {"PATRICIAN_STATE_DIR"}
"""Settings of `make up` itself (its pid file and log), which nothing in a container reads."""
CONTAINER_REDIS_ARGS = ["--bind", "0.0.0.0", "--protected-mode", "no"]
"""What the containers' Redis adds to its line: it listens on the stack's back network, where
protected mode would refuse the other services (no password), rather than on loopback."""


def _env() -> dict[str, str]:
    settings: dict[str, str] = parse((DEPLOY / "stack.env").read_text())
    return settings


def _lines() -> dict[str, str]:
    """The Procfile's lines by kind (follower-1 to follower-4 are four of the kind follower)."""
    processes: dict[str, str] = parse_procfile((DEPLOY / "Procfile").read_text()).processes
    kinds: dict[str, str] = {}
    for name, command in processes.items():
        kind = re.sub(r"-\d+$", "", name)
        assert kinds.setdefault(kind, command) == command, f"the {kind} lines differ"
    return kinds


def _count(kind: str) -> int:
    names = parse_procfile((DEPLOY / "Procfile").read_text()).processes
    return sum(1 for name in names if re.sub(r"-\d+$", "", name) == kind)


def _expand(command: str, settings: dict[str, str]) -> list[str]:
    """A line as the program gets it: its words, each setting replaced by its value."""

    def value(match: re.Match[str]) -> str:
        assert match.group(1) in settings, f"{command!r} uses {match.group(1)}, not set"
        return settings[match.group(1)]

    return [SETTING.sub(value, word) for word in shlex.split(command)]


def _compose() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    return loaded


def _instructions() -> list[tuple[str, str]]:
    """The Containerfile's instructions (continued lines joined)."""
    text = (DEPLOY / "Containerfile").read_text().replace("\\\n", " ")
    found = []
    for line in text.splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            keyword, _, rest = line.strip().partition(" ")
            found.append((keyword.upper(), rest.strip()))
    return found


def _unit(name: str) -> dict[str, list[str]]:
    """A systemd unit's settings, each key with its values in order."""
    settings: dict[str, list[str]] = {}
    for line in (DEPLOY / "systemd" / name).read_text().splitlines():
        if "=" in line and not line.startswith(("#", "[")):
            key, _, value = line.partition("=")
            settings.setdefault(key.strip(), []).append(value.strip())
    return settings


def test_the_stack_settings_name_one_redis() -> None:
    settings = _env()
    url = urlsplit(settings["REDIS_URL"])
    assert (url.hostname, str(url.port)) == ("127.0.0.1", settings["PATRICIAN_REDIS_PORT"])
    assert settings["PATRICIAN_REDIS_PORT"] != "6379", "not the machine's shared Redis"
    assert settings["PATRICIAN_PUBLIC_URL"].endswith(":" + settings["PATRICIAN_API_PORT"])
    assert set(_lines()) == {"redis", "api", "follower", "worker", "later"}
    assert (_count("follower"), settings["PATRICIAN_API_PROCESSES"]) == (4, "2")


@pytest.mark.parametrize("kind", ["redis", "api", "follower", "worker", "later"])
def test_each_compose_service_runs_its_procfile_line_with_the_stack_settings(kind: str) -> None:
    service = _compose()["services"][kind]
    environment = {name: str(value) for name, value in service["environment"].items()}
    settings = _env()
    assert set(environment) == set(settings) - HOST_ONLY
    differing = {name for name in environment if environment[name] != settings[name]}
    assert differing <= set(CONTAINER_VALUES), differing
    url = urlsplit(environment["REDIS_URL"])
    assert (url.hostname, str(url.port)) == ("redis", environment["PATRICIAN_REDIS_PORT"])

    expected = _expand(_lines()[kind], environment)
    if kind == "redis":
        conf = "./redis.conf:/usr/local/etc/redis/redis.conf:ro"
        assert conf in service["volumes"], "the same redis.conf, read-only"
        assert expected[1] == "deploy/redis.conf"
        expected[1] = "/usr/local/etc/redis/redis.conf"
        assert service["command"] == expected + CONTAINER_REDIS_ARGS
        volume = f"redis-data:{environment['PATRICIAN_REDIS_DIR']}"
        assert volume in service["volumes"], "the data in a volume"
        assert "ports" not in service, "Redis is never published"
        return
    assert service["build"] == {"context": "..", "dockerfile": "deploy/Containerfile"}
    assert ["patrician", *service["command"]] == expected
    key_folder = str(Path(environment["PATRICIAN_SIGNING_KEY_FILE"]).parent)
    assert f"keys:{key_folder}" in service["volumes"], "one key file for every process"
    counts = f"metrics:{environment['PROMETHEUS_MULTIPROC_DIR']}"
    assert counts in service["volumes"], "one folder of counts for every process"
    reset = _compose()["services"]["metrics-reset"]
    assert reset["volumes"] == [counts], "emptied before the stack starts, as by make up"
    assert service["depends_on"]["metrics-reset"] == {"condition": "service_completed_successfully"}
    assert service["restart"] == "on-failure"
    if kind in ("follower", "worker"):
        assert service.get("deploy", {}).get("replicas", 1) == _count(kind)
    if kind == "api":
        port = environment["PATRICIAN_API_PORT"]
        assert service["ports"] == [f"127.0.0.1:{port}:{port}"], "published on loopback only"


def test_the_redis_of_the_containers_is_on_a_network_without_a_way_out() -> None:
    compose = _compose()
    assert compose["networks"]["back"] == {"internal": True}
    assert compose["services"]["redis"]["networks"] == ["back"]


def test_the_image_installs_the_pinned_project_and_runs_the_api_line_as_a_plain_user() -> None:
    instructions = _instructions()
    assert instructions[0] == ("FROM", "python:3.11-slim")
    runs = [rest for keyword, rest in instructions if keyword == "RUN"]
    assert any("pip install --constraint constraints.txt ." in run for run in runs)
    users = [rest for keyword, rest in instructions if keyword == "USER"]
    assert users and users[-1] not in ("root", "0"), "not root"
    entrypoint = yaml.safe_load(dict(instructions)["ENTRYPOINT"])
    command = yaml.safe_load(dict(instructions)["CMD"])
    environment = {k: str(v) for k, v in _compose()["services"]["api"]["environment"].items()}
    assert entrypoint == ["patrician"]
    assert entrypoint + command == _expand(_lines()["api"], environment), "the api line"


UNITS = {
    "patrician-redis.service": "redis",
    "patrician-api@.service": "api",
    "patrician-worker@.service": "worker",
    "patrician-follower@.service": "follower",
    "patrician-later@.service": "later",
}


@pytest.mark.parametrize(("unit", "kind"), UNITS.items())
def test_each_systemd_unit_runs_its_procfile_line_with_the_stack_settings(
    unit: str, kind: str
) -> None:
    settings = _unit(unit)
    assert settings["EnvironmentFile"] == ["/opt/patrician/deploy/stack.env"]
    assert settings["WorkingDirectory"] == ["/opt/patrician"], "the env file's paths hold"
    assert settings["Restart"] == ["on-failure"]
    for hardening in ("NoNewPrivileges=yes", "ProtectSystem=strict", "ProtectHome=yes"):
        key, _, value = hardening.partition("=")
        assert settings[key] == [value], hardening
    assert settings["User"] == ["patrician"]
    (exec_start,) = settings["ExecStart"]
    # An instance of the API's template is its port.
    exec_start = exec_start.replace("%i", "${PATRICIAN_API_PORT}")
    program, *arguments = _expand(exec_start, _env())
    expected = _expand(_lines()[kind], _env())
    assert Path(program).name == expected[0] and Path(program).is_absolute()
    assert arguments == expected[1:]

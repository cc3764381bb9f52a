"""`GET /readyz`: whether this server process can do its work now, for a load balancer or an
orchestrator deciding whether to send it traffic (`/healthz` says only that it lives and its
store answers).

Three checks, each named in the answer:
- `redis`: the store answers a PING within `TIMEOUT_SECONDS`;
- `scripts`: Redis holds the store's Lua scripts (SCRIPT EXISTS); any it forgot (a restart, a
  failover) are loaded now, as the store itself would on its next call, so the check fails
  only when Redis refuses them;
- `workers`: a worker was seen within `WORKER_SEEN_SECONDS` (the heartbeat each `patrician
  worker` keeps in RQ's registry of workers), or, on the embedded store, the workers of this
  process are running.

200 when all hold, a `Readiness` naming every check and what it found; else 503, the error
body of every refusal (`not_ready`), its `field` naming the first check that failed and its
message each that failed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, Literal, get_args

import msgspec
from litestar import get
from litestar.di import NamedDependency
from rq import Queue
from rq.utils import utcparse
from rq.worker import Worker
from rq.worker_registration import WORKERS_BY_QUEUE_KEY

from server.schema.errors import ErrorBody, NotReady, error_response
from store.scripts import ScriptName, sha, source

TIMEOUT_SECONDS = 2.0
"""How long each check waits for Redis before it counts as failed."""
WORKER_SEEN_SECONDS = 60.0
"""How recent a worker's heartbeat must be (an idle worker renews it every 10 s or so)."""
WORKERS_LOOKED_AT = 32
"""At most this many registered workers are looked at (one recent heartbeat is enough)."""


class ReadinessCheck(msgspec.Struct, frozen=True):
    name: Literal["redis", "scripts", "workers"]
    ok: bool
    detail: str
    """What was found, in words ("3 workers seen", "no worker seen for 60 s")."""


class Readiness(msgspec.Struct, frozen=True):
    status: Literal["ready", "not_ready"]
    checks: list[ReadinessCheck]
    """Every check, in order: redis, scripts, workers."""


class Readying:
    """The checks of one server process: its Redis client, the keys of the workers' queue,
    and, on the embedded store, whether its own workers run (None: they are other
    processes)."""

    def __init__(
        self, client: Any, queue: Queue, embedded: Callable[[], bool] | None = None
    ) -> None:
        self.client = client
        self.queue_client = queue.connection  # the queue's Redis, maybe not the store's
        self.workers_key = WORKERS_BY_QUEUE_KEY % queue.name
        self.embedded = embedded

    async def check(self) -> Readiness:
        checks = [await self._redis()]
        if checks[0].ok:
            checks.append(await self._guarded("scripts", self._scripts))
            checks.append(await self._guarded("workers", self._workers))
        else:
            checks += [
                ReadinessCheck("scripts", False, "not checked: Redis does not answer"),
                ReadinessCheck("workers", False, "not checked: Redis does not answer"),
            ]
        ready = all(check.ok for check in checks)
        return Readiness("ready" if ready else "not_ready", checks)

    async def _redis(self) -> ReadinessCheck:
        try:
            await asyncio.wait_for(self.client.ping(), TIMEOUT_SECONDS)
        except Exception as error:  # anything: a refused connection, a timeout, an auth error
            return ReadinessCheck("redis", False, f"no answer: {type(error).__name__}")
        return ReadinessCheck("redis", True, "answers")

    async def _guarded(self, name: Literal["scripts", "workers"], check: Any) -> ReadinessCheck:
        try:
            found: ReadinessCheck = await asyncio.wait_for(check(), TIMEOUT_SECONDS)
        except Exception as error:
            return ReadinessCheck(name, False, f"could not be checked: {type(error).__name__}")
        return found

    async def _scripts(self) -> ReadinessCheck:
        names: tuple[ScriptName, ...] = get_args(ScriptName)
        known = await self.client.script_exists(*(sha(name) for name in names))
        missing = [name for name, there in zip(names, known, strict=True) if not there]
        for name in missing:
            await self.client.script_load(source(name))
        if missing:
            return ReadinessCheck("scripts", True, f"loaded now: {', '.join(missing)}")
        return ReadinessCheck("scripts", True, f"all {len(names)} loaded")

    async def _workers(self) -> ReadinessCheck:
        if self.embedded is not None:
            if self.embedded():
                return ReadinessCheck("workers", True, "the workers of this process run")
            return ReadinessCheck("workers", False, "the workers of this process do not run")
        beats = await asyncio.to_thread(self._heartbeats)  # RQ's sync client: not in the loop
        now = datetime.now(UTC)  # RQ's own time, not the server's clock (a test's fake one)
        seen = sum(
            1
            for beat in beats
            if beat and (now - utcparse(_text(beat))).total_seconds() <= WORKER_SEEN_SECONDS
        )
        if seen:
            return ReadinessCheck("workers", True, f"{seen} seen within {WORKER_SEEN_SECONDS:g} s")
        return ReadinessCheck("workers", False, f"no worker seen within {WORKER_SEEN_SECONDS:g} s")

    def _heartbeats(self) -> list[Any]:
        """The last heartbeat of each worker registered on the queue (some of them)."""
        names = sorted(self.queue_client.smembers(self.workers_key))[:WORKERS_LOOKED_AT]
        with self.queue_client.pipeline(transaction=False) as pipeline:
            for name in names:  # RQ's registry holds each worker's key
                worker_key = _text(name)
                if not worker_key.startswith(Worker.redis_worker_namespace_prefix):
                    worker_key = Worker.redis_worker_namespace_prefix + worker_key
                pipeline.hget(worker_key, "last_heartbeat")
            return list(pipeline.execute())


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


Ready = NamedDependency[Readying]

NOT_READY = ErrorBody(
    503,
    "not_ready",
    "not ready: workers: no worker seen within 60 s",
    "5f1c09aa00000091",
    field="workers",
)


@get(
    "/readyz",
    tags=["health"],
    operation_id="ready",
    responses={
        503: error_response(
            503,
            NOT_READY,
            "A check failed: `field` names the first that failed (`redis`, `scripts`, "
            "`workers`), `message` each that failed and what was found",
        )
    },
)
async def readyz(readying: Ready) -> Readiness:
    """Ready to serve: Redis answers, holds the store's scripts, and a worker was seen
    recently (on the embedded store, this process's workers run). A 503 names the check
    that failed."""
    readiness = await readying.check()
    if readiness.status != "ready":
        raise NotReady([(check.name, check.detail) for check in readiness.checks if not check.ok])
    return readiness

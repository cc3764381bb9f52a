"""Request ids through the workers: the id of the request whose consequence a job is rides in
the job's RQ `meta` (`request_id`), and each job runs with it bound to its log lines and to
the store's context (`store.tracing`), so that a bot's move it appends keeps it too.

`TracedQueue` gives every job enqueued the id of the work that enqueues it (a request's in the
server, a job's in a worker); a follower, which serves many requests at once, runs each
notice's follow-up under its own (carried by the notice, `workers.follower`). `traced` runs
a job under its id, `ran` logs and counts it once done.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import structlog
from rq import Queue
from rq.job import Job

from store import tracing
from workers.metrics import JOBS

log = structlog.get_logger("patrician.workers")

META_KEY = "request_id"


class TracedQueue(Queue):
    """RQ's queue, whose jobs carry the current request id in their `meta` (unless given
    one): every way of enqueueing goes through `create_job`."""

    def create_job(self, *args: Any, **kwargs: Any) -> Job:
        if kwargs.get("meta") is None and (request_id := tracing.current.get()):
            kwargs["meta"] = {META_KEY: request_id}
        return super().create_job(*args, **kwargs)


def job_meta(request_id: str) -> dict[str, str] | None:
    """The `meta` of a job enqueued for the request `request_id` ("" none)."""
    return {META_KEY: request_id} if request_id else None


@contextlib.contextmanager
def traced(job: Job) -> Iterator[str]:
    """Run a job under the request id of its `meta` ("" none, and no binding left over from
    the job before)."""
    request_id = str((job.meta or {}).get(META_KEY) or "")
    token = tracing.current.set(request_id)
    bound = {"request_id": request_id} if request_id else {}
    with structlog.contextvars.bound_contextvars(**bound):
        try:
            yield request_id
        finally:
            tracing.current.reset(token)


def ran(job: Job, ok: bool, seconds: float) -> None:
    """A job done: its log line (under its request id, bound by `traced`) and its count."""
    function = (job.func_name or "").rpartition(".")[2]
    outcome = "ok" if ok else "failed"
    JOBS.labels(function, outcome).inc()
    log.info("job", function=function, job_id=job.id, outcome=outcome, ms=round(seconds * 1000, 2))

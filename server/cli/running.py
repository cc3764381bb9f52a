"""The `patrician` commands that run the server: `serve` (the HTTP API, with its own workers
on the embedded store) and `worker` (the workers against a Redis)."""

from __future__ import annotations

from pathlib import Path

import click

from server.cli.options import (
    archive_after,
    card_file_option,
    environment_settings,
    hand_over_urls,
    queue_url_option,
    redis_url_option,
    worker_context,
)
from server.config.card_data import load_game_data
from server.transport.serving import SERVERS, serve


@click.command(name="serve")
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8000, show_default=True, type=int)
@click.option(
    "--redis-url",
    envvar="REDIS_URL",
    default=None,
    help="Redis to keep games in (or REDIS_URL). Without it: an embedded in-process fakeredis.",
)
@click.option("--workers", default=1, show_default=True, type=click.IntRange(min=1))
@click.option(
    "--server",
    envvar="PATRICIAN_SERVER",
    default="uvicorn",
    show_default=True,
    type=click.Choice(SERVERS),
    help="The ASGI server the app runs under (or PATRICIAN_SERVER); bench/http.py compares them.",
)
@queue_url_option
@card_file_option
def serve_command(
    host: str,
    port: int,
    redis_url: str | None,
    workers: int,
    server: str,
    queue_url: str | None,
    card_file: Path | None,
) -> None:
    """Run the game server (HTTP API, OpenAPI at /schema)."""
    import os

    if redis_url is None and workers > 1:
        raise click.BadParameter(
            "several workers need a shared Redis: an embedded fakeredis lives in one process",
            param_hint="--workers",
        )
    hand_over_urls(redis_url, queue_url)
    if redis_url is None and not os.environ.get("PATRICIAN_PUBLIC_URL"):
        # everything in this process: its links lead to where it listens
        os.environ["PATRICIAN_PUBLIC_URL"] = _address(host, port)
    if card_file is not None:
        load_game_data(card_file)  # refuse a broken card file before starting
        os.environ["PATRICIAN_CARD_FILE"] = str(card_file)
    environment_settings(
        queue=True
    )  # refuse settings that cannot be used (an SMTP URL, say) before starting
    serve(server, host=host, port=port, workers=workers)


@click.command(name="worker")
@redis_url_option
@click.option(
    "--claim-idle-seconds",
    envvar="PATRICIAN_CLAIM_IDLE_SECONDS",
    default=30.0,
    show_default=True,
    type=click.FloatRange(min=0.1),
    help="How long a notice read by a follower that died stays pending before this one "
    "takes it over (or PATRICIAN_CLAIM_IDLE_SECONDS).",
)
@click.option(
    "--follow-threads",
    envvar="PATRICIAN_FOLLOW_THREADS",
    default=8,
    show_default=True,
    type=click.IntRange(min=1, max=64),
    help="How many games the follower follows at once, each on a thread (or "
    "PATRICIAN_FOLLOW_THREADS; 1: one after another).",
)
@click.option(
    "--role",
    envvar="PATRICIAN_WORKER_ROLE",
    default="all",
    show_default=True,
    help="What this process runs: all, jobs (the jobs, timers and scheduling), follower "
    "(it alone) or later (the work nobody waits on, a finished game's analysis, at a lower "
    "CPU priority); or PATRICIAN_WORKER_ROLE.",
)
@queue_url_option
@card_file_option
def worker_command(
    redis_url: str,
    claim_idle_seconds: float,
    follow_threads: int,
    role: str,
    queue_url: str | None,
    card_file: Path | None,
) -> None:
    """Run the workers against a Redis: the outbox follower, the timers and an RQ worker
    (bot seats, clocks, webhooks, e-mail; the PATRICIAN_ settings of docs/workers.md).
    Any number of them behave as one. (`patrician serve` without a Redis runs its own.)
    A worker started before its Redis waits for it (30 s at most)."""
    import redis

    from server.config.redis_clients import node_url
    from workers.runner import ROLES, run_worker, wait_for_redis
    from workers.smtp import without_password

    if role not in ROLES:
        raise click.BadParameter(f"choose among {', '.join(ROLES)}", param_hint="--role")
    hand_over_urls(redis_url, queue_url)
    environment_settings(queue=True)  # refuse settings that cannot be used before waiting for Redis
    archive_after()
    client = redis.Redis.from_url(node_url(redis_url))  # a cluster: the node it names
    try:
        wait_for_redis(client)
    except redis.exceptions.RedisError as error:
        url = without_password(redis_url)
        raise click.ClickException(f"the Redis at {url} does not answer: {error}") from None
    finally:
        client.close()
    context = worker_context(redis_url, card_file, queue_url)
    run_worker(
        context, claim_idle_seconds=claim_idle_seconds, follow_threads=follow_threads, role=role
    )


def _address(host: str, port: int) -> str:
    """Where a browser on this machine reaches a server listening on `host` and `port`."""
    shown = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(host, host)
    return f"http://[{shown}]:{port}" if ":" in shown else f"http://{shown}:{port}"

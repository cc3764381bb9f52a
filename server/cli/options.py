"""What the `patrician` commands share: the options that name a Redis, a queue and a card
file, the settings of the environment read strictly, so that every command refuses a
setting that cannot be used in the same words, before it starts anything; and the writing of
a new key file."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from server.config.card_data import load_game_data

redis_url_option = click.option(
    "--redis-url",
    envvar="REDIS_URL",
    required=True,
    help="The Redis the games are kept in (or REDIS_URL).",
)
queue_url_option = click.option(
    "--queue-url",
    envvar="PATRICIAN_QUEUE_URL",
    default=None,
    help="The plain Redis of the jobs' queue (or PATRICIAN_QUEUE_URL; default: the store's). "
    "Required with a Redis Cluster (redis+cluster://, or PATRICIAN_REDIS_CLUSTER=1).",
)
card_file_option = click.option(
    "--card-file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Play with this card file instead of the shipped one.",
)


def archive_after() -> float:
    """`PATRICIAN_ARCHIVE_AFTER_SECONDS`, or the line that says why it cannot be used."""
    from workers.archiving import archive_after_seconds

    try:
        return archive_after_seconds()
    except ValueError as error:
        raise click.UsageError(str(error)) from None


def environment_settings(*, queue: bool = False) -> Any:
    """The settings of the environment (`server.config.settings.Settings`); one that cannot be
    used stops the command with a line that says which and why (never a traceback, never a
    password).
    `queue`: the command needs the jobs' queue (a cluster without a queue URL is refused)."""
    from evidence.signing_keys import KeyFileError, load_signer
    from outbound.web_push import PushKeyError, read_push_key
    from server.config.redis_clients import RedisSettingsError, check_queue
    from server.config.settings import Settings
    from server.transport.rate_limits import LimitSettingError
    from workers.smtp import SmtpUrlError

    try:
        settings = Settings.from_environment()
        if queue:
            check_queue(settings.redis_cluster, settings.queue_url)
        if settings.signing_key_file:  # a key that cannot be used stops the start, not a request
            load_signer(settings.signing_key_file)
        if settings.push_key_file:
            read_push_key(settings.push_key_file)
    except (
        SmtpUrlError, KeyFileError, RedisSettingsError, LimitSettingError, PushKeyError
    ) as error:  # fmt: skip
        raise click.UsageError(str(error)) from None
    return settings


def hand_over_urls(redis_url: str | None, queue_url: str | None) -> None:
    """Hand the options' URLs to the settings (`Settings.from_environment`, which the server's
    processes read too)."""
    import os

    if redis_url:
        os.environ["REDIS_URL"] = redis_url
    if queue_url:
        os.environ["PATRICIAN_QUEUE_URL"] = queue_url


def worker_context(redis_url: str, card_file: Path | None, queue_url: str | None) -> Any:
    """The workers' context (`workers.context.WorkerContext`) on that Redis (and the queue's,
    if it has one of its own), from the environment's settings."""
    from server.config.redis_clients import worker_clients
    from workers.settings import context_for

    hand_over_urls(redis_url, queue_url)
    settings = environment_settings(queue=True)
    store, queue = worker_clients(
        redis_url, cluster=settings.redis_cluster, queue_url=settings.queue_url
    )
    return context_for(store, load_game_data(card_file), settings.workers(), queue_client=queue)


Key = TypeVar("Key")


def new_key_file(path: Path, write: Callable[[Path], Key]) -> Key:
    """The key `write` puts in the new file `path`; a file there already, or one that cannot
    be written, stops the command with a line that says so."""
    try:
        return write(path)
    except FileExistsError:
        raise click.UsageError(f"{path} exists: a key is never written over") from None
    except OSError as error:
        raise click.UsageError(f"{path}: {error.strerror or error}") from None

"""The composition root: the only place that builds clients and wires the parts together.

`create_app(Settings)` returns the Litestar app. Without a Redis URL it runs everything on an
embedded in-process fakeredis (nothing survives the process; it says so on start); with one,
it is the real deployment, and any number of server processes against that Redis behave as
one server (every write is checked by version in Redis, caches are only starting points).
"""

from __future__ import annotations

import asyncio
import functools
import gc
import logging
from collections.abc import Mapping
from contextvars import ContextVar
from pathlib import Path
from typing import Any, BinaryIO, cast

import structlog
from litestar import Litestar, Request, Response
from litestar.config.compression import CompressionConfig
from litestar.config.cors import CORSConfig
from litestar.di import Provide
from litestar.logging.config import StructLoggingConfig
from litestar.openapi.config import OpenAPIConfig
from litestar.openapi.spec import Components, SecurityScheme

from evidence.signatures import Signer
from evidence.signing_keys import KeyRetired, signer_for
from server.api.audit import audit_record, signing_keys
from server.api.command_lane import command_lane
from server.api.error_table import EXCEPTION_HANDLERS
from server.api.openapi import tighten
from server.api.pages import PAGE_ROUTES
from server.api.reading import strict_json_body
from server.api.routes import ROUTES
from server.config.card_data import load_game_data
from server.config.redis_clients import redis_clients
from server.config.settings import Settings
from server.ops.gauges import RedisGauges
from server.ops.log_output import BatchedLines
from server.ops.readiness import Readying, readyz
from server.ops.scrape import Scrape, scrape
from server.services.bundle import Services, build_services
from server.transport import metrics
from server.transport.compression import GZIP_LEVEL, OneShotGzip
from server.transport.edge import InFlight, edge
from server.transport.linger import lingering
from server.transport.rate_limits import ClientAddress, RateLimits
from server.transport.request_ids import assign_request_id, send_request_id
from server.transport.security_headers import STRICT, security_headers
from store.client import AsyncEventStore
from store.clock import Clock, system_clock
from store.errors import StoreUnavailable
from workers.runner import (
    EmbeddedWorkers,
    confirmation_enqueuer,
    context_for,
    handover_enqueuer,
    queue_of,
    vacation_enqueuer,
)
from workers.smtp import without_password

log = structlog.get_logger("patrician")


_headers: ContextVar[Mapping[str, str]] = ContextVar("security_headers")
"""The security headers of the request being answered (chosen by its path before it)."""


def _before_request(limits: RateLimits) -> Any:
    async def before_request(request: Request[Any, Any, Any]) -> None:
        assign_request_id(request.scope)
        _headers.set(security_headers(request.scope["path"]))
        await limits.check(request)
        await strict_json_body(request)

    return before_request


async def _after_request(response: Response[Any]) -> Response[Any]:
    metrics.answered(response.status_code or 200)
    response = await send_request_id(response)
    response.headers.update(_headers.get(STRICT))
    return response


def _cors(origins: str) -> CORSConfig | None:
    """CORS for the web origins named (`PATRICIAN_CORS_ORIGINS`), off without any: a
    third-party page may then call the API with a bearer token (never cookies: the API has
    none) and read the request id and `Retry-After` of the answers."""
    allowed = [origin.strip().rstrip("/") for origin in origins.split(",") if origin.strip()]
    if not allowed:
        return None
    return CORSConfig(
        allow_origins=allowed,
        allow_methods=["GET", "POST", "PUT", "DELETE"],
        allow_headers=["Authorization", "Content-Type", "Last-Event-ID", "X-Request-ID"],
        expose_headers=["X-Request-ID", "Retry-After"],
        allow_credentials=False,
        max_age=600,
    )


COMPRESSION = CompressionConfig(
    backend="gzip",
    minimum_size=1024,
    gzip_compress_level=GZIP_LEVEL,
    exclude_opt_key="uncompressed",
    middleware_class=OneShotGzip,
)
"""JSON over 1 KiB goes out gzipped to a client that takes it; the answers that never change
(the client's files, finished games' replays and records) are compressed once, by their
handlers, and marked `uncompressed` here. The level is low on purpose: a board is made
anew for each request, and level 1 makes it a fifth of its size for a fraction of the cost
of level 6 (bench/server.py)."""


async def _announce_key(services: Services, settings: Settings, signer: Signer) -> None:
    """List the signing key (`GET /api/keys`) and say which it is. A store that does not
    answer now leaves it to the first signature; a retired key stops the start."""
    try:
        await services.games.key_listed()
    except StoreUnavailable as error:
        log.error("the signing key could not be listed yet", reason=str(error))
    except KeyRetired as error:
        log.error("refusing to sign with a retired key", reason=str(error))
        raise
    if settings.signing_key_file is not None:
        log.info("signing with the key of the key file", key_id=signer.key_id)
    else:
        log.warning(
            "signing with a key made at start for this process alone: set "
            "PATRICIAN_SIGNING_KEY_FILE (patrician keygen) for a key that outlives it",
            key_id=signer.key_id,
        )


@functools.cache
def _log_output() -> BatchedLines:
    """This process's log output: standard output, in batches of whole lines
    (`server.ops.log_output`), one for every app the process builds."""
    return BatchedLines()


def create_app(settings: Settings | None = None, *, clock: Clock = system_clock) -> Litestar:
    """The app; `clock` is the one time of the server and its embedded workers (tests pass
    a fake one)."""
    settings = settings or Settings()
    client, follow_client, workers_client = redis_clients(
        settings.redis_url,
        cluster=settings.redis_cluster,
        queue_url=settings.queue_url,
        gather=settings.gather_seconds,
    )
    store = AsyncEventStore(
        client,
        prefix=settings.prefix,
        shards=settings.shards,
        archive_dir=settings.archive_dir,
        pipelined=settings.redis_cluster,
        gather=settings.gather_seconds if settings.redis_url else 0.0,
    )
    follow_store = AsyncEventStore(
        follow_client, prefix=settings.prefix, shards=settings.shards,
        archive_dir=settings.archive_dir,
    )  # fmt: skip
    data = load_game_data(Path(settings.card_file) if settings.card_file else None)
    signer = signer_for(settings.signing_key_file)
    services = build_services(
        store,
        data,
        prefix=settings.prefix,
        snapshot_every=settings.snapshot_every,
        follow_store=follow_store,
        webhook_allow=settings.webhook_allow,
        enqueue=handover_enqueuer(workers_client, settings.prefix),
        confirm_email=confirmation_enqueuer(workers_client, settings.prefix),
        away=vacation_enqueuer(workers_client, settings.prefix),
        clock=clock,
        signer=signer,
    )

    embedded: list[EmbeddedWorkers] = []
    flushing: list[
        asyncio.Task[None]
    ] = []  # the request metrics' (`server.transport.metrics.flush`)
    addresses = ClientAddress(settings.trusted_proxies)
    limits = RateLimits(
        client, settings.prefix, addresses,
        {"players": settings.rate_players, "games": settings.rate_games,
         "joins": settings.rate_joins, "audits": settings.rate_audits,
         "notifications": settings.rate_notifications},
        settings.rate_window_seconds,
    )  # fmt: skip
    queue = queue_of(workers_client, settings.prefix)
    scraping = Scrape(RedisGauges(client, store.keys, queue))
    readying = Readying(
        client, queue,
        embedded=(lambda: bool(embedded) and embedded[0].thread.is_alive())
        if settings.redis_url is None else None,
    )  # fmt: skip

    async def announce(app: Litestar) -> None:
        tighten(app.openapi_schema)
        flushing.append(asyncio.create_task(metrics.keep_flushing()))
        # What is alive at start (modules, the card data, the app) lives as long as the
        # process: keep it out of every collection, which shortens the pauses of a busy server.
        gc.collect()
        gc.freeze()
        await _announce_key(services, settings, signer)
        if settings.redis_url is None and not settings.embedded_workers:
            log.warning("running on an embedded in-process fakeredis, without workers")
        elif settings.redis_url is None:
            workers = EmbeddedWorkers(
                context_for(workers_client, data, settings.workers(), clock, signer=signer)
            )
            embedded.append(workers)
            workers.start()
            log.warning(
                "running on an embedded in-process fakeredis, with the workers (bots, webhooks, "
                "clocks) "
                "in this process: games live only as long as it; pass --redis-url (or "
                "REDIS_URL) for a real deployment, and run `patrician worker` beside it"
            )
        elif settings.redis_url is not None:
            url = without_password(settings.redis_url)
            try:
                await services.games.check_store()
            except StoreUnavailable as error:  # say why now: /healthz only says "unreachable"
                log.error("the store does not answer", url=url, reason=str(error))
            else:
                log.info("using redis", url=url)

    async def close() -> None:
        while flushing:
            flushing.pop().cancel()
        while embedded:
            embedded.pop().stop()
        for each in (client, follow_client):
            await each.aclose()
        workers_client.close()
        _log_output().drain()

    cors = _cors(settings.cors_origins)
    budget = InFlight(addresses, settings.max_in_flight)
    app = Litestar(
        route_handlers=[*ROUTES, readyz, scrape, audit_record, signing_keys, *PAGE_ROUTES],
        compression_config=COMPRESSION,
        cors_config=cors,
        dependencies={
            "services": Provide(lambda: services, use_cache=True, sync_to_thread=False),
            "readying": Provide(lambda: readying, use_cache=True, sync_to_thread=False),
            "metrics_scrape": Provide(lambda: scraping, use_cache=True, sync_to_thread=False),
        },
        exception_handlers=EXCEPTION_HANDLERS,
        middleware=[edge(budget, access_log=settings.access_log)],
        before_request=_before_request(limits),
        after_request=_after_request,
        request_max_body_size=settings.max_body,
        on_startup=[announce],
        on_shutdown=[close],
        logging_config=StructLoggingConfig(
            log_exceptions="never",
            logger_factory=structlog.BytesLoggerFactory(cast(BinaryIO, _log_output())),
        ),
        openapi_config=OpenAPIConfig(
            title="Patrician",
            version="1.0.0",
            description=(
                "Play Michael Schacht's Patrician by correspondence. Commands, events and views "
                "are documented in docs/engine.md and docs/api.md."
            ),
            components=Components(
                security_schemes={
                    "BearerToken": SecurityScheme(
                        type="http", scheme="bearer", description="The token of POST /api/players"
                    )
                }
            ),
        ),
        debug=False,
    )
    # The busiest request is served in front of Litestar's routing, by the same parts
    # (`server.api.command_lane`); the app's handler of every other request is behind it.
    # A body refused for its size is read (and dropped) before its refusal goes out, so that
    # the client gets the 413 (`server.transport.linger`).
    app.asgi_handler = lingering(
        command_lane(
            app.asgi_handler, services, budget, max_body=settings.max_body, cors=cors is not None,
            access_log=settings.access_log,
        ),
        settings.max_body,
    )  # fmt: skip
    return app


def from_environment() -> Litestar:
    """The app factory for `uvicorn --factory` (each worker process builds its own)."""
    logging.getLogger("uvicorn.access").setLevel(logging.WARNING)
    return create_app(Settings.from_environment())

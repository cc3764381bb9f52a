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
import sys
from pathlib import Path
from typing import Any, BinaryIO, NamedTuple, cast

import structlog
from litestar import Litestar
from litestar.di import Provide
from litestar.logging.config import StructLoggingConfig
from litestar.openapi.config import OpenAPIConfig
from litestar.openapi.spec import Components, SecurityScheme

from domain.gamedata import GameData
from evidence.signatures import Signer
from evidence.signing_keys import KeyRetired, signer_for
from outbound.web_push import PushKey, push_key_for
from server.api.audit import audit_record, signing_keys
from server.api.command_lane import command_lane
from server.api.error_table import EXCEPTION_HANDLERS
from server.api.hooks import after_request, before_request
from server.api.openapi import tighten
from server.api.pages import PAGE_ROUTES
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
from server.transport.compression import COMPRESSION
from server.transport.cors import cors_config
from server.transport.edge import InFlight, edge
from server.transport.linger import lingering
from server.transport.rate_limits import ClientAddress, RateLimits
from store.client import AsyncEventStore
from store.clock import Clock, system_clock
from store.errors import StoreUnavailable
from workers.enqueuers import (
    analysis_enqueuer,
    confirmation_enqueuer,
    handover_enqueuer,
    vacation_enqueuer,
)
from workers.runner import EmbeddedWorkers
from workers.settings import context_for, queue_of
from workers.smtp import without_password

log = structlog.get_logger("patrician")

OPENAPI = OpenAPIConfig(
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
)


class _Clients(NamedTuple):
    """The Redis clients of one app (`server.config.redis_clients`)."""

    store: Any
    """The event store's asyncio client."""
    follow: Any
    """Its twin for blocking reads (live streams), which must not hold up the others."""
    queue: Any
    """The sync client of the jobs' queue."""


def create_app(settings: Settings | None = None, *, clock: Clock = system_clock) -> Litestar:
    """The app; `clock` is the one time of the server and its embedded workers (tests pass
    a fake one)."""
    settings = settings or Settings()
    clients = _Clients(
        *redis_clients(
            settings.redis_url, cluster=settings.redis_cluster, queue_url=settings.queue_url,
            gather=settings.gather_seconds,
        )
    )  # fmt: skip
    data = load_game_data(Path(settings.card_file) if settings.card_file else None)
    signer = signer_for(settings.signing_key_file)
    push_key = push_key_for(settings.push_key_file, embedded=settings.redis_url is None)
    services = _services(settings, clients, data, clock, signer=signer, push_key=push_key)
    lifetime = _Lifetime(settings, clients, services, data=data, clock=clock, signer=signer)
    addresses = ClientAddress(settings.trusted_proxies)
    queue = queue_of(clients.queue, settings.prefix)
    embedded = lifetime.embedded_alive if settings.redis_url is None else None
    given = {
        "services": services,
        "readying": Readying(clients.store, queue, embedded=embedded),
        "metrics_scrape": Scrape(RedisGauges(clients.store, services.games.store.keys, queue)),
    }
    cors = cors_config(settings.cors_origins)
    budget = InFlight(addresses, settings.max_in_flight)
    app = Litestar(
        route_handlers=[*ROUTES, readyz, scrape, audit_record, signing_keys, *PAGE_ROUTES],
        compression_config=COMPRESSION,
        cors_config=cors,
        dependencies={name: _provided(value) for name, value in given.items()},
        exception_handlers=EXCEPTION_HANDLERS,
        middleware=[edge(budget, access_log=settings.access_log)],
        before_request=before_request(_rate_limits(settings, clients.store, addresses)),
        after_request=after_request,
        request_max_body_size=settings.max_body,
        on_startup=[lifetime.start],
        on_shutdown=[lifetime.stop],
        logging_config=StructLoggingConfig(
            log_exceptions="never",
            logger_factory=structlog.BytesLoggerFactory(cast(BinaryIO, _log_output())),
        ),
        openapi_config=OPENAPI,
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


def _services(
    settings: Settings, clients: _Clients, data: GameData, clock: Clock, *, signer: Signer,
    push_key: PushKey | None,
) -> Services:  # fmt: skip
    """The services behind the routes, over the app's stores: the one that pipelines the
    requests of concurrent operations (on a cluster) and the one of blocking reads."""
    store = AsyncEventStore(
        clients.store,
        prefix=settings.prefix,
        shards=settings.shards,
        archive_dir=settings.archive_dir,
        pipelined=settings.redis_cluster,
        gather=settings.gather_seconds if settings.redis_url else 0.0,
    )
    follow_store = AsyncEventStore(
        clients.follow, prefix=settings.prefix, shards=settings.shards,
        archive_dir=settings.archive_dir,
    )  # fmt: skip
    return build_services(
        store,
        data,
        prefix=settings.prefix,
        snapshot_every=settings.snapshot_every,
        follow_store=follow_store,
        webhook_allow=settings.webhook_allow,
        enqueue=handover_enqueuer(clients.queue, settings.prefix),
        confirm_email=confirmation_enqueuer(clients.queue, settings.prefix),
        away=vacation_enqueuer(clients.queue, settings.prefix),
        analyse=(
            analysis_enqueuer(clients.queue, settings.prefix)
            if settings.analysis_iterations
            else None
        ),
        clock=clock,
        signer=signer,
        push_key=push_key,
    )


def _rate_limits(settings: Settings, client: Any, addresses: ClientAddress) -> RateLimits:
    budgets = {
        "players": settings.rate_players,
        "games": settings.rate_games,
        "joins": settings.rate_joins,
        "audits": settings.rate_audits,
        "notifications": settings.rate_notifications,
    }
    return RateLimits(client, settings.prefix, addresses, budgets, settings.rate_window_seconds)


def _provided(value: object) -> Provide:
    """A dependency every request resolves to the same object, made once by this root."""
    return Provide(lambda: value, use_cache=True, sync_to_thread=False)


@functools.cache
def _log_output() -> BatchedLines:
    """This process's log output: standard output, in batches of whole lines
    (`server.ops.log_output`), one for every app the process builds."""
    return BatchedLines()


class _Lifetime:
    """What the app starts when it starts and stops when it stops: the flushing of the
    request metrics, the signing key's listing, the embedded workers (on the embedded store)
    or a look at the real store, and the clients."""

    def __init__(
        self, settings: Settings, clients: _Clients, services: Services, *, data: GameData,
        clock: Clock, signer: Signer,
    ) -> None:  # fmt: skip
        self.settings, self.clients, self.services = settings, clients, services
        self.data, self.clock, self.signer = data, clock, signer
        self.embedded: list[EmbeddedWorkers] = []
        self.flushing: list[asyncio.Task[None]] = []  # `server.transport.metrics.keep_flushing`

    def embedded_alive(self) -> bool:
        """Whether the embedded workers run (for `/readyz`)."""
        return bool(self.embedded) and self.embedded[0].thread.is_alive()

    async def start(self, app: Litestar) -> None:
        tighten(app.openapi_schema)
        self.flushing.append(asyncio.create_task(metrics.keep_flushing()))
        # What is alive at start (modules, the card data, the app) lives as long as the
        # process: keep it out of every collection, which shortens the pauses of a busy server.
        gc.collect()
        gc.freeze()
        await self._announce_key()
        settings = self.settings
        if settings.redis_url is None and not settings.embedded_workers:
            log.info("running on an embedded in-process fakeredis, without workers")
        elif settings.redis_url is None:
            workers = EmbeddedWorkers(
                context_for(
                    self.clients.queue, self.data, settings.workers(), self.clock,
                    signer=self.signer, push_key=self.services.push.push_key,
                )
            )  # fmt: skip
            self.embedded.append(workers)
            workers.start()
            log.info(
                "running on an embedded in-process fakeredis, with the workers (bots, webhooks, "
                "clocks) "
                "in this process: games live only as long as it; pass --redis-url (or "
                "REDIS_URL) for a real deployment, and run `patrician worker` beside it"
            )
            # the one line a person who typed `make run` reads (the others are for programs)
            print(
                f"Patrician is ready: open {settings.public_url} in your browser "
                "(Ctrl+C stops it; its games live as long as it runs).",
                file=sys.stderr, flush=True,
            )  # fmt: skip
        else:
            url = without_password(settings.redis_url)
            try:
                await self.services.games.check_store()
            except StoreUnavailable as error:  # say why now: /healthz only says "unreachable"
                log.error("the store does not answer", url=url, reason=str(error))
            else:
                log.info("using redis", url=url)

    async def stop(self) -> None:
        while self.flushing:
            self.flushing.pop().cancel()
        while self.embedded:
            self.embedded.pop().stop()
        for each in (self.clients.store, self.clients.follow):
            await each.aclose()
        self.clients.queue.close()
        _log_output().drain()

    async def _announce_key(self) -> None:
        """List the signing key (`GET /api/keys`) and say which it is. A store that does not
        answer now leaves it to the first signature; a retired key stops the start."""
        try:
            await self.services.games.key_listed()
        except StoreUnavailable as error:
            log.error("the signing key could not be listed yet", reason=str(error))
        except KeyRetired as error:
            log.error("refusing to sign with a retired key", reason=str(error))
            raise
        if self.settings.signing_key_file is not None:
            log.info("signing with the key of the key file", key_id=self.signer.key_id)
        elif self.settings.redis_url is None:  # the embedded store: nothing outlives it anyway
            log.info("signing with a key made at start for this process", key_id=self.signer.key_id)
        else:
            log.warning(
                "signing with a key made at start for this process alone: set "
                "PATRICIAN_SIGNING_KEY_FILE (patrician keygen) for a key that outlives it",
                key_id=self.signer.key_id,
            )

"""Fixtures of the server tests: the app in process (embedded fakeredis, or the real Redis under
a unique prefix) behind Litestar's TestClient, and live `patrician serve` processes.

Everything is xdist-safe: each fixture makes its own key prefix and free port, and deletes its
keys and stops its processes afterwards. The real Redis is the machine's at 127.0.0.1:6379 (or
PATRICIAN_TEST_REDIS_URL); the tests that need it are marked `redis`.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from litestar import Litestar
from litestar.testing import TestClient

from server.config.settings import Settings
from tests.server.client import Api
from tests.server.live import (
    REDIS_URL,
    LiveServer,
    build_app,
    delete_prefix,
    redis_available,
    serving,
    unique_prefix,
)


@pytest.fixture(scope="session")
def redis_url() -> str:
    if not redis_available(REDIS_URL):
        pytest.fail(f"no Redis answers at {REDIS_URL} (set PATRICIAN_TEST_REDIS_URL)")
    return REDIS_URL


@pytest.fixture
def app() -> Litestar:
    """The app on its embedded fakeredis, without the workers (the tests of bots and
    notifications start their own app with them)."""
    return build_app(Settings(embedded_workers=False))


@pytest.fixture
def client(app: Litestar) -> Iterator[TestClient[Litestar]]:
    with TestClient(app, timeout=30) as test_client:
        yield test_client


@pytest.fixture
def api(client: TestClient[Litestar]) -> Api:
    return Api(client)


@pytest.fixture
def redis_prefix(redis_url: str) -> Iterator[str]:
    """A fresh key prefix on the real Redis, emptied afterwards."""
    prefix = unique_prefix()
    yield prefix
    delete_prefix(prefix, redis_url)


@pytest.fixture
def redis_app(redis_url: str, redis_prefix: str) -> Litestar:
    return build_app(Settings(redis_url=redis_url, prefix=redis_prefix))


@pytest.fixture
def redis_client_app(redis_app: Litestar) -> Iterator[TestClient[Litestar]]:
    with TestClient(redis_app, timeout=30) as test_client:
        yield test_client


@pytest.fixture(scope="session")
def live_server(redis_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """One `patrician serve` on a free loopback port against the real Redis, for this worker."""
    yield from serving("live", tmp_path_factory.mktemp("live"), redis_url)


@pytest.fixture(scope="module")
def two_live_servers(
    redis_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[LiveServer, LiveServer]]:
    """Two `patrician serve` processes against the same Redis and key prefix."""
    prefix = unique_prefix("pair")
    directory = tmp_path_factory.mktemp("pair")
    first = LiveServer(prefix, directory, redis_url)
    second = LiveServer(prefix, directory, redis_url)
    try:
        first.start()
        second.start()
        yield first, second
    finally:
        first.stop()
        second.stop()
        delete_prefix(prefix, redis_url)


@pytest.fixture
def live_http(live_server: LiveServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=live_server.url, timeout=30) as http:
        yield http


@pytest.fixture
def live_api(live_http: httpx.Client) -> Api:
    return Api(live_http)


def pytest_make_parametrize_id(config: pytest.Config, val: object, argname: str) -> str | None:
    if isinstance(val, tuple) and all(isinstance(item, str) for item in val):
        return "+".join(val) or "none"
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Spread the long hidden-information chunks among the other server tests: xdist hands
    each worker consecutive batches, which would otherwise give one worker all of them. Only
    the server tests move, and only among their own places."""
    here = Path(__file__).parent
    places = [i for i, item in enumerate(items) if here in item.path.parents]
    mine = [items[i] for i in places]
    long = [item for item in mine if "test_hidden_information" in item.nodeid]
    if not long:
        return
    rest = [item for item in mine if item not in long]
    step = max(1, len(rest) // len(long))
    merged: list[pytest.Item] = []
    for index, item in enumerate(rest):
        if index % step == 0 and long:
            merged.append(long.pop(0))
        merged.append(item)
    merged += long
    for place, item in zip(places, merged, strict=True):
        items[place] = item

"""Fixtures of the evidence tests: the store's own (the rules check reads a store), the same
on fakeredis and on a real Redis."""

from tests.store.conftest import backend, client, prefix, redis_url, store

__all__ = ["backend", "client", "prefix", "redis_url", "store"]

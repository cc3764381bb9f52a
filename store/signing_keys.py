"""The list of every key the server ever signed with, in Redis: one hash under the prefix,
each field a key id, each value that key's public description (JSON, written and read by
`evidence.keys`). Kept for ever, so that a receipt or a record signed years ago still
names a key anyone can look up (`GET /api/keys`)."""

from __future__ import annotations

from collections.abc import Mapping

from store.protocol import Call, Op


def keys_key(prefix: str) -> str:
    return f"{prefix}:signing-keys"


def keys_op(prefix: str) -> Op[dict[str, bytes]]:
    """Every key listed: key id -> its description."""
    found = yield Call("hgetall", (keys_key(prefix),))
    return {bytes(name).decode(): bytes(value) for name, value in found.items()}


def list_key_op(prefix: str, key_id: str, description: bytes) -> Op[bool]:
    """List a key unless it is listed already; whether it was new."""
    added = yield Call("hsetnx", (keys_key(prefix), key_id, description))
    return bool(added)


def update_keys_op(prefix: str, descriptions: Mapping[str, bytes]) -> Op[None]:
    """Write the descriptions of keys already listed (a key retired)."""
    if descriptions:
        yield Call("hset", (keys_key(prefix), None, None, dict(descriptions)))

"""The server's signing key: read from its file (`PATRICIAN_SIGNING_KEY_FILE`, written by
`patrician keygen`) or made at start, and listed among every key ever used (in Redis, served
at `GET /api/keys`: one hash under the prefix, each field a key id, each value that key's
public description, kept for ever so that a receipt or a record signed years ago still names
a key anyone can look up). Both the API processes (receipts, records) and the workers (the receipt
in a webhook) sign, so both load it here; what is signed is `evidence.signatures`.

Every process lists its key before it signs with it. A process without a key file (the
embedded server, a test) signs with a key made for it alone, and says so. Keys are retired
only by the operator (`patrician retire-key`), once every process signs with the new one: a
process draining requests with the old key during a rolling deploy signs before that moment,
and a process started with a retired key refuses to start.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import msgspec
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import (
    Encoding,
    NoEncryption,
    PrivateFormat,
    load_pem_private_key,
)

from evidence.signatures import ALGORITHM, KeyList, PublicKey, Signer
from store.protocol import Call, Op

_decoder = msgspec.json.Decoder(PublicKey)


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


class KeyFileError(ValueError):
    """A key file that cannot be used (missing, unreadable, not an Ed25519 private key)."""


def load_signer(path: str | Path) -> Signer:
    try:
        pem = Path(path).read_bytes()
        private = load_pem_private_key(pem, password=None)
    except (OSError, ValueError, TypeError) as error:
        raise KeyFileError(f"signing key {path}: {error}") from None
    if not isinstance(private, Ed25519PrivateKey):
        raise KeyFileError(f"signing key {path}: not an Ed25519 private key")
    return Signer(private)


def signer_for(path: str | None) -> Signer:
    """The key of the file at `path`, or (None) a key made now for this process alone."""
    return load_signer(path) if path else Signer(Ed25519PrivateKey.generate())


def write_key_file(path: str | Path) -> Signer:
    """A new key, in a new file readable by its owner only (never over an existing file)."""
    private = Ed25519PrivateKey.generate()
    pem = private.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption())
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "wb") as out:
        out.write(pem)
    return Signer(private)


class KeyRetired(Exception):
    """A process started with a key the operator retired (a rollback to an old key file, say):
    it must not sign with it. Make a new key (`patrician keygen`)."""


def announce_op(prefix: str, signer: Signer, now: str) -> Op[bool]:
    """List the signer's key (since `now`) if it is new, before it signs anything; whether it
    was new. Nothing else is retired: that is the operator's step (`retire_op`), once every
    process signs with the new key. Raises `KeyRetired` for a key that was retired."""
    description = PublicKey(signer.key_id, ALGORITHM, signer.public.hex(), now)
    new = yield from list_key_op(prefix, signer.key_id, msgspec.json.encode(description))
    if not new:
        listed = yield from keys_op(prefix)
        retired = _decoder.decode(listed[signer.key_id]).retired
        if retired is not None:
            raise KeyRetired(f"key {signer.key_id} was retired at {retired}: make a new one")
    return new


def retire_op(prefix: str, key_id: str, now: str) -> Op[PublicKey | None]:
    """Retire a listed key from `now` on (kept as it is if it was retired already); the key
    as listed now, or None for a key never listed."""
    listed = yield from keys_op(prefix)
    if key_id not in listed:
        return None
    key = _decoder.decode(listed[key_id])
    if key.retired is None:
        key = msgspec.structs.replace(key, retired=now)
        yield from update_keys_op(prefix, {key_id: msgspec.json.encode(key)})
    return key


def key_list_op(prefix: str) -> Op[KeyList]:
    """Every key listed, oldest first."""
    listed = yield from keys_op(prefix)
    keys = sorted((_decoder.decode(raw) for raw in listed.values()), key=_oldest_first)
    return KeyList(keys)


def _oldest_first(key: PublicKey) -> tuple[str, str]:
    return key.since, key.key_id

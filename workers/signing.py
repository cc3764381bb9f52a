"""The server's signing key: read from its file (`PATRICIAN_SIGNING_KEY_FILE`, written by
`patrician keygen`) or made at start, and listed among every key ever used (in Redis, served
at `GET /api/keys`). Both the API processes (receipts, records) and the workers (the receipt
in a webhook) sign, so both load it here; what is signed is `projections.signatures`.

A process started with a key file is the operator's lasting identity: when it starts, every
other key still listed as in use is retired (the key was rotated). A process without one
(the embedded server, a test) signs with a key made for it alone, which is listed but retires
nothing, and says so.
"""

from __future__ import annotations

import os
from pathlib import Path

import msgspec
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import (
    Encoding,
    NoEncryption,
    PrivateFormat,
    load_pem_private_key,
)

from projections.signatures import ALGORITHM, KeyList, PublicKey, Signer
from store.protocol import Op
from store.signing_keys import keys_op, list_key_op, update_keys_op

_decoder = msgspec.json.Decoder(PublicKey)


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


def announce_op(prefix: str, signer: Signer, now: str, *, lasting: bool) -> Op[bool]:
    """List the signer's key (since `now`) if it is new; a `lasting` key (from a file)
    retires every other key in use. Whether the key was new."""
    description = PublicKey(signer.key_id, ALGORITHM, signer.public.hex(), now)
    new = yield from list_key_op(prefix, signer.key_id, msgspec.json.encode(description))
    if lasting:
        listed = yield from keys_op(prefix)
        retired = {
            key_id: msgspec.json.encode(msgspec.structs.replace(key, retired=now))
            for key_id, raw in listed.items()
            if key_id != signer.key_id and (key := _decoder.decode(raw)).retired is None
        }
        yield from update_keys_op(prefix, retired)
    return new


def key_list_op(prefix: str) -> Op[KeyList]:
    """Every key listed, oldest first."""
    listed = yield from keys_op(prefix)
    keys = sorted((_decoder.decode(raw) for raw in listed.values()), key=_oldest_first)
    return KeyList(keys)


def _oldest_first(key: PublicKey) -> tuple[str, str]:
    return key.since, key.key_id

"""The server's signatures: receipts of what it acknowledged and the seal of a finished record.

A record that audits proves only that it is self-consistent: once the seed is public anyone
can replay a game with other commands and obtain another record that audits clean. What ties a
record to the game the server ran is the server's Ed25519 signature on it, and the receipts a
player keeps: each signs the chain's head at the version the server acknowledged, so that a log
rewritten afterwards no longer holds that head. The byte strings signed are documented in
docs/record.md ("Signatures"), so that a verifier in any language can check them; this module
makes and checks them (it holds no key file and does no I/O: the server loads the key).
"""

from __future__ import annotations

import hashlib
import re
from datetime import datetime
from typing import Any

import msgspec
import nacl.bindings
import rfc8785
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import (
    Encoding,
    NoEncryption,
    PrivateFormat,
)

ALGORITHM = "Ed25519"
KEY_HEX = re.compile(r"[0-9a-f]{64}")
SIGNATURE_HEX = re.compile(r"[0-9a-f]{128}")
RECEIPT_FORMAT = "patrician-receipt/1"
RECORD_SIGNATURE_FORMAT = "patrician-record-signature/1"


class Receipt(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """What the server signs when it accepts an append: the game's chain head after it, and
    when the append was accepted (the record's `commands[].time` of that append)."""

    game_id: str
    version: int
    head_hash: str
    time: str
    key_id: str
    signature: str


class RecordSignature(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The seal of a complete record: which key, when, the digest of each member of the rest
    of the document (`parts`, so that a change is named), the digest of those, and the
    signature over it, the game's head and its result."""

    key_id: str
    public_key: str
    time: str
    parts: dict[str, str]
    document_sha256: str
    signature: str


class PublicKey(msgspec.Struct, frozen=True):
    """One key the server signs or signed with (`GET /api/keys`): `since` when it was first
    listed (before it signed anything), `retired` when the operator retired it (None: in
    use). A key signs nothing after it was retired. Read leniently where it is stored."""

    key_id: str
    algorithm: str
    public_key: str
    since: str
    retired: str | None = None


class KeyList(msgspec.Struct, frozen=True):
    """Every key the server ever signed with (`GET /api/keys`, `patrician audit --keys`)."""

    keys: list[PublicKey]


class _GivenKey(PublicKey, frozen=True, forbid_unknown_fields=True):
    """A key of a list handed to the audit: read strictly (a field it does not know, such as
    a revocation a newer server writes, is not passed over)."""


class _GivenKeys(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    keys: list[_GivenKey]


key_list_decoder = msgspec.json.Decoder(_GivenKeys)
receipt_decoder = msgspec.json.Decoder(Receipt)


def key_id_of(public: bytes) -> str:
    """A key's name: the first 16 hex digits of the SHA-256 of its raw 32 bytes."""
    return hashlib.sha256(public).hexdigest()[:16]


def receipt_message(game_id: str, version: int, head_hash: str, time: str, key_id: str) -> bytes:
    """The bytes a receipt's signature is over: its fields, one per line (docs/record.md)."""
    return "\n".join((RECEIPT_FORMAT, key_id, game_id, str(version), head_hash, time)).encode()


def canonical_sha256(value: Any) -> str:
    """SHA-256 (hex) of the canonical JSON (RFC 8785) of a JSON value: the same for a record
    re-indented or with its keys in another order."""
    return hashlib.sha256(rfc8785.dumps(value)).hexdigest()


def parts_of(document: dict[str, Any]) -> dict[str, str]:
    """The digest of each member of a record but its `signature`."""
    return {
        name: canonical_sha256(value) for name, value in document.items() if name != "signature"
    }


def document_sha256(parts: dict[str, str]) -> str:
    """The digest a record's seal signs: of its members' digests."""
    return canonical_sha256(parts)


def record_message(
    document: dict[str, Any], key_id: str, time: str, digest: str
) -> bytes:  # fmt: skip
    """The bytes a record's seal is over: the key, the time, the game, its head, the SHA-256
    of its canonical result and the document's digest, one per line (docs/record.md)."""
    head = document.get("head") or {}
    result = canonical_sha256(document.get("result"))
    return "\n".join(
        (
            RECORD_SIGNATURE_FORMAT,
            key_id,
            time,
            str(document.get("game_id")),
            str(head.get("version")),
            str(head.get("hash")),
            result,
            digest,
        )
    ).encode()


class Signer:
    """The server's private key, signing receipts and records (deterministic: Ed25519 signs
    the same bytes the same way, so that a receipt told again is the same receipt).

    The key is read by `cryptography`; the signing is libsodium's (PyNaCl), which makes the
    very same signature in about 30 us where OpenSSL's takes about 48 us (every accepted
    append is answered with a signed receipt)."""

    def __init__(self, private: Ed25519PrivateKey) -> None:
        seed = private.private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption())
        self.public, self._secret = nacl.bindings.crypto_sign_seed_keypair(seed)
        self.key_id = key_id_of(self.public)

    def sign(self, message: bytes) -> str:
        return nacl.bindings.crypto_sign(message, self._secret)[:64].hex()

    def receipt(self, game_id: str, version: int, head_hash: str, time: str) -> Receipt:
        message = receipt_message(game_id, version, head_hash, time, self.key_id)
        return Receipt(game_id, version, head_hash, time, self.key_id, self.sign(message))

    def seal(self, document: dict[str, Any], time: str) -> RecordSignature:
        """The signature of a complete record (given as the JSON object it is served as)."""
        parts = parts_of(document)
        digest = document_sha256(parts)
        message = record_message(document, self.key_id, time, digest)
        return RecordSignature(
            self.key_id, self.public.hex(), time, parts, digest, self.sign(message)
        )


def verifies(public_hex: str, signature_hex: str, message: bytes) -> bool:
    """Whether `signature_hex` is the signature of `message` by the key `public_hex`; False
    for anything malformed: only lower-case hex of the right length is taken, the one way
    the server writes them (so that no other spelling of a signature also verifies)."""
    if not (KEY_HEX.fullmatch(public_hex) and SIGNATURE_HEX.fullmatch(signature_hex)):
        return False
    try:
        key = Ed25519PublicKey.from_public_bytes(bytes.fromhex(public_hex))
        key.verify(bytes.fromhex(signature_hex), message)
    except (ValueError, InvalidSignature):
        return False
    return True


def instant(text: str) -> datetime | None:
    """An ISO 8601 time as the server writes them (UTC, `Z`), or None if it is not one."""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else None

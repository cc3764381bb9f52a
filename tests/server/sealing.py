"""The test server's signing key (a fixture, never a real server's), and a record sealed again
with it: what a server that lied would serve. Tests that change a record and want to see the
checks below the signature catch the change seal it again first; a change left unsealed is
caught by the signature itself."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec

from evidence.signatures import KeyList, PublicKey
from evidence.signing_keys import load_signer

KEY_FILE = Path(__file__).parent.parent / "fixtures" / "records" / "signing-key.pem"
SIGNER = load_signer(KEY_FILE)
KEYS = msgspec.json.encode(
    KeyList([PublicKey(SIGNER.key_id, "Ed25519", SIGNER.public.hex(), "2026-01-01T00:00:00Z")])
)
"""The test server's list of keys, as `GET /api/keys` would give it."""


def resealed(record: dict[str, Any]) -> dict[str, Any]:
    """The record (changed or not) with a fresh seal of the test key over it."""
    document = {name: value for name, value in record.items() if name != "signature"}
    commands = record.get("commands") or [{}]
    ended = commands[-1].get("time", "2026-01-01T00:00:00Z")  # a seal is dated by the end
    seal = SIGNER.seal(document, (record.get("signature") or {}).get("time", ended))
    return {**document, "signature": msgspec.to_builtins(seal)}


def encoded(record: dict[str, Any]) -> bytes:
    return json.dumps(record).encode()

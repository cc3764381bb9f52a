"""The audit's checks of what the server signed: the seal of the record and the receipts a
player kept (docs/record.md, "Signatures" and "Receipts").

The seal proves the document is the one the server issued (every field, the metadata the log
does not hold included); a receipt proves what the server acknowledged during play: the head
of the chain at a version. A record that audits clean but lacks a receipt's head was
rewritten after the server said so. Keys are the server's list (`GET /api/keys`) when given,
else the key the record names: then the seal shows only that the document is unchanged since
it was signed, not by whom, and the check says so. A signature counts only if it was made
(by its own date) before its key was retired; a key that leaked can date one earlier, which
no list of keys can tell apart (docs/record.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import msgspec

from evidence.checks import Check, Refusal
from evidence.record import Record
from evidence.signatures import (
    ALGORITHM,
    KEY_HEX,
    PublicKey,
    document_sha256,
    instant,
    key_id_of,
    key_list_decoder,
    parts_of,
    receipt_decoder,
    receipt_message,
    record_message,
    verifies,
)


class Evidence:
    """The signature checks of one record, against the server's keys if given."""

    def __init__(self, record: Record, document: dict[str, Any], keys: bytes | None) -> None:
        self.record, self.document = record, document
        self.keys = None if keys is None else _key_list(keys)
        self._ending = {each.last_version: each for each in record.commands}
        """The append ending at each version (a receipt is of an append's last version)."""

    def signature(self) -> Check:
        seal = self.record.signature
        if seal is None:
            raise Refusal(
                "signature",
                "signature: the record is not signed; nothing ties it to the server that ran "
                "the game",
            )
        if document_sha256(seal.parts) != seal.document_sha256:
            raise Refusal(
                "signature", "signature.document_sha256: not the digest of signature.parts"
            )
        last = self.record.commands[-1].time if self.record.commands else ""
        sealed, ended = instant(seal.time), instant(last)
        if sealed is not None and ended is not None and sealed < ended:
            raise Refusal(
                "signature",
                f"signature.time: {seal.time} is before the game's last append ({last})",
            )
        public = self._public("signature", "signature", seal.key_id, seal.public_key, seal.time)
        message = record_message(self.document, seal.key_id, seal.time, seal.document_sha256)
        found = parts_of(self.document)
        changed = sorted(
            name
            for name in found.keys() | seal.parts.keys()
            if found.get(name) != seal.parts.get(name)
        )
        if changed:  # named first: the signature fails too when the head or result changed
            raise Refusal(
                "signature",
                f"{', '.join(map(_name, changed))}: not what the seal's digests say: changed "
                "after the record was signed",
            )
        if not verifies(public, seal.signature, message):
            raise Refusal(
                "signature",
                f"signature.signature: not the signature of key {seal.key_id} on this record",
            )
        whose = (
            "the server's"
            if self.keys is not None
            else "not checked against the server's keys: give --keys, the list of GET /api/keys"
        )
        return Check("signature", True, f"signed at {seal.time} by key {seal.key_id} ({whose})")

    def receipts(self, receipts: Sequence[tuple[str, bytes]]) -> Check:
        for name, raw in receipts:
            self._receipt(name, raw)
        if not receipts:
            return Check("receipts", True, "no receipt given")
        return Check(
            "receipts",
            True,
            f"{len(receipts)} receipts: the record holds the head each one acknowledged",
        )

    def _receipt(self, name: str, raw: bytes) -> None:
        try:
            receipt = receipt_decoder.decode(raw)
        except (msgspec.DecodeError, RecursionError) as error:
            raise Refusal("receipts", f"{name}: not a receipt: {error}") from None
        seal = self.record.signature
        own = seal.public_key if seal is not None and seal.key_id == receipt.key_id else None
        public = self._public("receipts", name, receipt.key_id, own, receipt.time)
        message = receipt_message(
            receipt.game_id, receipt.version, receipt.head_hash, receipt.time, receipt.key_id
        )
        if not verifies(public, receipt.signature, message):
            raise Refusal(
                "receipts", f"{name}: not the signature of key {receipt.key_id} on this receipt"
            )
        record = self.record
        if receipt.game_id != record.game_id:
            raise Refusal(
                "receipts",
                f"{name}: a receipt of game {receipt.game_id!r}, not {record.game_id!r}",
            )
        version, head, time = receipt.version, receipt.head_hash, receipt.time
        said = f"it acknowledges version {version} with head {head[:16]}... at {time}"
        if version < 1:
            raise Refusal("receipts", f"{name}: version {version}: no game has such a version")
        if version > len(record.events):
            raise Refusal(
                "receipts",
                f"{name}: {said}, but the record ends at version {len(record.events)}: the log "
                "was cut after the server acknowledged it",
            )
        held = record.events[version - 1].hash
        append = self._ending.get(version)
        if held != head and append is not None and append.time != time:
            raise Refusal(
                "receipts",
                f"{name}: {said}, but the record's append ending there was accepted at "
                f"{append.time} with head {held[:16]}...: the log and its times were rewritten "
                "after the server acknowledged it (or a key that leaked made the receipt)",
            )
        if held != head:
            raise Refusal(
                "receipts",
                f"{name}: {said}, but the record's version {version} has head {held[:16]}...: "
                "the log was rewritten after the server acknowledged it",
            )
        if append is None:
            raise Refusal(
                "receipts", f"{name}: {said}, but no append of the record's commands ends there"
            )
        if append.time != time:
            raise Refusal(
                "receipts",
                f"{name}: {said}, but the record's commands say the append ending there was "
                f"accepted at {append.time}",
            )

    def _public(self, kind: str, where: str, key_id: str, named: str | None, time: str) -> str:
        """The public key (hex) to check a signature of `key_id` made at `time` with: the
        server's listed key when a list was given, else the one the record names. A failure
        is told as check `kind`, at `where`."""
        moment = instant(time)
        if moment is None:
            raise Refusal(kind, f"{where}: time {time!r} is not an ISO 8601 time with its zone")
        at = f"{where}.key_id" if where == "signature" else where
        if self.keys is None:
            if named is None:
                raise Refusal(
                    kind,
                    f"{at}: key {key_id!r} is not the record's key; give --keys (the list of "
                    "GET /api/keys) to check it",
                )
            if not KEY_HEX.fullmatch(named) or key_id_of(bytes.fromhex(named)) != key_id:
                raise Refusal(kind, f"{at}: {key_id!r} is not the id of the key it names")
            return named
        key = self.keys.get(key_id)
        if key is None:
            raise Refusal(kind, f"{at}: key {key_id!r} is not one of the server's keys")
        if named is not None and named != key.public_key:
            raise Refusal(kind, f"{at}: it names another key than the server's {key_id}")
        retired = instant(key.retired) if key.retired is not None else None
        if retired is not None and moment > retired:
            raise Refusal(
                kind, f"{where}: signed at {time}, after key {key_id} was retired ({key.retired})"
            )
        return key.public_key


def _key_list(raw: bytes) -> dict[str, PublicKey]:
    """The server's keys by id, each checked: one entry per id, the id its key's, Ed25519,
    lower-case hex, times with their zone. A list that is not is refused (`keys`)."""
    try:
        listed = key_list_decoder.decode(raw).keys
    except (msgspec.DecodeError, RecursionError) as error:
        raise Refusal("keys", f"--keys: not the server's list of keys: {error}") from None
    keys: dict[str, PublicKey] = {}
    for k, key in enumerate(listed):
        where = f"--keys: keys[{k}]"
        if key.key_id in keys:
            raise Refusal("keys", f"{where}: key {key.key_id!r} is listed twice")
        if key.algorithm != ALGORITHM:
            raise Refusal("keys", f"{where}.algorithm: {key.algorithm!r} is not {ALGORITHM}")
        if not KEY_HEX.fullmatch(key.public_key):
            raise Refusal("keys", f"{where}.public_key: not 64 lower-case hex digits")
        if key_id_of(bytes.fromhex(key.public_key)) != key.key_id:
            raise Refusal("keys", f"{where}.key_id: not the id of its public key")
        for field, value in (("since", key.since), ("retired", key.retired)):
            if value is not None and not isinstance(instant(value), datetime):
                raise Refusal("keys", f"{where}.{field}: {value!r} is not a time with its zone")
        keys[key.key_id] = key
    return keys


def _name(member: str) -> str:
    """A member's name as the audit tells it (quoted when it is not a plain name)."""
    return member if member.isidentifier() and member.isascii() else repr(member)

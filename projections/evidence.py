"""The audit's checks of what the server signed: the seal of the record and the receipts a
player kept (docs/record.md, "Signatures" and "Receipts").

The seal proves the document is the one the server issued (every field, the metadata the log
does not hold included); a receipt proves what the server acknowledged during play: the head
of the chain at a version. A record that audits clean but lacks a receipt's head was
rewritten after the server said so. Keys are the server's list (`GET /api/keys`) when given,
else the key the record names: then the seal shows only that the document is unchanged since
it was signed, not by whom, and the check says so.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import msgspec

from projections.checks import Check, Refusal
from projections.record import Record, RecordCommand
from projections.signatures import (
    PublicKey,
    RecordSignature,
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

_KEY_HEX = re.compile(r"[0-9a-f]{64}")


class Evidence:
    """The signature checks of one record, against the server's keys if given."""

    def __init__(self, record: Record, document: dict[str, Any], keys: bytes | None) -> None:
        self.record, self.document = record, document
        self.keys: dict[str, PublicKey] | None = None
        if keys is not None:
            try:
                listed = key_list_decoder.decode(keys).keys
            except (msgspec.DecodeError, RecursionError) as error:
                raise Refusal(
                    "signature", f"--keys: not the server's list of keys: {error}"
                ) from None
            self.keys = {key.key_id: key for key in listed}

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
        # The members changed are named first (the signature fails then too, since the
        # head or result it signs changed with them); the seal itself after.
        found = parts_of(self.document)
        changed = sorted(
            name
            for name in found.keys() | seal.parts.keys()
            if found.get(name) != seal.parts.get(name)
        )
        if changed:
            raise Refusal(
                "signature",
                f"{', '.join(changed)}: not as the server signed the record: changed after it "
                "was signed",
            )
        public = self._public("signature", "signature", seal.key_id, seal.public_key, seal.time)
        message = record_message(self.document, seal.key_id, seal.time, seal.document_sha256)
        if not verifies(public, seal.signature, message):
            raise Refusal(
                "signature",
                f"signature.signature: not the signature of key {seal.key_id} on this record "
                "(it or its seal was changed after it was signed)",
            )
        whose = (
            "the server's key"
            if self.keys is not None
            else "key (not checked against the server's keys: give --keys, the list of "
            "GET /api/keys)"
        )
        return Check("signature", True, f"signed at {seal.time} by {whose} {seal.key_id}")

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
        seal: RecordSignature | None = self.record.signature
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
                "receipts", f"{name}: a receipt of game {receipt.game_id}, not {record.game_id}"
            )
        version, head = receipt.version, receipt.head_hash
        acknowledged = f"the server acknowledged version {version} with head {head[:16]}..."
        if not 1 <= version <= len(record.events):
            raise Refusal(
                "receipts",
                f"{name}: {acknowledged}, but the record ends at version "
                f"{len(record.events)}: the log was cut after the server acknowledged it",
            )
        held = record.events[version - 1].hash
        if held != head:
            raise Refusal(
                "receipts",
                f"{name}: {acknowledged}, but the record's version {version} has head "
                f"{held[:16]}...: the log was rewritten after the server acknowledged it",
            )
        append = _ending_at(record.commands, version)
        if append is None:
            raise Refusal(
                "receipts",
                f"{name}: {acknowledged}, but no append of the record's commands ends there",
            )
        if append.time != receipt.time:
            raise Refusal(
                "receipts",
                f"{name}: the server accepted the append ending at version {version} at "
                f"{receipt.time}; the record's commands say {append.time}",
            )

    def _public(self, kind: str, where: str, key_id: str, named: str | None, time: str) -> str:
        """The public key (hex) to check a signature of `key_id` made at `time` with: the
        server's listed key when a list was given, else the one the record names. A failure
        is told as check `kind`, at `where`."""
        moment = instant(time)
        if moment is None:
            raise Refusal(kind, f"{where}: time {time!r} is not an ISO 8601 time with its zone")
        if self.keys is None:
            if named is None:
                raise Refusal(
                    kind,
                    f"{where}: key {key_id} is not the record's key; give --keys (the list of "
                    "GET /api/keys) to check it",
                )
            if not _KEY_HEX.fullmatch(named) or key_id_of(bytes.fromhex(named)) != key_id:
                raise Refusal(kind, f"{where}: {key_id} is not the id of the key it names")
            return named
        key = self.keys.get(key_id)
        if key is None:
            whose = f"{where}.key_id" if where == "signature" else where
            raise Refusal(kind, f"{whose}: key {key_id} is not one of the server's keys")
        if named is not None and named != key.public_key:
            raise Refusal(kind, f"{where}: it names another key than the server's {key_id}")
        retired = instant(key.retired) if key.retired is not None else None
        if retired is not None and moment > retired:
            raise Refusal(
                kind, f"{where}: signed at {time}, after key {key_id} was retired ({key.retired})"
            )
        return key.public_key


def _ending_at(commands: Sequence[RecordCommand], version: int) -> RecordCommand | None:
    return next((each for each in commands if each.last_version == version), None)

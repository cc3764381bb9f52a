"""Verify a complete game record offline (`patrician audit RECORD`), trusting nothing in it.

The checks of docs/record.md, in order: the document's shape; the server's signature; the
hash chain of the event log; the game's options against its first event; the seed against its
commitment; the whole game re-decided from the record's own commands, by the rules version it
was created with (creation and joins re-derive the seating and the deal from the seed, the
entropies and the names; every command must be legal and give exactly the logged events, byte
for byte); the players, the entropies and the deal against the log; the result recomputed;
each receipt a player kept against the log. Every field is either checked against the log or
named as metadata only the signature vouches for (`UNVERIFIED`). The first failure is named
in words and ends the audit; a malformed document never raises, it fails the `shape` check
naming the field. Nothing here touches Redis: the audit runs anywhere.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from typing import Any

import msgspec

from domain.board import SUPPORTED_RULES_VERSIONS
from domain.errors import InvalidOptions
from domain.events import (
    Event,
    GameCreated,
    event_decoder,
)
from domain.gamedata import GameDataError, validate_game_data
from domain.scoring import final_scores
from domain.setup import check_options
from domain.shuffle import ALGORITHM, commitment
from domain.unknown_fields import unknown_fields
from evidence.checks import Check, Refusal
from evidence.json_alike import Ambiguous, members_named_once
from evidence.record import FORMAT, Record, deal_of, players_of
from evidence.redecide import redecide
from evidence.signature_checks import Evidence
from store import chain
from store.stored import StoredEvent

UNVERIFIED = ("game_id", "commands[].command_id", "commands[].time", "commands[].by")
"""Fields the log does not hold, so that only the signature vouches for them: they are the
server's word (and a receipt checks the time and the game of the append it is for)."""
UNVERIFIED_GROUPING = "how commands[] group the commands into appends"
"""Nor does the log hold where one append ended and the next began: commands split or merged
differently decide the same events (the versions of each group are checked to follow on)."""

EXIT_CODES = {
    "shape": 2,
    "hash chain": 3,
    "options": 4,
    "seed": 5,
    "commands": 6,
    "players": 7,
    "deal": 12,
    "result": 8,
    "internal": 9,
    "signature": 10,
    "receipts": 11,
    "keys": 13,
}
# (The deal had 7 with the players before signatures came; each kind now has its own.)
"""The exit code of `patrician audit` per check that failed first (0: the record holds up)."""


record_decoder = msgspec.json.Decoder(Record)
_LOWER_HEX = re.compile(r"(?:[0-9a-f]{2})+")


def audit(
    raw: bytes, receipts: Sequence[tuple[str, bytes]] = (), keys: bytes | None = None
) -> list[Check]:
    """Every check of the record, in order, up to the first that fails; `receipts`, each
    named (its file), the receipts a player kept; `keys`, the server's list of keys
    (`GET /api/keys`) to check the signatures against (else the record's own key)."""
    checks: list[Check] = []
    try:
        record, document = _shape(raw)
        checks.append(Check("shape", True, f"a {FORMAT} document of a finished game"))
        evidence = Evidence(record, document, keys)
        checks.append(evidence.signature())
        for check in _checks(record):
            checks.append(check)
        checks.append(evidence.receipts(receipts))
        checks.append(_metadata())
    except Refusal as refusal:
        checks.append(refusal.check)
    except Exception as error:
        checks.append(
            Check(
                "internal",
                False,
                f"this record could not be read to the end ({type(error).__name__}: {error}); "
                "it is not shown to hold up",
            )
        )
    return checks


def exit_code(checks: Sequence[Check]) -> int:
    failed = next((check for check in checks if not check.ok), None)
    return 0 if failed is None else EXIT_CODES.get(failed.name, 1)


class AuditResult(msgspec.Struct, frozen=True):
    """What `patrician audit --json` prints and `POST /api/audit` answers."""

    ok: bool
    exit_code: int
    checks: list[Check]


def audit_result(
    raw: bytes, receipts: Sequence[tuple[str, bytes]] = (), keys: bytes | None = None
) -> AuditResult:
    checks = audit(raw, receipts, keys)
    code = exit_code(checks)
    return AuditResult(code == 0, code, checks)


def _shape(raw: bytes) -> tuple[Record, dict[str, Any]]:
    try:
        record = record_decoder.decode(raw)
    except (msgspec.DecodeError, RecursionError) as error:
        raise Refusal("shape", f"not a {FORMAT} document: {error}") from None
    document = _one_reading(raw)
    unknown = unknown_fields(document, record)
    if unknown:  # a field nothing here would check
        raise Refusal("shape", f"{unknown[0][2:]}: a field {FORMAT} does not have")
    if record.format != FORMAT:
        raise Refusal("shape", f"format: {record.format!r} is not {FORMAT!r}")
    if not record.complete:
        raise Refusal("shape", "complete: a redacted record (the game is still on) proves nothing")
    if not record.events:
        raise Refusal("shape", "events: the record holds no event")
    return record, document


def _one_reading(raw: bytes) -> dict[str, Any]:
    """The document as JSON values, if every JSON reader reads it the same (I-JSON, RFC
    7493, as the canonical form of the signature needs): no member named twice in one
    object (`members_named_once`), and no integer beyond 2^53 - 1, which many read as
    another."""

    def whole(text: str) -> int:
        if len(text.lstrip("-")) > 16 or abs(int(text)) > 2**53 - 1:
            raise Ambiguous(f"the number {text[:24]} is beyond 2^53 - 1")
        return int(text)

    try:
        document = json.loads(raw, object_pairs_hook=members_named_once, parse_int=whole)
    except Ambiguous as error:
        raise Refusal(
            "shape", f"not a {FORMAT} document every reader reads alike: {error}"
        ) from None
    except (ValueError, RecursionError) as error:
        raise Refusal("shape", f"not a {FORMAT} document: {error}") from None
    if not isinstance(document, dict):  # never: the record decoded as an object first
        raise Refusal("shape", f"not a {FORMAT} document: not a JSON object")
    return document


def _checks(record: Record) -> Iterator[Check]:
    events = [StoredEvent(e.version, e.data.encode(), e.hash) for e in record.events]
    try:
        head = chain.verify(events)
    except chain.ChainBroken as broken:
        raise Refusal("hash chain", f"events: {broken}") from None
    if (record.head.version, record.head.hash) != (len(events), head):
        raise Refusal("hash chain", "head: not the last event's version and hash")
    yield Check("hash chain", True, f"{len(events)} events, head {head[:16]}...")

    log = _decoded(record)
    created = _options(record, log[0])
    yield Check("options", True, f"rules version {created.rules_version}, as the first event says")

    seed = _seed(record, created)
    yield Check("seed", True, "SHA-256(server seed) equals the commitment made at creation")

    state = redecide(record, log, seed)
    yield Check(
        "commands",
        True,
        f"{len(record.commands)} appends re-decided: the seating, the deal and every event "
        "follow from the seed, the entropies and the commands",
    )
    _agree("players", record.players, players_of(state), "players")
    _agree("players", record.fairness.entropies, state.entropies, "fairness.entropies")
    yield Check("players", True, f"{len(state.players)} players: ids, names and seats")
    _agree("deal", record.deal, deal_of(log) if state.seat_players else None, "deal")
    yield Check("deal", True, "hands, draw pile, face-up and hidden cards as dealt")
    result = final_scores(state) if state.phase == "over" else None
    _agree("result", record.result, result, "result")
    if result is not None and state.result != result:
        raise Refusal("result", "the log's game_ended does not add up")
    told = "final scores recomputed" if result is not None else "cancelled: no result"
    yield Check("result", True, told)


def _metadata() -> Check:
    unchecked = ", ".join((*UNVERIFIED, UNVERIFIED_GROUPING))
    return Check(
        "metadata", True, f"the log does not hold them, the signature vouches: {unchecked}"
    )


def _decoded(record: Record) -> list[Event]:
    log = []
    for i, entry in enumerate(record.events):
        try:
            log.append(event_decoder.decode(entry.data))
        except msgspec.DecodeError as error:
            raise Refusal("shape", f"events[{i}].data: not an event: {error}") from None
    return log


def _options(record: Record, created: Event) -> GameCreated:
    if not isinstance(created, GameCreated):
        raise Refusal("options", "events[0]: the log does not begin with the game's creation")
    if created.rules_version not in SUPPORTED_RULES_VERSIONS:
        known = ", ".join(map(str, SUPPORTED_RULES_VERSIONS))
        raise Refusal(
            "options",
            f"rules version {created.rules_version}: this auditor re-decides rules versions "
            f"{known} only",
        )
    if created.shuffle_algorithm != ALGORITHM:
        raise Refusal("options", f"shuffle {created.shuffle_algorithm!r} is not {ALGORITHM!r}")
    try:
        validate_game_data(created.game_data)
        check_options(created.edition, created.seats, created.modules, created.game_data)
    except (GameDataError, InvalidOptions) as error:
        raise Refusal("options", f"events[0]: a game nobody could create: {error}") from None
    fairness = record.fairness
    for name, said, logged in (
        ("rules_version", record.rules_version, created.rules_version),
        ("edition", record.edition, created.edition),
        ("seats", record.seats, created.seats),
        ("modules", record.modules, created.modules),
        ("game_data", record.game_data, created.game_data),
        ("fairness.shuffle_algorithm", fairness.shuffle_algorithm, created.shuffle_algorithm),
        ("fairness.seed_commitment", fairness.seed_commitment, created.seed_commitment),
    ):
        _agree("options", said, logged, name)
    return created


def _seed(record: Record, created: GameCreated) -> bytes:
    text = record.fairness.server_seed or ""
    if not _LOWER_HEX.fullmatch(text):
        raise Refusal("seed", "fairness.server_seed: not a hex string in lower case")
    seed = bytes.fromhex(text)
    if not seed or commitment(seed) != created.seed_commitment:
        raise Refusal("seed", "fairness.server_seed: its SHA-256 is not the commitment")
    return seed


def _agree(name: str, said: object, found: object, field: str) -> None:
    """`said` (the record's) must equal `found` (from the log): else the first place where
    they differ is named, with both values."""
    if said == found:
        return
    path, theirs, ours = _difference(msgspec.to_builtins(said), msgspec.to_builtins(found), field)
    raise Refusal(name, f"{path}: the record says {_short(theirs)}, the log {_short(ours)}")


def _difference(said: object, found: object, path: str) -> tuple[str, object, object]:
    if isinstance(said, dict) and isinstance(found, dict):
        for key in found:
            if said.get(key) != found[key]:
                return _difference(said.get(key), found[key], f"{path}.{key}")
    elif (
        isinstance(said, list | tuple)
        and isinstance(found, list | tuple)
        and len(said) == len(found)
    ):
        for i, (a, b) in enumerate(zip(said, found, strict=True)):
            if a != b:
                return _difference(a, b, f"{path}[{i}]")
    return path, said, found


def _short(value: object) -> str:
    text = msgspec.json.encode(value).decode()
    return text if len(text) <= 80 else text[:77] + "..."

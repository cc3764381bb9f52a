"""Verify a complete game record offline (`patrician audit RECORD`), trusting nothing in it.

The checks of docs/record.md: the hash chain of the event log; the seed against its
commitment; the whole game re-decided from the record's own commands (creation and joins
re-derive the seating and the deal from the seed and entropies, every command must be legal
and give exactly the logged events, byte for byte); the final scores recomputed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence

import msgspec

from domain.errors import IllegalCommand, InvalidOptions
from domain.events import Event, GameCreated, SeatJoined, encoder, event_decoder
from domain.evolve import fold
from domain.scoring import final_scores
from domain.setup import create_game, join_game
from domain.state import NEW_GAME, State
from projections.record import Record, RecordCommand
from store import chain
from store.games import CommandRefused, decide_all


class Check(msgspec.Struct, frozen=True):
    name: str
    ok: bool
    detail: str


class Linked(msgspec.Struct, frozen=True):
    version: int
    data: bytes
    hash: str


record_decoder = msgspec.json.Decoder(Record)


def audit(raw: bytes) -> list[Check]:
    """Every check of the record, in order; the record holds up when all are ok."""
    try:
        record = record_decoder.decode(raw)
    except msgspec.MsgspecError as error:
        return [Check("format", False, f"not a patrician-record/1 document: {error}")]
    return list(_checks(record))


def _checks(record: Record) -> Iterator[Check]:
    if record.format != "patrician-record/1":
        yield Check("format", False, f"unknown format {record.format!r}")
        return
    if not record.complete:
        yield Check("complete", False, "a redacted record (game still on) cannot be audited")
        return
    events = record.events
    try:
        head = chain.verify(Linked(e.version, e.data.encode(), e.hash) for e in events)
    except chain.ChainBroken as broken:
        yield Check("hash chain", False, str(broken))
        return
    if (len(events), head) != (record.head.version, record.head.hash):
        yield Check("hash chain", False, "the last event is not the head the record names")
        return
    yield Check("hash chain", True, f"{len(events)} events, head {head[:16]}...")

    log = [event_decoder.decode(e.data) for e in events]
    created = log[0]
    if not isinstance(created, GameCreated) or created.game_data != record.game_data:
        yield Check("options", False, "the first event is not the creation of this game")
        return
    seed_hex = record.fairness.server_seed or ""
    seed = bytes.fromhex(seed_hex)
    if hashlib.sha256(seed).hexdigest() != created.seed_commitment:
        yield Check("seed", False, "the published seed does not match its commitment")
        return
    yield Check("seed", True, "SHA-256(server seed) equals the commitment made at creation")

    expected = 1
    for batch in record.commands:
        if batch.first_version != expected or batch.last_version < batch.first_version:
            yield Check(
                "commands", False, f"{batch.command_id}: not the append after {expected - 1}"
            )
            return
        expected = batch.last_version + 1
    entropies = tuple(e.entropy for e in log if isinstance(e, SeatJoined))
    if entropies != record.fairness.entropies:
        yield Check("seed", False, "the entropies differ from those the players sent")
        return

    state = NEW_GAME
    for batch in record.commands:
        logged = log[batch.first_version - 1 : batch.last_version]
        try:
            decided = _decide(record, state, batch, seed, logged)
        except (IllegalCommand, InvalidOptions, CommandRefused) as refused:
            yield Check("commands", False, f"{batch.command_id}: refused: {refused}")
            return
        if [encoder.encode(e) for e in decided] != [
            e.data.encode() for e in events[batch.first_version - 1 : batch.last_version]
        ]:
            yield Check(
                "commands",
                False,
                f"{batch.command_id} (versions {batch.first_version}-{batch.last_version}) "
                "does not give the logged events",
            )
            return
        state = fold(decided, state)
    if state.version != len(events):
        yield Check("commands", False, f"the commands cover {state.version} of {len(events)}")
        return
    yield Check(
        "commands",
        True,
        f"{len(record.commands)} appends re-decided: seating, deal and every event match",
    )
    result = final_scores(state) if state.phase == "over" else None
    ok = result is not None and result == record.result == state.result
    yield Check("result", ok, "final scores recomputed" if ok else "the result does not add up")


def _decide(
    record: Record, state: State, batch: RecordCommand, seed: bytes, logged: Sequence[Event]
) -> list[Event]:
    if batch.kind == "create":
        created = logged[0]
        joined = logged[2] if len(logged) > 2 else None
        assert isinstance(created, GameCreated) and isinstance(joined, SeatJoined)
        return create_game(
            edition=created.edition,
            seats=created.seats,
            modules=created.modules,
            game_data=record.game_data,
            server_seed=seed,
            player=batch.player_id,
            entropy=joined.entropy,
        )
    if batch.kind == "join":
        joined = logged[0]
        assert isinstance(joined, SeatJoined)
        return join_game(state, batch.player_id, joined.entropy)
    if batch.kind == "commands" and batch.seat is not None:
        return decide_all(state, batch.seat, batch.commands)[0]
    raise IllegalCommand("unknown_append", "R50", f"an append of unknown kind {batch.kind!r}")

"""An append of the store as a game record tells it (`RecordCommand`), from the metadata the
command path kept with it: for the server's records and `patrician check-rules`. Apart from
`evidence.record` so that the offline audit, which reads records only, imports nothing of
the store's Redis side."""

from __future__ import annotations

from evidence.record import RecordCommand
from store.games import client_command_id
from store.stored import Batch, meta_decoder


def command_of(batch: Batch) -> RecordCommand:
    """The record's entry of one append."""
    meta = meta_decoder.decode(batch.metadata)
    return RecordCommand(
        command_id=client_command_id(batch.command_id, meta.player),
        kind=meta.kind,
        player_id=meta.player,
        seat=meta.seat,
        time=meta.time,
        commands=meta.commands,
        first_version=batch.first_version,
        last_version=batch.last_version,
        by=meta.by,
    )

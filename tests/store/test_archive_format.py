"""The archive format round-trips every game and refuses every damaged archive (properties,
with Hypothesis; docs/store.md, "Archive")."""

from __future__ import annotations

import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from store import chain
from store.archive import (
    MAGIC,
    ArchiveBroken,
    ArchivedBatch,
    GameArchive,
    build,
    pack,
    unpack,
)
from store.stored import Batch, StoredEvent


@st.composite
def games(draw: st.DrawFn) -> GameArchive:
    """A game's log of 1-40 events cut into appends, with its chain, ids and metadata."""
    datas = draw(st.lists(st.binary(min_size=1, max_size=60), min_size=1, max_size=40))
    cuts = sorted(draw(st.sets(st.integers(2, max(2, len(datas))), max_size=len(datas) - 1)))
    starts = [1, *cuts]
    ends = [*(start - 1 for start in cuts), len(datas)]
    hashes = chain.extend(chain.ZERO_HASH, 1, datas)
    events = [StoredEvent(v, d, h) for v, (d, h) in enumerate(zip(datas, hashes, strict=True), 1)]
    ids = draw(st.lists(st.text(min_size=1, max_size=20), min_size=len(starts),
                        max_size=len(starts), unique=True))  # fmt: skip
    batches = [
        Batch(command_id, draw(st.binary(max_size=40)), first, last)
        for command_id, first, last in zip(ids, starts, ends, strict=True)
    ]
    digests = {command_id: draw(st.text("0123456789abcdef", max_size=64)) for command_id in ids}
    return build(draw(st.text(min_size=1, max_size=10)), events, batches, digests)


@settings(max_examples=200, deadline=None)
@given(games())
def test_every_game_packs_and_unpacks_to_itself(archive: GameArchive) -> None:
    packed = pack(archive)
    assert packed.startswith(MAGIC)
    assert unpack(packed, archive.game_id) == archive
    assert pack(unpack(packed)) == packed  # the same game packs to the same bytes


@settings(max_examples=300, deadline=None)
@given(games(), st.data())
def test_a_changed_byte_anywhere_in_an_archive_is_refused_or_reads_the_same_game(
    archive: GameArchive, data: st.DataObject
) -> None:
    """Refused, or (when the byte only held deflate's padding bits, which no decoder reads,
    such as the unused bits of the stream's last byte) the very same game: no change of a
    byte ever reads as another game."""
    packed = bytearray(pack(archive))
    at = data.draw(st.integers(0, len(packed) - 1))
    packed[at] ^= data.draw(st.integers(1, 255))
    try:
        unpacked = unpack(bytes(packed), archive.game_id)
    except ArchiveBroken:
        return
    assert unpacked == archive
    assert zlib.decompress(bytes(packed[len(MAGIC) :])) == zlib.decompress(
        pack(archive)[len(MAGIC) :]
    )


@settings(max_examples=200, deadline=None)
@given(games(), st.data())
def test_an_archive_cut_short_or_run_on_is_refused(
    archive: GameArchive, data: st.DataObject
) -> None:
    packed = pack(archive)
    cut = data.draw(st.integers(0, len(packed) - 1))
    with pytest.raises(ArchiveBroken):
        unpack(packed[:cut])
    with pytest.raises(ArchiveBroken):
        unpack(packed + data.draw(st.binary(min_size=1, max_size=8)))


def _repacked(archive: GameArchive) -> bytes:
    """An archive whose body was changed before compressing: well-formed, wrong inside."""
    from store.archive import LEVEL, _encoder

    return MAGIC + zlib.compress(_encoder.encode(archive), LEVEL)


@settings(max_examples=200, deadline=None)
@given(games(), st.data())
def test_an_archive_whose_events_or_appends_were_rewritten_is_refused(
    archive: GameArchive, data: st.DataObject
) -> None:
    version = data.draw(st.integers(0, archive.version - 1))
    datas = list(archive.datas)
    datas[version] = datas[version] + b" "  # an event changed, its chain hash left as it was
    with pytest.raises(ArchiveBroken, match="chain"):
        unpack(_repacked(GameArchive(archive.game_id, datas, archive.hashes, archive.batches)))
    dropped = archive.batches[:-1] if len(archive.batches) > 1 else []
    with pytest.raises(ArchiveBroken):
        unpack(_repacked(GameArchive(archive.game_id, archive.datas, archive.hashes, dropped)))
    with pytest.raises(ArchiveBroken, match="game"):
        unpack(pack(archive), archive.game_id + "x")
    if len(archive.batches) > 1:
        twice = [archive.batches[0], *archive.batches[1:-1], _renamed(archive.batches[-1],
                 archive.batches[0].command_id)]  # fmt: skip
        with pytest.raises(ArchiveBroken, match="two appends"):
            unpack(_repacked(GameArchive(archive.game_id, archive.datas, archive.hashes, twice)))


def _renamed(batch: ArchivedBatch, command_id: str) -> ArchivedBatch:
    return ArchivedBatch(
        command_id, batch.metadata, batch.first_version, batch.last_version, batch.digest
    )

"""Archives kept as files in a folder the operator names (`PATRICIAN_ARCHIVE_DIR`), so that a
finished game takes almost no Redis memory at all (docs/store.md, "Archive in a folder").

With a folder, the archive key of a game holds a reference instead of the archive: the
first line `REFERENCE`, then the SHA-256 of the archive's bytes in hex. The file is named by
that digest (content-addressed: writing it twice writes the same file, and a file cannot be
swapped for another without the reference failing to match). The reference stays in Redis,
under the game's hash tag, so the append script still sees the game as archived and refuses
what the live game would have taken, exactly as with an archive in Redis.

A file is written whole or not at all (a temporary file, fsync'd, renamed, the folder
fsync'd) and read back before the reference is set; the reading process checks the digest
before it unpacks. A folder on a network file system or an object store mounted as one serves
the same way; the folder must be the same for every process of a deployment.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from pathlib import Path

REFERENCE = b"patrician-archive-file 1\n"
"""The first line of an archive key that names a file rather than holding the archive."""
_DIGEST = re.compile(rb"[0-9a-f]{64}")


class ShelfBroken(ValueError):
    """A reference that does not read, or a file that is missing or not the one it names."""


class Shelf:
    """The folder of the archive files of one deployment."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def path(self, digest: str) -> Path:
        """Where the file of that digest lives (256 subfolders by its first two digits)."""
        return self.folder / digest[:2] / f"{digest}.archive"

    def put(self, packed: bytes) -> bytes:
        """Write the archive `packed` durably and read it back; the reference to keep in its
        archive key."""
        digest = hashlib.sha256(packed).hexdigest()
        target = self.path(digest)
        if not (target.exists() and target.read_bytes() == packed):
            target.parent.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(dir=target.parent, suffix=".part")
            try:
                with os.fdopen(handle, "wb") as out:
                    out.write(packed)
                    out.flush()
                    os.fsync(out.fileno())
                os.replace(temporary, target)
            except BaseException:
                Path(temporary).unlink(missing_ok=True)
                raise
            directory = os.open(target.parent, os.O_RDONLY)
            try:
                os.fsync(directory)
            finally:
                os.close(directory)
        if target.read_bytes() != packed:
            raise ShelfBroken(f"{target} does not read back as written")
        return REFERENCE + digest.encode()

    def get(self, reference: bytes) -> bytes:
        """The archive's bytes a reference names, checked against its digest."""
        digest = reference.removeprefix(REFERENCE)
        if not _DIGEST.fullmatch(digest):
            raise ShelfBroken("its reference names no archive file")
        path = self.path(digest.decode())
        try:
            packed = path.read_bytes()
        except OSError as error:
            raise ShelfBroken(f"its archive file {path} does not read: {error}") from None
        if hashlib.sha256(packed).hexdigest().encode() != digest:
            raise ShelfBroken(f"its archive file {path} is not the one its reference names")
        return packed


def is_reference(value: bytes) -> bool:
    """Whether an archive key's value names a file rather than holding the archive."""
    return value.startswith(REFERENCE)

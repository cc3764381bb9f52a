"""Games written as the store wrote them before the lean form (docs/store.md, "Stream
entries"): hex hashes in `h`, metadata as JSON in `m`, command memos under the command ids,
a hex head. Written by the store's former append script itself (`old_append.lua`, its code
unchanged), so that the tests read real old games rather than a guess at them."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from store import chain
from store.appending import default_digest
from store.client import EventStore
from store.stored import Batch, StoredEvent

SCRIPT = (Path(__file__).parent / "old_append.lua").read_text(encoding="utf-8")


def write_old_game(
    store: EventStore,
    game_id: str,
    events: Sequence[StoredEvent],
    batches: Sequence[Batch],
    digests: dict[str, str] | None = None,
) -> None:
    """Append `batches` of `events` to `game_id` with the former script, each batch as the
    former client sent it (its request digest from `digests`, else the default one)."""
    client: Any = store.client
    keys = store.keys.game(game_id)
    script = client.register_script(SCRIPT)
    previous = chain.ZERO_HASH
    for number, batch in enumerate(batches):
        datas = [e.data for e in events[batch.first_version - 1 : batch.last_version]]
        hashes = chain.extend(previous, batch.first_version, datas)
        digest = (digests or {}).get(batch.command_id) or default_digest(
            batch.first_version - 1, datas
        )
        last, head = batch.last_version, hashes[-1]
        args: list[Any] = [
            game_id, f"{batch.first_version - 1} {previous}", batch.command_id, batch.metadata,
            f"{batch.first_version} {last} {head} old{number} {digest}", f"{last} {head}",
            len(datas),
        ]  # fmt: skip
        for version, data, link in zip(
            range(batch.first_version, last + 1), datas, hashes, strict=True
        ):
            args += (f"{version}-1", data, link)
        assert script(keys=[keys.events, keys.commands, keys.outbox], args=args) == [b"ok"]
        previous = head

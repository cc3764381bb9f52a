"""Each player's inbox: one entry per game they are at, kept by the workers after every append
(`projections.inbox` makes the entry), so that `/api/me/games` is one read however many games
a player has. The entry carries the version it reflects, and is written only over an older one
(`inbox.lua`): an append's follow-up applied twice writes what it wrote, and one applied late
changes nothing. Store operations
in the style of `store.protocol`.
"""

from __future__ import annotations

import msgspec

from domain.events import Edition, GameEnded, Module, Step
from domain.view import ClockView
from store.protocol import Call, Op, evaluate, reply_text


class InboxEntry(msgspec.Struct, frozen=True):
    """A game as one of its players sees it in their list (docs/api.md, `/api/me/games`)."""

    game_id: str
    edition: Edition
    seats: int
    modules: tuple[Module, ...]
    phase: str
    seat: int | None
    your_decision: bool
    step: Step | None
    version: int
    since: str | None
    """When the game started waiting for its current decision (UTC, ISO 8601)."""
    result: GameEnded | None = None
    clock: ClockView | None = None
    names: tuple[str, ...] = ()
    """The names of the players at the table in the order they joined (its creator first),
    as the board's `names`."""
    seat_names: tuple[str, ...] = ()
    """Each seat's player's name, seat 0 first, once the seats are drawn (empty before)."""
    ended: str | None = None
    """When the game ended, or was called off (UTC, ISO 8601); null while it is on."""


_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder(InboxEntry)


def inbox_key(prefix: str, player_id: str) -> str:
    return f"{prefix}:inbox:{player_id}"


def project_op(prefix: str, player_id: str, entry: InboxEntry) -> Op[bool]:
    """Write the entry, unless the inbox holds one of this game for a later version; whether
    it was written."""
    written = yield from evaluate(
        "inbox",
        1,
        (inbox_key(prefix, player_id), entry.game_id, entry.version, _encoder.encode(entry)),
    )
    return bool(written)


def inbox_op(prefix: str, player_id: str) -> Op[list[InboxEntry]]:
    """Every entry of the player's inbox (in no order); one that does not read is left out."""
    found = yield Call("hgetall", (inbox_key(prefix, player_id),))
    entries = []
    for value in found.values():
        _version, _, body = reply_text(value).partition(" ")
        try:
            entries.append(_decoder.decode(body))
        except msgspec.DecodeError:  # written by a newer server, say: the next append mends it
            continue
    return entries


def replace_inbox_op(prefix: str, player_id: str, entries: list[InboxEntry]) -> Op[None]:
    """Put these entries in place of the player's whole inbox (a rebuild): written over what
    is there, then the games not among them taken off, so that a reader never sees it empty."""
    key = inbox_key(prefix, player_id)
    if entries:
        mapping = {e.game_id: f"{e.version} ".encode() + _encoder.encode(e) for e in entries}
        yield Call("hset", (key, None, None, mapping))
    kept = {e.game_id for e in entries}
    stale = [g for g in map(reply_text, (yield Call("hkeys", (key,)))) if g not in kept]
    if stale:
        yield Call("hdel", (key, *stale))

"""Table talk: each game's short message thread, a stream of its own beside the game's (never
in the rules log: a message changes nothing in the game and is not in its record). Store
operations in the style of `store.protocol`."""

from __future__ import annotations

import msgspec

from store.protocol import Call, Op, reply_text

KEPT = 500
"""The messages a game's thread keeps (the newest)."""


class TalkMessage(msgspec.Struct, frozen=True):
    id: str
    """Its place in the thread (the stream id): `?after=` reads what came after it."""
    seat: int
    name: str
    text: str
    time: str
    """When the server took it (UTC, ISO 8601)."""


def talk_key(prefix: str, game_id: str) -> str:
    return f"{prefix}:talk:{game_id}"


def rate_key(prefix: str, game_id: str, player_id: str) -> str:
    return f"{prefix}:talk-rate:{game_id}:{player_id}"


def count_message_op(prefix: str, game_id: str, player_id: str, window: int) -> Op[int]:
    """Count one more message of the player in this game in the current `window` seconds;
    how many that makes."""
    key = rate_key(prefix, game_id, player_id)
    count = int((yield Call("incr", (key,))))
    if count == 1:
        yield Call("expire", (key, window))
    return count


def post_op(prefix: str, game_id: str, message: TalkMessage) -> Op[str]:
    """Add a message to the thread (its `id` is made here); its id."""
    fields = {"s": str(message.seat), "n": message.name, "t": message.text, "w": message.time}
    added = yield Call("xadd", (talk_key(prefix, game_id), fields, "*", KEPT, True))
    return reply_text(added)


def thread_op(
    prefix: str, game_id: str, after: str = "0-0", count: int = 100
) -> Op[list[TalkMessage]]:
    """The messages after the id `after`, oldest first (at most `count`)."""
    start = "-" if after == "0-0" else f"({after}"
    found = yield Call("xrange", (talk_key(prefix, game_id), start, "+", count))
    return [
        TalkMessage(
            reply_text(entry_id),
            int(fields[b"s"]),
            fields[b"n"].decode(),
            fields[b"t"].decode(),
            fields[b"w"].decode(),
        )
        for entry_id, fields in found
    ]

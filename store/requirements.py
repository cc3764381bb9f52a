"""What a player must show to join a table (`domain.view.TableRequirements`): set once, when
the game is created, and kept beside it as its clock is (`store.time_controls`), not in its
rules log (no rule of the game: the server checks it at each join). Store operations in the
style of `store.protocol`."""

from __future__ import annotations

import msgspec

from domain.view import TableRequirements
from store.protocol import Call, Op

_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder(TableRequirements)


def requirements_key(prefix: str, game_id: str) -> str:
    return f"{prefix}:requirements:{game_id}"


def set_requirements(prefix: str, game_id: str, requirements: TableRequirements) -> Call:
    """The write that keeps a new table's requirements (made with its creation, before its
    append, as its clock: whoever sees the table sees them)."""
    return Call("set", (requirements_key(prefix, game_id), _encoder.encode(requirements)))


def requirements_op(prefix: str, game_id: str) -> Op[TableRequirements | None]:
    """The table's requirements, or None: anyone may join."""
    raw = yield Call("get", (requirements_key(prefix, game_id),))
    return None if raw is None else _decoder.decode(raw)

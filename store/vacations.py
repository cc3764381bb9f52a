"""Players' vacations: while one lasts, the player's clocks stand still in every timed game
(`projections.timekeeping`). Each player's are kept under their record as a list of (start,
end) in seconds since the epoch, in order; a vacation ended early is cut at that moment.
Store operations in the style of `store.protocol`."""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from store.accounts import Accounts
from store.protocol import Call, Op

Vacations = tuple[tuple[float, float], ...]

_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder(Vacations)


def vacations_key(accounts: Accounts, player_id: str) -> str:
    return f"{accounts.player(player_id)}:away"


def vacations_op(accounts: Accounts, players: Sequence[str]) -> Op[list[Vacations]]:
    """Each player's vacations, in the order of `players`."""
    if not players:
        return []
    keys = [vacations_key(accounts, player) for player in players]
    if accounts.cluster:  # the players' keys lie in several slots: MGET needs one
        found = []
        for key in keys:
            found.append((yield Call("get", (key,))))
    else:
        found = yield Call("mget", (keys,))
    return [() if raw is None else _decoder.decode(raw) for raw in found]


def set_vacations_op(accounts: Accounts, player_id: str, vacations: Vacations) -> Op[None]:
    yield Call("set", (vacations_key(accounts, player_id), _encoder.encode(vacations)))

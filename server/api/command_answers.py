"""The answer to `POST /api/games/{game_id}/commands`, made alike by the command lane and the
Litestar route that documents it: the acceptance, encoded, and the sender's board when the
request asks for it (`?include=board`), so that a client need not read the board after each
command (one request instead of two, the board's bytes the ones its GET would send)."""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from server.schema import requests
from server.schema.errors import BadParameter
from server.services.bundle import Services

BOARD = "board"
"""The one thing a command's answer may include."""


def wants_board(included: Sequence[str]) -> bool:
    """Whether the query's `include` values (each one given) ask for the board; refused,
    naming `include`, if they ask for anything else."""
    if not included:
        return False
    if list(included) != [BOARD]:
        raise BadParameter("include", f"a command's answer may include `{BOARD}` only, once")
    return True


async def command_answer(
    services: Services, game_id: str, player: str, data: requests.SendCommands, *, board: bool
) -> bytes:
    """The commands executed; their answer's JSON, with the board as it stands now if asked."""
    answer = msgspec.json.encode(await services.games.execute(game_id, player, data))
    if not board:
        return answer
    shown = await services.games.board(game_id, player)
    return answer[:-1] + b',"board":' + shown.body + b"}"

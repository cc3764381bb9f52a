"""Table talk: a short message thread per game, beside its log (`store.talk`).

The seated players read and write it, at the table, in play and after the end; once it is
over anyone may read it (as anyone may read everything of a finished game). A message is
cleaned like a name (`domain.names.clean_text`: nothing that hides or reorders text; its line
breaks kept), at most `MAX_TALK` characters, and each player may send `RATE` messages a minute
per game (429 and `Retry-After` beyond). Clients must escape it wherever they show it, as the
e-mails do.
"""

from __future__ import annotations

import re

import msgspec
from litestar.exceptions import HTTPException

from domain.names import clean_text
from server.schema.errors import BadParameter
from server.schema.limits import MAX_TALK, MESSAGE_ID
from server.services.accounts import AccountService
from server.services.games import GameService
from store.clock import iso
from store.errors import NotSeated
from store.talk import TalkMessage, count_message_op, post_op, thread_op

RATE = 5
"""Messages a player may send in one game in `WINDOW_SECONDS`."""
WINDOW_SECONDS = 60
_ID = re.compile(MESSAGE_ID)
LAST = 2**64 - 1
"""The largest either number of a message id may be: Redis keeps each in 64 bits, where the
id's pattern allows 20 digits."""


class TalkService:
    def __init__(self, games: GameService, accounts: AccountService) -> None:
        self.games, self.accounts = games, accounts
        self.prefix = games.listings.prefix

    async def post(self, game_id: str, player: str, text: str) -> TalkMessage:
        """Say something to the table (only its seated players may)."""
        cleaned = clean_text(text, field="text", limit=MAX_TALK, lines=True)
        seat = (await self.games.state(game_id)).seat_of(player)
        if seat is None:
            raise NotSeated(game_id)
        sent = await self.games.run(count_message_op(self.prefix, game_id, player, WINDOW_SECONDS))
        if sent > RATE:
            raise HTTPException(
                status_code=429, detail=f"at most {RATE} messages a minute in one game",
                headers={"Retry-After": str(WINDOW_SECONDS)},
            )  # fmt: skip
        name = await self.accounts.name_of(player)
        message = TalkMessage("", seat, name, cleaned, iso(self.games.clock()))
        message_id = await self.games.run(post_op(self.prefix, game_id, message))
        return msgspec.structs.replace(message, id=message_id)

    async def thread(self, game_id: str, viewer: str | None, after: str) -> list[TalkMessage]:
        """The messages after `after`: for the seated players, for anyone once it is over."""
        if not _ID.fullmatch(after):
            raise BadParameter("after", "a message id is two whole numbers joined by '-'")
        state = await self.games.state(game_id)
        if not state.finished and (viewer is None or state.seat_of(viewer) is None):
            raise NotSeated(game_id)
        stream_id = _stream_id(after)
        if stream_id is None:
            return []
        return await self.games.run(thread_op(self.prefix, game_id, stream_id))


def _stream_id(after: str) -> str | None:
    """A message id as Redis reads one (each number at most `LAST`: a larger sequence number
    reads as the largest, since no message comes between), or None when no message can come
    after it."""
    time, sequence = (int(number) for number in after.split("-"))
    if time > LAST or (time == LAST and sequence >= LAST):
        return None
    return f"{time}-{min(sequence, LAST)}"

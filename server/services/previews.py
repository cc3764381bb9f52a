"""A staged turn, previewed: the board a seat would see after commands it has not sent, for
the web page that stages a turn step by step (play a card, place a floor, take a card) and
shows the legal options of each next step with no copy of the rules in JavaScript.

The commands are decided as `POST /commands` decides them (`store.games.preview_op` takes the
same path: the same refusals, in the same order) and nothing is appended. Nothing hidden is
shown: where the commands turn up a hidden card (R42: a refill, the Architetto's reveal) or
end the game, the answer holds no board (`ends_batch`), since a batch ends there (a command
after it is refused); the seat sends the batch and sees what came.
"""

from __future__ import annotations

import msgspec

from domain.decide import turns_up_a_card
from domain.view import View
from projections.timekeeping import planned_append
from server.schema import requests
from server.services.games import GameService
from store.clock import iso
from store.games import preview_op


class Preview(msgspec.Struct, frozen=True):
    version: int | None
    """The version the game would be at after the commands; null when `ends_batch` (what
    follows a card turned up, the Architetto's floors and scorings, hangs on that card: even
    the number of its events would tell of it)."""
    view: View | None
    """Your board after them, as `GET /api/games/{id}` would show it then (with the legal
    commands of the next decision, and in a timed game the clocks as if they were sent now);
    null when `ends_batch`."""
    ends_batch: bool
    """The last command turns up a hidden card or ends the game: nothing can be staged after
    it; send the commands to see what comes."""


class PreviewService:
    def __init__(self, games: GameService) -> None:
        self.games = games

    async def preview(
        self, game_id: str, player: str, request: requests.PreviewCommands
    ) -> Preview:
        now = iso(self.games.clock())
        decided = await self.games.run(
            preview_op(
                self.games.path,
                game_id,
                player=player,
                expected_version=request.expected_version,
                commands=request.commands,
            )
        )
        after = decided.after
        if after.finished or turns_up_a_card(decided.events):
            return Preview(None, None, True)
        planned = planned_append(decided.seat, now, decided.state.version + 1)
        shown = await self.games.shown(game_id, after, decided.seat, planned=planned)
        return Preview(after.version, shown, False)

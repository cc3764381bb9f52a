"""Rematch: one click by a player of a finished game sets a new table for the same players.

The new game has the old one's seats, edition, modules and clock, and bots of the same
levels in the places bots held; whoever asks first creates it (holds its first place), and
the other people of the old game are invited: the old game's board shows each of its players
the offer with the code that opens the new table (`GameService.board`), as a waiting table's
board gives its code to the players at it. One rematch per game: the new game's id is claimed
on the old game first (`store.rematch`), then the game is created through the same service
path as `POST /api/games`, under that id, so that whoever asks again, or at the same moment,
is answered the same table (`repeated`), and a creation cut short is finished by the next ask.
"""

from __future__ import annotations

from domain.state import State
from server.schema import answers, requests
from server.schema.errors import GameNotOver
from server.services.accounts import AccountService
from server.services.games import GameService
from store import accounts
from store.errors import NotSeated
from store.rematch import Rematch, claim_op


class RematchService:
    def __init__(self, games: GameService, players: AccountService) -> None:
        self.games, self.players = games, players

    async def rematch(self, game_id: str, player: str) -> answers.RematchCreated:
        """The rematch of a finished game, for one of its players: made now, or the one made
        before (`repeated`)."""
        state = await self.games.state(game_id)
        if player not in state.players:
            raise NotSeated(game_id)
        if state.phase != "over":
            raise GameNotOver(state.phase)
        name = await self.players.name_of(player)
        asked = Rematch("g" + self.games.token_bytes(9).hex(), player, name)
        rematch = await self.games.run(claim_op(self.games.listings.prefix, game_id, asked))
        table = await self._same_table(game_id, state)
        # As its creator, whoever asks: the same request each time, so that a creation cut
        # short (or still on its way for the one who asked first) is made once, never twice.
        created = await self.games.create(rematch.by, table, game_id=rematch.game_id)
        return answers.RematchCreated(
            created.game_id,
            created.invite_code,
            created.seed_commitment,
            created.version,
            created.receipt,
            rematch != asked,
            game_id,
            rematch.by,
            rematch.name,
        )

    async def _same_table(self, game_id: str, state: State) -> requests.NewGame:
        """The options of the finished game as a creation asks for them: its bots in the
        order they joined it (so numbered alike when a level comes twice)."""
        keys = self.games.listings
        found = await self.games.run(accounts.players_op(keys, list(state.players)))
        bots = [
            requests.BotSeat(found[player].bot)  # type: ignore[arg-type]  # a level it played
            for player in state.players
            if player in found and found[player].bot
        ]
        control = await self.games.timing.time_control(game_id)
        clock = None
        if control is not None:
            clock = requests.ClockSetting(
                per_move_hours=control.per_move_hours,
                bank_hours=control.bank_hours,
                max_bank_hours=control.max_bank_hours,
                on_timeout=control.on_timeout,  # type: ignore[arg-type]  # a level it took
                hand_over_after=control.hand_over_after,
            )
        board = state.board
        return requests.NewGame(
            seats=board.seats,
            edition=board.edition,
            modules=list(board.modules),
            bots=bots,
            clock=clock,
        )

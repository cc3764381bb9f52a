"""A player's page (`GET /api/players/{id}/profile`): their games, their rating's history and
their reliability record, from what is kept beside the games; reading only.

What it costs: the player's list and inbox (one round trip, as `/api/me/games`), the states
of the page's games and their players' records (one round trip each, gathered), the rated
games' records and the finished games' turns (one HMGET each), their accuracy in each analysed
game (one HGETALL), and the log's append metadata
of each game in the record's window that is still in play (or finished before its turns were
kept), each kept here by game, version and seat so that it is read again only once the game
moved on.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import msgspec
from cachetools import LRUCache

from domain.events import GameEnded, SeatScore
from domain.narrate import seat_names
from domain.state import State
from domain.view import TableRequirements
from projections.ratings import NEW, provisional, shown
from projections.reliability import WINDOW, Record, record_of, seat_turns
from projections.timekeeping import appends
from server.schema import answers
from server.schema.errors import NotAdmitted, NotFound
from server.services.listings import ListingService
from server.services.ratings import RatingService
from store import accounts, reads
from store.analysis import GameAccuracy, accuracies_op
from store.client import AsyncEventStore
from store.command_path import CommandPath
from store.errors import GameNotFound
from store.inbox import InboxEntry
from store.ratings import rated_games_op, ratings_op
from store.reliability import GameTurns, SeatTurns, quiet_marks_op, turns_op
from store.vacations import vacations_op

HISTORY = 500
"""The most rated games a page's rating history shows (the latest)."""
STARTED = ("playing", "over")


class ProfileService:
    def __init__(
        self,
        store: AsyncEventStore,
        path: CommandPath,
        keys: accounts.Accounts,
        listings: ListingService,
        ratings: RatingService,
        *,
        cache_size: int = 4096,
    ) -> None:
        self.store = store
        self.path = path
        self.keys = keys
        self.listings = listings
        self.ratings = ratings
        self._turns: LRUCache[tuple[str, int, int], SeatTurns] = LRUCache(cache_size)

    async def profile(self, player_id: str, offset: int, limit: int) -> answers.PlayerProfile:
        """The page of a player (`NotFound` for an unknown id): their games from `offset`,
        `limit` of them, the latest change first."""
        found = await self.store.run(accounts.players_op(self.keys, [player_id]))
        if player_id not in found:
            raise NotFound(f"no player has the id {player_id!r}")
        player = found[player_id]
        entries = _latest_first(await self.listings.entries_of(player_id))
        page = entries[offset : offset + limit]
        rating, history, record, games, accuracies = await asyncio.gather(
            self.store.run(ratings_op(self.ratings.ratings, [player_id])),
            self._history(player_id, entries),
            self._record(player_id, entries, bot_player=bool(player.bot)),
            self._games(player_id, page),
            self.store.run(accuracies_op(self.keys.prefix, player_id)),
        )
        rated = rating[player_id]
        games = tuple(
            msgspec.structs.replace(game, accuracy=accuracies[game.game_id].accuracy)
            if game.game_id in accuracies else game
            for game in games
        )  # fmt: skip
        return answers.PlayerProfile(
            player_id, player.name, player.bot, shown(rated) if rated.games else None,
            provisional(rated), rated.games, rated.sigma if rated.games else None, history,
            _record_answer(record), len(entries), offset, games, _accuracy(accuracies),
        )  # fmt: skip

    async def record(self, player_id: str) -> Record:
        """The player's reliability record (for a table's minimum: `server.services.games`)."""
        found = await self.store.run(accounts.players_op(self.keys, [player_id]))
        bot = player_id in found and bool(found[player_id].bot)
        entries = _latest_first(await self.listings.entries_of(player_id))
        return await self._record(player_id, entries, bot_player=bot)

    async def admit(self, player_id: str, required: TableRequirements) -> None:
        """Raises `NotAdmitted` unless the player meets the table's requirements: the rating
        shown (provisional or not: it is the careful estimate, never above the skill it
        stands for; one never rated shows 1000) and the reliability record (one with no turn
        yet meets any)."""
        if required.min_rating is not None:
            found = await self.store.run(ratings_op(self.ratings.ratings, [player_id]))
            rating = shown(found.get(player_id, NEW)) if found[player_id].games else shown(NEW)
            if rating < required.min_rating:
                raise NotAdmitted(
                    "below_minimum_rating", "requirements.min_rating",
                    f"this table asks a rating of at least {required.min_rating} of those "
                    f"who join; yours is {rating}",
                )  # fmt: skip
        most = required.max_timeouts_per_100
        if most is not None:
            record = await self.record(player_id)
            per_100 = record.per_100
            if per_100 is not None and per_100 > most:
                raise NotAdmitted(
                    "too_many_timeouts", "requirements.max_timeouts_per_100",
                    f"this table asks of those who join at most {most:g} turns timed out "
                    f"per 100; yours is {per_100:g} ({record.timed_out} of {record.turns} "
                    f"turns over your last {record.games} games)",
                )  # fmt: skip

    async def _history(
        self, player_id: str, entries: Sequence[InboxEntry]
    ) -> tuple[answers.RatingPoint, ...]:
        over = [entry.game_id for entry in entries if entry.phase == "over"]
        found = await self.store.run(rated_games_op(self.ratings.ratings, over))
        rated = sorted(
            (game for game in found.values() if player_id in game.after),
            key=lambda game: (game.ended, game.game_id),
        )[-HISTORY:]
        points = []
        for game in rated:
            after, before = game.after[player_id], game.before[player_id]
            change = shown(after) - shown(before)
            points.append(
                answers.RatingPoint(game.game_id, game.ended, shown(after), change, after.games)
            )
        return tuple(points)

    async def _record(
        self, player_id: str, entries: Sequence[InboxEntry], *, bot_player: bool
    ) -> Record:
        """The record over the player's latest `WINDOW` games in play or over."""
        window = [e for e in entries if e.phase in STARTED and e.seat is not None][:WINDOW]
        prefix = self.keys.prefix
        kept, (away,), quiet = await asyncio.gather(
            self.store.run(turns_op(prefix, [e.game_id for e in window if e.phase == "over"])),
            self.store.run(vacations_op(self.keys, [player_id])),
            self.store.run(quiet_marks_op(self.keys, player_id)),
        )
        seats = await asyncio.gather(
            *(self._seat_turns(entry, kept, player_id, bot_player) for entry in window)
        )
        return record_of(
            [(entry.game_id, seat) for entry, seat in zip(window, seats, strict=True)],
            away, quiet,
        )  # fmt: skip

    async def _seat_turns(
        self, entry: InboxEntry, kept: dict[str, GameTurns], player_id: str, bot_player: bool
    ) -> SeatTurns:
        """The player's seat's turns in a game: kept once it is over, else from its log."""
        assert entry.seat is not None
        game = kept.get(entry.game_id)
        seats = game.seats if game is not None else ()
        if entry.seat < len(seats) and seats[entry.seat].player == player_id:
            return seats[entry.seat]
        key = (entry.game_id, entry.version, entry.seat)
        turns_read = self._turns.get(key)
        if turns_read is None:
            batches = await self.store.run(reads.batches_op(self.path, entry.game_id))
            log = appends([batch for batch in batches if batch.last_version <= entry.version])
            deciding = entry.seat if entry.your_decision else None
            turns_read = self._turns[key] = seat_turns(
                log, entry.seat, player_id, bot_player=bot_player, deciding=deciding
            )
        return turns_read

    async def _games(
        self, player_id: str, page: Sequence[InboxEntry]
    ) -> tuple[answers.ProfileGame, ...]:
        states = await asyncio.gather(*(self._state(entry.game_id) for entry in page))
        everyone = sorted({p for state in states if state is not None for p in state.players})
        found = await asyncio.gather(
            *(self.store.run(accounts.players_op(self.keys, [p])) for p in everyone)
        )
        bots = {p: record.bot for each in found for p, record in each.items()}
        return tuple(
            _game(entry, state, player_id, bots)
            for entry, state in zip(page, states, strict=True)
            if state is not None
        )

    async def _state(self, game_id: str) -> State | None:
        try:
            return await self.store.run(reads.current_op(self.path, game_id))
        except GameNotFound:
            return None


def _accuracy(accuracies: dict[str, GameAccuracy]) -> answers.AccuracyRecord:
    """The accuracy over every analysed game: each game's weighted by its judged decisions."""
    decisions = sum(each.own_decisions for each in accuracies.values())
    if not decisions:
        return answers.AccuracyRecord(0, 0, None)
    mean = sum(each.accuracy * each.own_decisions for each in accuracies.values()) / decisions
    return answers.AccuracyRecord(len(accuracies), decisions, round(mean, 1))


def _latest_first(entries: Sequence[InboxEntry]) -> list[InboxEntry]:
    """The games of a page, open tables, in play and over (none called off), the latest
    change first."""
    shown_ones = [entry for entry in entries if entry.phase != "cancelled"]
    return sorted(shown_ones, key=lambda e: (e.since or "", e.game_id), reverse=True)


def _game(
    entry: InboxEntry, state: State, player_id: str, bots: dict[str, str]
) -> answers.ProfileGame:
    """A game as the page shows it: nothing hidden, no live score."""
    seat = state.seat_of(player_id)
    if state.seat_players:
        order = [state.seat_players[s] for s in range(len(state.seat_players))]
        names = seat_names(state)
        players = tuple(
            answers.ProfilePlayer(state.players[i], names[s], s, bots.get(state.players[i], ""))
            for s, i in enumerate(order)
        )
    else:
        players = tuple(
            answers.ProfilePlayer(p, name, None, bots.get(p, ""))
            for p, name in zip(state.players, state.names, strict=False)
        )
    over = state.phase == "over" and state.result is not None
    result = state.result if over else None
    return answers.ProfileGame(
        entry.game_id, state.phase, state.board.edition, state.board.seats, state.board.modules,
        seat, players, entry.since, entry.since if over else None,
        _standing(result, seat, state.board.seats) if result is not None else None, result,
    )  # fmt: skip


def _standing(result: GameEnded, seat: int | None, seats: int) -> answers.Standing | None:
    """Where the seat placed among the players (the Architetto's row left out): first if it
    won, else after every winner and every seat ahead of it by points, then floors (R37)."""
    rows = [score for score in result.scores if score.seat < seats]
    mine = next((score for score in rows if score.seat == seat), None)
    if mine is None:
        return None
    won = mine.seat in result.winners

    def ahead(other: SeatScore) -> bool:
        if won or other.seat in result.winners:
            return not won
        return (other.total, -other.floors_on_board) > (mine.total, -mine.floors_on_board)

    place = 1 + sum(1 for other in rows if other.seat != mine.seat and ahead(other))
    return answers.Standing(place, len(rows), mine.total, won)


def _record_answer(record: Record) -> answers.ReliabilityRecord:
    return answers.ReliabilityRecord(
        WINDOW, record.games, record.turns, record.timed_out, record.per_100, record.excused,
        record.handed_over,
    )  # fmt: skip

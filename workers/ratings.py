"""Ratings kept up to date: a finished game rated exactly once by the follow-up of its end,
and every rating made again from the event streams (`patrician rebuild-projections`).

Both go through `rate_game`, which rates a game where it falls in the order the games ended
(`projections.ratings.rerate`, `store.ratings`): so the follow-ups, whatever order followers
meet the ends in, leave the figures the rebuild makes.
"""

from __future__ import annotations

from domain.state import State
from projections.ratings import rerate, shown, standings
from store.client import EventStore
from store.errors import GameNotFound
from store.handovers import handovers_op
from store.ratings import RatedGame, RatingKeys, clear_op, ratings_op, reading_op, write_op
from store.reads import current_op, last_change_op
from workers.bot_play import levels_of
from workers.context import WorkerContext

ATTEMPTS = 50
"""How often a rating is worked out again when another was written between its read and its
write (each attempt is a few milliseconds: games end a few times a second at most)."""


def rating_keys(context: WorkerContext) -> RatingKeys:
    return RatingKeys.under(context.accounts.prefix)


def finished_game(
    context: WorkerContext, game_id: str, state: State, ended: str | None
) -> RatedGame | None:
    """The record to rate of a finished game (None: it moves no rating, or is not over)."""
    if state.result is None or ended is None:
        return None
    handed = context.store.run(handovers_op(context.path.context.keys, game_id))
    levels = levels_of(context, game_id, state, {})  # the players' own: bots from the start
    seats = [state.players[index] for index in state.seat_players]
    places = standings(state.result, seats, levels, frozenset(handed))
    return RatedGame(game_id, ended, places) if places else None


def rate_game(store: EventStore, keys: RatingKeys, game: RatedGame) -> bool:
    """Rate a finished game once, in its place in the order of ends; whether it was rated
    now (False: it was already)."""
    for _attempt in range(ATTEMPTS):
        reading = store.run(reading_op(keys, game))
        if reading.rated:
            return False
        names = {place.rated for each in (game, *reading.later) for place in each.places}
        now = store.run(ratings_op(keys, names))
        records, ratings = rerate(now, reading.later, game)
        figures = {name: shown(rating) for name, rating in ratings.items()}
        if store.run(write_op(keys, reading.revision, records, ratings, figures)):
            return True
    raise RuntimeError(f"game {game.game_id}: ratings changed under it {ATTEMPTS} times")


def rebuild_ratings(context: WorkerContext) -> int:
    """Every rating made again from the finished games' event streams, in the order they
    ended; how many games were rated. Safe while followers rate games: the ratings are
    cleared before the games are read, so a game that ends meanwhile is rated by its
    follow-up or here, once either way."""
    context.store.run(clear_op(rating_keys(context)))
    games = []
    for game_id in context.store.game_ids():
        try:
            state = context.store.run(current_op(context.path, game_id))
        except GameNotFound:
            continue
        if state.result is None:
            continue
        ended = context.store.run(last_change_op(context.path, game_id))
        game = finished_game(context, game_id, state, ended)
        if game is not None:
            games.append(game)
    games.sort(key=lambda game: (game.ended, game.game_id))
    keys = rating_keys(context)
    return sum(rate_game(context.store, keys, game) for game in games)

"""Ratings: what a finished game says of the skill of those who played it, and the number shown.

A rating is a belief about a player's skill, a mean `mu` and an uncertainty `sigma`, moved by
each finished game of 2 to 5 seats with openskill's Plackett-Luce model (a free-for-all of
any size, ranks with ties; its default parameters: mu 25, sigma 25/3, beta 25/6, tau 25/300).
Each bot level is rated as one player (`bot:<level>`), so that games against bots count and
give a reference point. Why not Elo: a game of five is not ten duels, and ties are real (R37
leaves a shared win).

How a game ranks its seats (`standings`): by final score, then by the fewest floors on the
board (R36, R37); seats equal on both tie. A seat whose player handed it over for good (they
resigned, or the clock handed it over) ranks last, whatever the bot made of it afterwards,
and the bot that took it over is not rated on it. The Architetto (R49) is no player: the
players rank among themselves. A game with no person in it (bots only) changes nothing; a
bot level that held several seats of a game is rated on its best-placed one, its other seats
left out.

Shown as one number (`shown`): 1000 + 40 * (mu - 3 * sigma), rounded, the conservative
estimate (a player is at least that good, with about 99.9 % confidence) on a scale like
chess ratings: every newcomer starts at 1000, and one beta of skill (two chances in three to
beat a player that much weaker in a duel, once both are well known) is 167 points. A rating
of fewer than `PROVISIONAL_GAMES` games is marked provisional.

Pure: no clock, no I/O. The store keeps ratings in the order the games ended
(`store.ratings`), so that folding every finished game again gives the same figures.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import msgspec
from openskill.models import PlackettLuce

from domain.events import GameEnded
from store.ratings import Place, RatedGame, Rating

MODEL = PlackettLuce()
"""The model with its default parameters (docs/api.md, "Ratings")."""
PROVISIONAL_GAMES = 5
"""A rating of fewer games than this is shown as provisional."""
BOT_PREFIX = "bot:"
NEW = Rating(MODEL.mu, MODEL.sigma, 0)


def shown(rating: Rating) -> int:
    """The one number people see: the conservative estimate, scaled (see the module)."""
    return round(1000 + 40 * (rating.mu - 3 * rating.sigma))


def provisional(rating: Rating) -> bool:
    return rating.games < PROVISIONAL_GAMES


def bot_identity(level: str) -> str:
    return f"{BOT_PREFIX}{level}"


def standings(
    result: GameEnded,
    seat_players: Sequence[str],
    bot_levels: Mapping[str, str],
    handed_over: frozenset[str] = frozenset(),
) -> tuple[Place, ...]:
    """The places of a finished game that move ratings: one per rated identity, in seat
    order (empty when the game moves no rating: no person played it, or fewer than two
    identities are left). `seat_players`: the player of each seat; `bot_levels`: the level of
    each player that is a bot from the start; `handed_over`: players who handed their seat
    over."""
    keys = {
        score.seat: (-score.total, score.floors_on_board)
        for score in result.scores
        if score.seat < len(seat_players) and seat_players[score.seat] not in handed_over
    }
    order = sorted(set(keys.values()))
    best: dict[str, int] = {}  # in seat order, as dicts keep it
    for seat, player in enumerate(seat_players):
        rank = order.index(keys[seat]) + 1 if seat in keys else len(order) + 1
        level = bot_levels.get(player, "")
        rated = bot_identity(level) if level else player
        best[rated] = min(rank, best.get(rated, rank))
    if len(best) < 2 or all(rated.startswith(BOT_PREFIX) for rated in best):
        return ()
    return tuple(Place(rated, rank) for rated, rank in best.items())


def rate(before: Mapping[str, Rating], places: Sequence[Place]) -> dict[str, Rating]:
    """The ratings of a game's places after it, from theirs before (`NEW` if none)."""
    if not places:
        return {}
    teams = [[MODEL.rating(mu=r.mu, sigma=r.sigma)] for r in (_of(before, p) for p in places)]
    after = MODEL.rate(teams, ranks=[float(place.rank) for place in places])
    return {
        place.rated: Rating(team[0].mu, team[0].sigma, _of(before, place).games + 1)
        for place, team in zip(places, after, strict=True)
    }


def _of(ratings: Mapping[str, Rating], place: Place) -> Rating:
    return ratings.get(place.rated, NEW)


def rerate(
    now: Mapping[str, Rating], later: Sequence[RatedGame], game: RatedGame
) -> tuple[list[RatedGame], dict[str, Rating]]:
    """Rate `game` where it falls in the order of the games' ends: the games rated already
    that ended after it (`later`, in order) are put back to their ratings before, `game` is
    rated, then they are rated again. The records written (`game` first) and the ratings
    they leave. `now`: the ratings now of every identity of these games."""
    ratings = dict(now)
    for done in reversed(later):
        ratings.update(done.before)
    records = []
    for each in (game, *later):
        before = {place.rated: ratings.get(place.rated, NEW) for place in each.places}
        after = rate(before, each.places)
        ratings.update(after)
        records.append(msgspec.structs.replace(each, before=before, after=after))
    touched = {place.rated for each in records for place in each.places}
    return records, {name: ratings[name] for name in sorted(touched)}

"""Where ratings are kept: each rated identity's rating now, each rated game's record, and the
order the games ended in. Store operations in the style of `store.protocol`; the figures are
worked out above (`projections.ratings`), this only keeps them.

Why an order and a revision: a rating depends on every game before it, and the games are
rated in the order they ended, so that rating every finished game again from the event
streams (`patrician rebuild-projections`) gives the same figures. Followers rate games as
their ends are followed, which is nearly that order; a game followed after one that ended
later and shares a rated identity with it (a bot level, often) puts the later ones back to
their ratings before, rates itself, and rates them again. The reads and the one write that
follows them are tied by the revision (`ratings.lua` writes only if nothing was rated in
between; otherwise the caller reads again), and a game already rated is never rated twice.

Every key carries the hash tag `{ratings}`: the script's keys share one Redis Cluster slot.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import NamedTuple

import msgspec

from store.protocol import Call, Op, evaluate, reply_text


class Rating(msgspec.Struct, frozen=True, gc=False):
    """A player's (or a bot level's) rating after its last rated game (openskill's mean and
    uncertainty; the defaults are a newcomer's)."""

    mu: float = 25.0
    sigma: float = 25.0 / 3
    games: int = 0


class Place(msgspec.Struct, frozen=True, gc=False):
    """Who is rated for one seat of a finished game, and where the seat ranked (1: first)."""

    rated: str
    """The player id, or `bot:<level>` for seats a bot played from the start."""
    rank: int


class RatedGame(msgspec.Struct, frozen=True, gc=False):
    """What a finished game did to the ratings of its places."""

    game_id: str
    ended: str
    """When it ended (the time of its last append, UTC, ISO 8601)."""
    places: tuple[Place, ...]
    before: dict[str, Rating] = {}
    after: dict[str, Rating] = {}


_RATING = msgspec.msgpack.Decoder(Rating)
_GAME = msgspec.msgpack.Decoder(RatedGame)
_encode = msgspec.msgpack.encode


class RatingKeys(NamedTuple):
    revision: str
    now: str
    """rated identity -> its `Rating` (MessagePack)."""
    games: str
    """game id -> its `RatedGame` (MessagePack)."""
    order: str
    """The rated games in the order they ended (`order_member`, all of score 0: by bytes)."""
    shown: str
    """rated identity -> the number shown, for the rating list."""

    @classmethod
    def under(cls, prefix: str) -> RatingKeys:
        return cls(*(f"{prefix}:{{ratings}}:{part}" for part in cls._fields))


def order_member(ended: str, game_id: str) -> str:
    """A game's place in the order (ISO 8601 times in UTC compare as text; the game id
    orders games that ended in the same instant)."""
    return f"{ended}|{game_id}"


class Reading(NamedTuple):
    revision: str
    rated: bool
    """Whether the game was rated already."""
    later: tuple[RatedGame, ...]
    """The rated games that ended after it, in order."""


def reading_op(keys: RatingKeys, game: RatedGame) -> Op[Reading]:
    """What rating `game` depends on, and the revision it was read at."""
    revision = yield Call("get", (keys.revision,))
    rated = yield Call("hexists", (keys.games, game.game_id))
    later: tuple[RatedGame, ...] = ()
    if not rated:
        after = f"({order_member(game.ended, game.game_id)}"
        members = yield Call("zrangebylex", (keys.order, after, "+"))
        if members:
            ids = [reply_text(member).rsplit("|", 1)[1] for member in members]
            found = yield Call("hmget", (keys.games, *ids))
            later = tuple(_GAME.decode(value) for value in found if value is not None)
    return Reading(reply_text(revision or b""), bool(rated), later)


def ratings_op(keys: RatingKeys, rated: Iterable[str]) -> Op[dict[str, Rating]]:
    """The ratings now of these identities (a newcomer's for one never rated)."""
    names = sorted(set(rated))
    if not names:
        return {}
    found = yield Call("hmget", (keys.now, *names))
    return {
        name: Rating() if value is None else _RATING.decode(value)
        for name, value in zip(names, found, strict=True)
    }


def write_op(
    keys: RatingKeys,
    revision: str,
    games: Sequence[RatedGame],
    ratings: Mapping[str, Rating],
    shown: Mapping[str, int],
) -> Op[bool]:
    """Keep the games rated (the new one and those rated again) and the ratings they leave,
    if nothing was rated since `revision` was read; whether it was written."""
    args: list[object] = [revision, len(games)]
    for game in games:
        args += [game.game_id, order_member(game.ended, game.game_id), _encode(game)]
    for name, rating in ratings.items():
        args += [name, _encode(rating), shown[name]]
    written = yield from evaluate("ratings", len(keys), (*keys, *args))
    return bool(int(written))


def list_op(
    keys: RatingKeys, offset: int, count: int
) -> Op[tuple[int, int, list[tuple[str, int]]]]:
    """The rated identities from the highest shown rating down: how many in all, how many
    rank above the page's first (rated higher), and the page (identity, shown)."""
    total = yield Call("zcard", (keys.shown,))
    found = yield Call("zrevrange", (keys.shown, offset, offset + count - 1, True))
    page = [(reply_text(name), int(score)) for name, score in found]
    above = (yield Call("zcount", (keys.shown, f"({page[0][1]}", "+inf"))) if page else 0
    return int(total), int(above), page


def clear_op(keys: RatingKeys) -> Op[None]:
    """Forget every rating (before they are all made again)."""
    yield Call("delete", tuple(keys))


def rated_games_op(keys: RatingKeys, game_ids: Sequence[str]) -> Op[dict[str, RatedGame]]:
    """The records of those of these games that were rated (a player's page reads its
    rating history from them)."""
    if not game_ids:
        return {}
    found = yield Call("hmget", (keys.games, *game_ids))
    return {
        game_id: _GAME.decode(value)
        for game_id, value in zip(game_ids, found, strict=True)
        if value is not None
    }

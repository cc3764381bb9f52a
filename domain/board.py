"""The tables one game plays with, derived once from its options and card data.

A game keeps the card list and board it was created with (R50); this module turns them into
index-based tables (cities by position, cards by id) so that the hot paths of `decide` and
`evolve` do dictionary and tuple look-ups, never searches.
"""

from __future__ import annotations

import msgspec

from domain.events import Edition, GameCreated, Module
from domain.gamedata import Delegates, GameData

RULES_VERSION = 3
"""The version of the rules and of the log they write, kept in every game (`game_created`),
the one new games get. A game is decided for its whole life by the version it was created
with (`Board.rules_version`), so an upgrade never changes a game in play (docs/rules-versions.md).
2: secret events carry salts, players their names, and a table may be left or cancelled
before it starts.
3: R45 read as the rulebook writes it: a seat whose empty supply (R41) left no floor placed
built in no city, so it may take any face-up card (R14) and no city is barred from its move
(R15); and `city_scored` spells its bonus `trade_bonus`, as the final scores do (the version-2
spelling `bonus` is kept in version-2 games' stored bytes, `domain.shapes`)."""

SUPPORTED_RULES_VERSIONS: tuple[int, ...] = (2, RULES_VERSION)
"""Every rules version this code decides (and audits): games keep the one they began with."""

EDITIONS: tuple[Edition, ...] = ("towers", "classic")
MODULES: tuple[Module, ...] = ("trade_routes", "delegates")
HAND_SIZE = 3


class CardInfo(msgspec.Struct, frozen=True, gc=False):
    id: str
    city: int
    crests: int
    star: bool
    portraits: tuple[str, ...]
    move: bool
    take_any: bool


class Board(msgspec.Struct, frozen=True, gc=False):
    rules_version: int
    """The rules version the game was created with (`game_created`): `decide` and
    `legal_commands` ask it where versions differ, `evolve` never does."""
    edition: Edition
    seats: int
    modules: tuple[Module, ...]
    architetto: bool
    cities: tuple[str, ...]
    capacity: tuple[int, ...]
    tokens: tuple[tuple[int, int], ...]
    city_index: dict[str, int]
    cards: dict[str, CardInfo]
    card_order: tuple[str, ...]
    signposts: tuple[tuple[int, int], ...]
    markers_per_seat: int
    supply: tuple[int, ...]
    nobles: tuple[str, ...]
    set_size: int
    points_per_set: int
    delegates: Delegates | None

    @property
    def builders(self) -> int:
        """Seats plus the Architetto, who builds and scores like a seat (R22)."""
        return self.seats + 1 if self.architetto else self.seats

    @property
    def trade_routes(self) -> bool:
        return "trade_routes" in self.modules

    @property
    def r41_builds_nowhere(self) -> bool:
        """R45 from version 3: a seat whose empty supply (R41) left no floor placed this turn
        built in no city (in version 2 it built in its played card's city all the same)."""
        return self.rules_version >= 3


EMPTY_BOARD = Board(
    rules_version=RULES_VERSION,
    edition="towers",
    seats=0,
    modules=(),
    architetto=False,
    cities=(),
    capacity=(),
    tokens=(),
    city_index={},
    cards={},
    card_order=(),
    signposts=(),
    markers_per_seat=0,
    supply=(),
    nobles=(),
    set_size=3,
    points_per_set=6,
    delegates=None,
)


def build_board(created: GameCreated) -> Board:
    """The tables of a game from its first event (R1-R5, R31, R50)."""
    data: GameData = created.game_data
    five = created.seats == 5
    cities = tuple(city for city in data.cities if five or not city.five_player_only)
    index = {city.name: i for i, city in enumerate(cities)}
    cards = {
        card.id: CardInfo(
            id=card.id,
            city=index[card.city],
            crests=card.crests,
            star=card.star,
            portraits=card.portraits,
            move=card.action == "move_top_floor",
            take_any=card.action == "take_any_faceup_card",
        )
        for card in data.cards
        if card.city in index
    }
    architetto = created.edition == "towers" and created.seats == 2  # R4
    pieces = (
        data.tower_pieces.towers_of_influence
        if created.edition == "towers"
        else data.tower_pieces.classic_2007
    )
    supply = (pieces[str(created.seats)],) * created.seats
    if architetto:
        supply += (pieces["architetto"],)
    trade = "trade_routes" in created.modules
    pairs = data.trade_routes.ten_city_board if five else data.trade_routes.nine_city_board
    return Board(
        rules_version=created.rules_version,
        edition=created.edition,
        seats=created.seats,
        modules=created.modules,
        architetto=architetto,
        cities=tuple(city.name for city in cities),
        capacity=tuple(city.floors for city in cities),
        tokens=tuple(city.prestige_tokens for city in cities),
        city_index=index,
        cards=cards,
        card_order=tuple(cards),
        signposts=tuple(_pair(index[a], index[b]) for a, b in pairs) if trade else (),
        markers_per_seat=data.trade_route_markers_per_player[str(created.seats)] if trade else 0,
        supply=supply,
        nobles=tuple(noble.id for noble in data.nobles),
        set_size=data.portrait_sets.set_size,
        points_per_set=data.portrait_sets.points_per_set,
        delegates=data.delegates if "delegates" in created.modules else None,
    )


def _pair(a: int, b: int) -> tuple[int, int]:
    return (a, b) if a < b else (b, a)

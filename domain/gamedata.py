"""The components of the game (cities, cards, signposts, delegates), read from a card file.

The printed card list is not published; the file shipped with the server is a reconstruction
(see its `provenance`). So the engine never hard-codes a card: it decodes a file with this
schema and refuses one that breaks a constraint of the rules, naming what is broken, so that
someone transcribing the printed list learns at once where a typo is.
"""

from __future__ import annotations

from collections import Counter
from typing import Literal

import msgspec

from domain.unknown_fields import unknown_fields

FORMAT = "patrician-game-data/1"

Action = Literal["move_top_floor", "take_any_faceup_card"]


class Noble(msgspec.Struct, frozen=True):
    id: str
    label: str


class City(msgspec.Struct, frozen=True):
    name: str
    floors: int
    prestige_tokens: tuple[int, int]
    five_player_only: bool = False
    roman: str = ""
    lat: float | None = None
    lon: float | None = None
    floors_source: str = ""


class Card(msgspec.Struct, frozen=True):
    id: str
    city: str
    crests: int
    star: bool
    portraits: tuple[str, ...] = ()
    action: Action | None = None


class TradeRoutes(msgspec.Struct, frozen=True):
    nine_city_board: tuple[tuple[str, str], ...]
    ten_city_board: tuple[tuple[str, str], ...]


class MinorDelegate(msgspec.Struct, frozen=True):
    token_value: int
    tie_order: tuple[str, ...]
    tie_order_five_players: tuple[str, ...] | None = None


class MajorDelegate(msgspec.Struct, frozen=True):
    cities: tuple[str, ...]
    tie_order: tuple[str, ...]


class Delegates(msgspec.Struct, frozen=True):
    a: MinorDelegate = msgspec.field(name="A")
    b: MinorDelegate = msgspec.field(name="B")
    c: MinorDelegate = msgspec.field(name="C")
    d: MajorDelegate = msgspec.field(name="D")

    def minors(self) -> tuple[tuple[str, MinorDelegate], ...]:
        return (("A", self.a), ("B", self.b), ("C", self.c))


class TowerPieces(msgspec.Struct, frozen=True):
    towers_of_influence: dict[str, int]
    classic_2007: dict[str, int]


class PortraitSets(msgspec.Struct, frozen=True):
    set_size: int
    points_per_set: int


class GameData(msgspec.Struct, frozen=True):
    format: str
    nobles: tuple[Noble, ...]
    cities: tuple[City, ...]
    cards: tuple[Card, ...]
    trade_routes: TradeRoutes
    trade_route_markers_per_player: dict[str, int]
    delegates: Delegates
    tower_pieces: TowerPieces
    portrait_sets: PortraitSets
    provenance: dict[str, str] = {}


class GameDataError(ValueError):
    """A card file that cannot be played with; the message names the item and the constraint."""


_decoder = msgspec.json.Decoder(GameData)


def decode_game_data(raw: bytes | str) -> GameData:
    """Decode and validate a card file a user hands in; raise `GameDataError` naming the
    first broken rule, or a field the format does not have (a typo, say). The card data kept
    in a game's first event is read leniently instead, like every stored event."""
    try:
        data = _decoder.decode(raw)
    except msgspec.ValidationError as error:
        raise GameDataError(f"card file does not fit the schema: {error}") from None
    except msgspec.DecodeError as error:
        raise GameDataError(f"card file is not valid JSON: {error}") from None
    unknown = unknown_fields(msgspec.json.decode(raw), data)
    if unknown:
        raise GameDataError(f"card file has a field {FORMAT} does not know: {unknown[0]}")
    validate_game_data(data)
    return data


def validate_game_data(data: GameData) -> None:
    if data.format != FORMAT:
        raise GameDataError(f"format is {data.format!r}, this engine reads {FORMAT!r}")
    _unique("noble id", [noble.id for noble in data.nobles])
    _unique("city name", [city.name for city in data.cities])
    _unique("card id", [card.id for card in data.cards])
    nobles = {noble.id for noble in data.nobles}
    cities = {city.name: city for city in data.cities}
    for city in data.cities:
        _check_city(city)
    if not any(city.five_player_only for city in data.cities):
        raise GameDataError("no city is marked five_player_only: the 5-seat board needs one (R2)")
    for card in data.cards:
        _check_card(card, cities, nobles)
    crests = Counter[str]()
    for card in data.cards:
        crests[card.city] += card.crests
    for city in data.cities:
        if crests[city.name] != city.floors:
            raise GameDataError(
                f"city {city.name}: its cards carry {crests[city.name]} crests but it holds "
                f"{city.floors} floors; crests must equal floors per city"
            )
    _check_trade_routes(data, cities)
    _check_delegates(data, cities)
    floors = sum(city.floors for city in data.cities)
    signposts = len(data.trade_routes.ten_city_board)
    for seats in ("2", "3", "4", "5"):
        for table, name, most in (
            (data.tower_pieces.towers_of_influence, "towers_of_influence", floors),
            (data.tower_pieces.classic_2007, "classic_2007", floors),
            (data.trade_route_markers_per_player, "trade_route_markers_per_player", signposts),
        ):
            if not 0 <= table.get(seats, -1) <= most:
                raise GameDataError(
                    f"{name}: no count of 0 to {most} for {seats} seats (R3, R31; more than the "
                    "board can take is a typo)"
                )
    if not 0 <= data.tower_pieces.towers_of_influence.get("architetto", -1) <= floors:
        raise GameDataError("tower_pieces.towers_of_influence: no count for the architetto (R3)")
    if data.portrait_sets.set_size < 1 or data.portrait_sets.points_per_set < 0:
        raise GameDataError("portrait_sets: set_size must be positive (R36)")


def _unique(what: str, values: list[str]) -> None:
    for value, count in Counter(values).items():
        if count > 1:
            raise GameDataError(f"{what} {value!r} appears {count} times; ids must be unique")


def _check_city(city: City) -> None:
    if city.floors < 5 or city.floors % 2 == 0:
        raise GameDataError(
            f"city {city.name}: holds {city.floors} floors; a city holds an odd number of at "
            "least 5 so that its towers always differ (R13)"
        )
    if city.prestige_tokens != (city.floors, city.floors - 3):
        raise GameDataError(
            f"city {city.name}: tokens {list(city.prestige_tokens)} must be "
            f"[{city.floors}, {city.floors - 3}] (floors and floors minus 3, R8)"
        )


def _check_card(card: Card, cities: dict[str, City], nobles: set[str]) -> None:
    if card.city not in cities:
        raise GameDataError(f"card {card.id}: unknown city {card.city!r}")
    if card.crests not in (1, 2):
        raise GameDataError(f"card {card.id}: shows {card.crests} crests; a card shows 1 or 2")
    for portrait in card.portraits:
        if portrait not in nobles:
            raise GameDataError(f"card {card.id}: unknown noble {portrait!r} in portraits")
    if card.action is not None and card.portraits:
        raise GameDataError(
            f"card {card.id}: shows both portraits and the action {card.action}; "
            "a card shows one or the other"
        )
    if card.star and (card.crests != 1 or len(card.portraits) != 1):
        raise GameDataError(
            f"card {card.id}: a star card is a single-crest card with a single portrait"
        )


def _check_trade_routes(data: GameData, cities: dict[str, City]) -> None:
    for name, pairs, five in (
        ("nine_city_board", data.trade_routes.nine_city_board, False),
        ("ten_city_board", data.trade_routes.ten_city_board, True),
    ):
        seen: set[frozenset[str]] = set()
        for pair in pairs:
            label = f"trade_routes.{name} signpost {pair[0]}-{pair[1]}"
            for city in pair:
                if city not in cities:
                    raise GameDataError(f"{label}: unknown city {city!r}")
                if cities[city].five_player_only and not five:
                    raise GameDataError(f"{label}: {city} is not on the 9-city board (R2)")
            key = frozenset(pair)
            if len(key) != 2:
                raise GameDataError(f"{label}: a signpost joins two different cities")
            if key in seen:
                raise GameDataError(f"{label}: listed twice; a signpost is an unordered pair (R47)")
            seen.add(key)


def _check_delegates(data: GameData, cities: dict[str, City]) -> None:
    for letter, minor in data.delegates.minors():
        five_order = minor.tie_order_five_players or minor.tie_order
        for five, order in ((False, minor.tie_order), (True, five_order)):
            holders = {
                city.name
                for city in data.cities
                if minor.token_value in city.prestige_tokens and (five or not city.five_player_only)
            }
            if set(order) != holders or len(order) != len(holders):
                raise GameDataError(
                    f"delegates.{letter}: tie order {list(order)} must list each city holding "
                    f"a {minor.token_value}-point token once: {sorted(holders)} (R33)"
                )
    major = data.delegates.d
    for city in (*major.cities, *major.tie_order):
        if city not in cities:
            raise GameDataError(f"delegates.D: unknown city {city!r} (R34)")

"""The options of each decision, complete and in a stable order.

`legal_commands` lists them for the seat that decides; `decide` accepts a command exactly when
it is among them, so the two can never disagree. The order: cards by id, cities in board
order, site 0 before 1, Trader before Bandit, `skip` last.
"""

from __future__ import annotations

from domain.commands import (
    ChooseArchitettoSite,
    Command,
    MoveFloor,
    PlaceFloor,
    PlaceTradeRoute,
    PlayCard,
    Skip,
    TakeCard,
)
from domain.state import State

SKIP = Skip()
_PLACE = (PlaceFloor(0), PlaceFloor(1))
_CHOOSE = [ChooseArchitettoSite(0), ChooseArchitettoSite(1)]


def place_sites(state: State, city: int) -> tuple[PlaceFloor, ...]:
    """R11, R12: either site, unless this floor is the city's last and a site is empty."""
    first, second = state.towers[2 * city], state.towers[2 * city + 1]
    if len(first) + len(second) + 1 == state.board.capacity[city]:
        if not first:
            return _PLACE[:1]
        if not second:
            return _PLACE[1:]
    return _PLACE


def built_city(state: State) -> int | None:
    """R45: the city the active seat built in this turn, for R14 and R15: its played card's
    city, or, from rules version 3 (`Board.r41_builds_nowhere`), none where its empty supply
    (R41) left no floor placed. That case is exactly "no floor placed this turn
    (`State.placed`) and none left in supply": a seat that placed its last floor this turn
    built in the card's city, and one with floors left that placed none met a full city."""
    card = state.played_card()
    if state.board.r41_builds_nowhere and state.placed == 0 and state.supply[state.active] == 0:
        return None
    return card.city


def take_cities(state: State) -> list[TakeCard]:
    """R14: the built city's face-up card, or any face-up card if it has none, if the played
    card shows "take any", or if the seat built in no city (R45, version 3)."""
    card = state.played_card()
    names = state.board.cities
    built = built_city(state)
    if not card.take_any and built is not None and state.face_up[built] is not None:
        return [TakeCard(names[built])]
    return [TakeCard(names[city]) for city, up in enumerate(state.face_up) if up is not None]


def moves(state: State) -> list[MoveFloor]:
    """R15, R46: in an unscored city other than the one built in (R45: none excluded where
    the seat built in no city), where the seat owns a floor, the top floor of a non-empty
    site."""
    built = built_city(state)
    seat = state.active
    towers = state.towers
    options = []
    for city, name in enumerate(state.board.cities):
        if city == built or state.winners[city] is not None:
            continue
        first, second = towers[2 * city], towers[2 * city + 1]
        if seat in first or seat in second:
            if first:
                options.append(MoveFloor(name, 0))
            if second:
                options.append(MoveFloor(name, 1))
    return options


def trade_routes(state: State) -> list[PlaceTradeRoute]:
    """R30: a free signpost, neither city the played card's, each city under two markers."""
    if state.markers_left[state.active] == 0:
        return []
    played = state.played_card().city
    pointing = [0] * len(state.board.cities)
    taken = set()
    for marker in state.markers:
        pointing[marker.a] += 1
        pointing[marker.b] += 1
        taken.add((marker.a, marker.b))
    names = state.board.cities
    options = []
    for a, b in state.board.signposts:
        if (a, b) not in taken and played not in (a, b) and pointing[a] < 2 and pointing[b] < 2:
            pair = (names[a], names[b])
            options.append(PlaceTradeRoute(pair, "trader"))
            options.append(PlaceTradeRoute(pair, "bandit"))
    return options


def legal_commands(state: State, seat: int) -> list[Command]:
    """Every command `seat` may send now; empty when it is not that seat's decision."""
    pending = state.pending
    if pending is None or pending.seat != seat:
        return []
    known_state, known = _last.entry
    if known_state is state:  # a state never changes: what was listed for it still holds
        return list(known)
    step = pending.step
    listed: list[Command]
    if step == "play_card":
        listed = [PlayCard(card) for card in sorted(state.hands[seat])]
    elif step == "place_floor":
        listed = list(place_sites(state, state.played_card().city))
    elif step == "take_card":
        listed = list(take_cities(state))
    elif step == "move_floor":
        listed = [*moves(state), SKIP]
    elif step == "trade_route":
        listed = [*trade_routes(state), SKIP]
    else:
        listed = list(_CHOOSE)
    _last.entry = (state, tuple(listed))  # one assignment: threads see all of it or none
    return listed


class _LastAnswer:
    """The options of the last state asked about: a seat's client, then `decide`, ask for the
    same state's options one after the other. States are immutable, so the answer for the
    same object is the same; the state is held so that its identity cannot be reused.

    Process-wide state inside the pure domain, on purpose: it is a memo of a pure function
    (no clock, no randomness, no I/O, and no caller can tell it is there but by speed), of
    one entry, replaced by one assignment, so threads see a whole entry or the previous one.
    It saves listing the options twice per decision, in every playout (bench/playouts.py)."""

    __slots__ = ("entry",)

    def __init__(self) -> None:
        self.entry: tuple[State | None, tuple[Command, ...]] = (None, ())


_last = _LastAnswer()

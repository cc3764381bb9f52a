"""Why a command is refused: the rules said negatively, for people (R43).

`decide` accepts a command exactly when `legal_commands` lists it; this module only explains
a refusal, naming the ruling it enforces. Each reason checks its own condition, and a command
that none explains gets the generic `not_allowed`, which the tests say never happens, so that
the reasons cannot drift from the rules into a wrong explanation.
"""

from __future__ import annotations

from domain.board import Board
from domain.commands import (
    ChooseArchitettoSite,
    Command,
    MoveFloor,
    PlaceFloor,
    PlaceTradeRoute,
    PlayCard,
    TakeCard,
)
from domain.errors import IllegalCommand
from domain.legal import built_city, place_sites, take_cities
from domain.state import State

_STEP_OF: dict[type, str] = {
    PlayCard: "play_card",
    PlaceFloor: "place_floor",
    TakeCard: "take_card",
    MoveFloor: "move_floor",
    PlaceTradeRoute: "trade_route",
    ChooseArchitettoSite: "architetto_site",
}


def why_refused(state: State, command: Command) -> IllegalCommand:
    """The reason `command` is not among the legal commands of the seat that decides."""
    pending = state.pending
    assert pending is not None
    step = _STEP_OF.get(type(command))
    if step is None:  # skip
        return IllegalCommand(
            "step_not_optional",
            "R44",
            f"{pending.step} cannot be skipped; only the move and the trade route are optional",
        )
    if step != pending.step:
        return IllegalCommand("wrong_step", "R44", f"the game waits for {pending.step}, not {step}")
    board = state.board
    match command:
        case PlayCard(card=card):
            return IllegalCommand("card_not_in_hand", "R10", f"card {card} is not in your hand")
        case PlaceFloor(site=site):
            if site not in (0, 1):
                return IllegalCommand("unknown_site", "R11", f"site {site} is not 0 or 1")
            if PlaceFloor(site) not in place_sites(state, state.played_card().city):
                return IllegalCommand(
                    "last_floor_must_fill_empty_site",
                    "R12",
                    "the city's last floor must go on its empty site",
                )
        case TakeCard(city=name):
            city = board.city_index.get(name)
            if city is None:
                return _unknown_city(board, name)
            if state.face_up[city] is None:
                return IllegalCommand("no_face_up_card", "R14", f"{name} has no face-up card")
            built = built_city(state)
            allowed = ", ".join(option.city for option in take_cities(state))
            if built is not None and TakeCard(name) not in take_cities(state):
                return IllegalCommand(
                    "must_take_built_city",
                    "R14",
                    f"take the face-up card of {board.cities[built]}, the city you built in "
                    f"(allowed: {allowed})",
                )
        case MoveFloor(city=name, from_site=site):
            city = board.city_index.get(name)
            if city is None:
                return _unknown_city(board, name)
            if city == built_city(state):
                return IllegalCommand(
                    "move_in_built_city", "R15", f"you built in {name} this turn; move elsewhere"
                )
            if state.winners[city] is not None:
                return IllegalCommand("city_already_scored", "R15", f"{name} is already scored")
            if site not in (0, 1):
                return IllegalCommand("unknown_site", "R15", f"site {site} is not 0 or 1")
            seat = pending.seat
            if seat not in state.towers[2 * city] and seat not in state.towers[2 * city + 1]:
                return IllegalCommand(
                    "no_floor_owned", "R15", f"you own no floor in {name}, so you cannot move there"
                )
            if not state.towers[2 * city + site]:
                return IllegalCommand("site_empty", "R46", f"site {site} of {name} is empty")
        case PlaceTradeRoute(cities=(a, b)):
            for name in (a, b):
                if name not in board.city_index:
                    return _unknown_city(board, name)
            if command.side not in ("trader", "bandit"):
                return IllegalCommand("unknown_side", "R30", "a marker is a trader or a bandit")
            refusal = _route_refusal(state, board.city_index[a], board.city_index[b])
            if refusal is not None:
                return refusal
        case ChooseArchitettoSite(site=site) if site not in (0, 1):
            return IllegalCommand("unknown_site", "R21", "choose site 0 or 1")
    return _unlisted(command)


def _unlisted(command: Command) -> IllegalCommand:
    """No rule above explains the refusal: the last word, never expected (a test says so), so
    that a gap between `legal_commands` and the reasons here shows instead of a wrong reason."""
    return IllegalCommand("not_allowed", "R44", f"{command} is not among your legal commands")


def _unknown_city(board: Board, name: str) -> IllegalCommand:
    return IllegalCommand(
        "unknown_city", "R2", f"{name!r} is not a city of this board ({', '.join(board.cities)})"
    )


def _route_refusal(state: State, a: int, b: int) -> IllegalCommand | None:
    pair = (min(a, b), max(a, b))
    names = f"{state.board.cities[pair[0]]}-{state.board.cities[pair[1]]}"
    if state.markers_left[state.active] == 0:
        return IllegalCommand("no_markers_left", "R31", "you have no trade route marker left")
    if pair not in state.board.signposts:
        return IllegalCommand("no_such_signpost", "R30", f"there is no signpost {names}")
    if any((marker.a, marker.b) == pair for marker in state.markers):
        return IllegalCommand("signpost_taken", "R30", f"signpost {names} already has a marker")
    if state.played_card().city in pair:
        return IllegalCommand(
            "played_city_on_route", "R30", "neither city may be the played card's city"
        )
    pointing = [0] * len(state.board.cities)
    for marker in state.markers:
        pointing[marker.a] += 1
        pointing[marker.b] += 1
    if max(pointing[a], pointing[b]) >= 2:
        return IllegalCommand(
            "city_marker_limit", "R30", f"a city of {names} already has two markers pointing to it"
        )
    return None

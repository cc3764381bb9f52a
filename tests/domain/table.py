"""Set a table the way a test needs it, then play commands on it.

`table(...)` starts a real game (created, joined, dealt from a fixed seed) and then arranges
it: hands, face-up cards, draw pile, towers, tokens, markers, whose decision it is. Arranging
replaces state fields directly: a ruling test states its situation ("Milano holds black,
black on site 0 and nothing on site 1") rather than replaying a game that leads there; and
`check_arranged` then checks that the situation keeps what every state of a legal game keeps.
`act` sends commands one by one through `play`, exactly as a seat would.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import TypeVar

import pytest
from msgspec.structs import replace

from domain.board import RULES_VERSION, Board
from domain.commands import Command
from domain.decide import decide
from domain.errors import IllegalCommand
from domain.events import Event, Step, StepStarted
from domain.evolve import fold
from domain.gamedata import GameData
from domain.legal import legal_commands
from domain.setup import new_game
from domain.state import Marker, State
from server.config.card_data import load_game_data

_DATA = load_game_data()
SEED = bytes(range(32))


def started(
    seats: int = 4,
    edition: str = "towers",
    modules: Sequence[str] = (),
    data: GameData | None = None,
    seed: bytes = SEED,
    *,
    rules_version: int = RULES_VERSION,
) -> State:
    """A game just dealt from `seed` by the rules of `rules_version`: seat 0 is to play a
    card."""
    return fold(
        new_game(
            edition=edition,
            seats=seats,
            modules=modules,
            game_data=data or _DATA,
            server_seed=seed,
            rules_version=rules_version,
        )
    )


def table(
    seats: int = 4,
    edition: str = "towers",
    modules: Sequence[str] = (),
    *,
    data: GameData | None = None,
    hands: Mapping[int, Sequence[str]] | None = None,
    face_up: Mapping[str, str | None] | None = None,
    clear_face_up: bool = False,
    draw: Sequence[str] | None = None,
    hidden: Sequence[str] | None = None,
    towers: Mapping[str, tuple[Sequence[int], Sequence[int]]] | None = None,
    winners: Mapping[str, tuple[int, int]] | None = None,
    played: Mapping[int, Sequence[str]] | None = None,
    supply: Mapping[int, int] | None = None,
    markers: Sequence[tuple[int, str, str, str]] = (),
    active: int = 0,
    rules_version: int = RULES_VERSION,
) -> State:
    """A started game (of `rules_version`) arranged as given; `active` is to play a card.

    Cards named anywhere are taken out of wherever the deal put them, so that every card
    still lies in exactly one place. Floors placed by `towers` come out of the builders'
    supply unless `supply` says otherwise.
    """
    state = started(seats, edition, modules, data, rules_version=rules_version)
    board = state.board
    named: set[str] = set()
    for cards in (hands or {}).values():
        named.update(cards)
    for cards in (played or {}).values():
        named.update(cards)
    named.update(card for card in (face_up or {}).values() if card)
    named.update(draw or ())
    named.update(hidden or ())

    def without(cards: Sequence[str]) -> tuple[str, ...]:
        return tuple(card for card in cards if card not in named)

    hand_list = [without(hand) for hand in state.hands]
    for seat, cards in (hands or {}).items():
        hand_list[seat] = tuple(cards)
    played_list = [without(stack) for stack in state.played]
    for seat, cards in (played or {}).items():
        played_list[seat] = tuple(cards)
    up: list[str | None] = [None if clear_face_up else card for card in state.face_up]
    up = [None if card in named else card for card in up]
    for name, card in (face_up or {}).items():
        up[board.city_index[name]] = card
    loose = [card for card in state.face_up if card is not None and card not in up]
    pile = tuple(draw) if draw is not None else without(state.draw) + without(tuple(loose))
    site_list = list(state.towers)
    supply_list = list(state.supply)
    for name, sites in (towers or {}).items():
        city = board.city_index[name]
        for site, builders in enumerate(sites):
            site_list[2 * city + site] = tuple(builders)
            for builder in builders:
                supply_list[builder] -= 1
    for builder, left in (supply or {}).items():
        supply_list[builder] = left
    won = list(state.winners)
    for name, pair in (winners or {}).items():
        won[board.city_index[name]] = pair
    arranged = replace(
        state,
        hands=tuple(hand_list),
        played=tuple(played_list),
        face_up=tuple(up),
        draw=pile,
        hidden=tuple(hidden) if hidden is not None else without(state.hidden),
        towers=tuple(site_list),
        supply=tuple(supply_list),
        winners=tuple(won),
        markers=tuple(_marker(board, *marker) for marker in markers),
        markers_left=tuple(
            left - sum(1 for marker in markers if marker[0] == seat)
            for seat, left in enumerate(state.markers_left)
        ),
        active=active,
        pending=StepStarted(active, "play_card"),
    )
    check_arranged(arranged, floors_conserved=supply is None)
    return arranged


def check_arranged(state: State, *, floors_conserved: bool = True) -> None:
    """What every state of a legal game keeps (tests/domain/invariants.py), checked of an
    arranged one as far as an arrangement can keep it: no card in two places and none that
    is not in the game, no city over its floor count and a full city scored, markers
    conserved and at most two pointing to a city (R30), no negative supply, and each
    builder's floors on the board and in supply adding up to what it started with (unless
    the test sets the supply itself).

    Two things an arrangement may leave out, on purpose: cards taken out of the deal and
    named nowhere (a test that empties the draw pile does not say where its cards went), and
    the floors of a city it marks as scored (`winners` states the tokens, not the towers)."""
    board = state.board
    cards: Counter[str] = Counter()
    for group in (*state.hands, *state.played, state.draw, state.hidden):
        cards.update(group)
    cards.update(card for card in state.face_up if card is not None)
    assert max(cards.values(), default=1) == 1, "a card lies in two places"
    assert set(cards) <= set(board.card_order), "a card that is not in this game"
    for city, name in enumerate(board.cities):
        floors = state.city_floors(city)
        assert floors <= board.capacity[city], f"{name} holds more than its floor count"
        if floors == board.capacity[city]:
            assert state.winners[city] is not None, f"{name} is full but not scored"
    for seat in range(board.seats):
        placed = sum(1 for marker in state.markers if marker.seat == seat)
        assert placed + state.markers_left[seat] == board.markers_per_seat, "markers conserved"
    pointing = Counter[int]()
    for marker in state.markers:
        pointing.update((marker.a, marker.b))
    assert all(count <= 2 for count in pointing.values()), "R30: two markers per city at most"
    for builder in range(board.builders):
        on_board = sum(site.count(builder) for site in state.towers)
        assert state.supply[builder] >= 0, "no negative supply"
        if floors_conserved:
            assert state.supply[builder] + on_board == board.supply[builder], "floors conserved"


def _marker(board: Board, seat: int, a: str, b: str, side: str) -> Marker:
    first, second = sorted((board.city_index[a], board.city_index[b]))
    assert side in ("trader", "bandit")
    return Marker(seat, first, second, "trader" if side == "trader" else "bandit")


def waiting(state: State, seat: int, step: Step, **turn: object) -> State:
    """`state` with `seat` to decide `step` mid-turn (e.g. card="MIL-3", placed=1)."""
    return replace(state, active=seat, pending=StepStarted(seat, step), **turn)


def act(state: State, seat: int, *commands: Command) -> tuple[list[Event], State]:
    """Send `commands` for `seat` one after the other; return all events and the last state."""
    log: list[Event] = []
    for command in commands:
        events, state = decide(state, seat, command)
        log += events
    return log, state


E = TypeVar("E")


def of_type(events: Sequence[Event], kind: type[E]) -> list[E]:
    return [event for event in events if isinstance(event, kind)]


def sites(state: State, city: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Both towers of `city`, builders bottom first."""
    i = 2 * state.board.city_index[city]
    return state.towers[i], state.towers[i + 1]


def refused(state: State, seat: int, command: Command) -> IllegalCommand:
    """`command` is refused (R43): it raises naming its ruling, and the same state offers the
    same commands."""
    before = legal_commands(state, seat)
    with pytest.raises(IllegalCommand) as caught:
        decide(state, seat, command)
    assert legal_commands(state, seat) == before
    assert f"({caught.value.rule})" in str(caught.value)
    return caught.value

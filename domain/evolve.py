"""`evolve` applies one event to a state; `fold` applies a log. Neither checks a rule.

An event is a fact `decide` already judged, so evolving never fails on a valid log.

`evolve` dispatches with `type(event) is X` over the event union and ends in `assert_never`:
the event classes are `@final`, so mypy --strict narrows each branch away and proves that no
event is forgotten, exactly as a `match` would. It is not a `match` because a class pattern
that fails on a msgspec Struct costs about 150 ns (CPython's slow `isinstance` path for a
class with a metaclass), which made folding spend more on dispatch than on the events
themselves (`bench/playouts.py`). The cases are ordered by how often they occur.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeVar, assert_never

from msgspec.structs import replace

from domain.board import build_board
from domain.events import (
    ArchitettoCardsSetAside,
    ArchitettoRevealed,
    CardPlayed,
    CardRevealed,
    CardTaken,
    CityScored,
    DrawPileStacked,
    Event,
    FaceUpDealt,
    FloorMoved,
    FloorPlaced,
    GameCancelled,
    GameCreated,
    GameEnded,
    GameStarted,
    HandDealt,
    SeatJoined,
    SeatLeft,
    SeedRevealed,
    SeedSealed,
    StepSkipped,
    StepStarted,
    TradeRoutePlaced,
)
from domain.state import NEW_GAME, ArchitettoWork, Marker, State

T = TypeVar("T")


def _put(items: tuple[T, ...], index: int, value: T) -> tuple[T, ...]:
    changed = list(items)
    changed[index] = value
    return tuple(changed)


def evolve(state: State, event: Event) -> State:
    version = state.version + 1
    if type(event) is StepStarted:
        if event.step == "play_card":  # a new turn (R19)
            return replace(
                state,
                version=version,
                active=event.seat,
                card=None,
                placed=0,
                taken_from=None,
                architetto=None,
                pending=event,
            )
        return replace(state, version=version, pending=event)
    if type(event) is FloorPlaced:
        seat = event.seat
        i = 2 * state.board.city_index[event.city] + event.site
        towers = state.towers
        towers = _put(towers, i, towers[i] + (seat,))
        supply = _put(state.supply, seat, state.supply[seat] - 1)
        work = state.architetto
        if work is not None and seat == state.board.seats:
            work = replace(work, placed=work.placed + 1)
            return replace(state, version=version, towers=towers, supply=supply, architetto=work)
        return replace(
            state, version=version, towers=towers, supply=supply, placed=state.placed + 1
        )
    if type(event) is CardPlayed:
        seat, card = event.seat, event.card
        hand = list(state.hands[seat])
        hand.remove(card)
        return replace(
            state,
            version=version,
            hands=_put(state.hands, seat, tuple(hand)),
            played=_put(state.played, seat, state.played[seat] + (card,)),
            card=card,
        )
    if type(event) is CardTaken:
        seat = event.seat
        c = state.board.city_index[event.city]
        return replace(
            state,
            version=version,
            face_up=_put(state.face_up, c, None),
            hands=_put(state.hands, seat, state.hands[seat] + (event.card,)),
            taken_from=c,
        )
    if type(event) is CardRevealed:
        return replace(
            state,
            version=version,
            face_up=_put(state.face_up, state.board.city_index[event.city], event.card),
            draw=state.draw[1:],
        )
    if type(event) is CityScored:
        c = state.board.city_index[event.city]
        high, low, bonus = event.high_seat, event.low_seat, event.trade_bonus
        points = state.bonus
        if bonus:
            points = _put(points, high, points[high] + bonus)
            points = _put(points, low, points[low] + bonus)
        return replace(
            state, version=version, winners=_put(state.winners, c, (high, low)), bonus=points
        )
    if type(event) is FloorMoved:
        i = 2 * state.board.city_index[event.city] + event.from_site
        j = i + 1 - 2 * event.from_site
        sites = list(state.towers)
        floor = sites[i][-1]
        sites[i] = sites[i][:-1]
        sites[j] = (*sites[j], floor)
        return replace(state, version=version, towers=tuple(sites))
    if type(event) is StepSkipped:
        return replace(state, version=version)
    if type(event) is TradeRoutePlaced:
        seat = event.seat
        a, b = sorted(state.board.city_index[name] for name in event.cities)
        left = state.markers_left
        return replace(
            state,
            version=version,
            markers=(*state.markers, Marker(seat, a, b, event.side)),
            markers_left=_put(left, seat, left[seat] - 1),
        )
    if type(event) is ArchitettoRevealed:
        arch = state.board.seats
        from_draw = event.source == "draw"
        return replace(
            state,
            version=version,
            draw=state.draw[1:] if from_draw else state.draw,
            hidden=state.hidden if from_draw else state.hidden[1:],
            played=_put(state.played, arch, (*state.played[arch], event.card)),
            architetto=ArchitettoWork(event.card, event.source, event.chooser),
        )
    if type(event) is GameCreated:
        return State(
            board=build_board(event),
            version=version,
            phase="waiting",
            seed_commitment=event.seed_commitment,
        )
    if type(event) is SeedSealed:
        return replace(state, version=version, server_seed=event.server_seed)
    if type(event) is SeatJoined:
        return replace(
            state,
            version=version,
            players=(*state.players, event.player),
            entropies=(*state.entropies, event.entropy),
            names=(*state.names, event.name),
        )
    if type(event) is SeatLeft:
        i = state.players.index(event.player)
        return replace(
            state,
            version=version,
            players=state.players[:i] + state.players[i + 1 :],
            entropies=state.entropies[:i] + state.entropies[i + 1 :],
            names=state.names[:i] + state.names[i + 1 :],
            left=(*state.left, event.player),
        )
    if type(event) is GameCancelled:
        return replace(state, version=version, phase="cancelled", pending=None)
    if type(event) is GameStarted:
        board = state.board
        return replace(
            state,
            version=version,
            phase="playing",
            seat_players=event.seat_players,
            hands=((),) * board.seats,
            played=((),) * board.builders,
            supply=board.supply,
            towers=((),) * (2 * len(board.cities)),
            winners=(None,) * len(board.cities),
            bonus=(0,) * board.builders,
            face_up=(None,) * len(board.cities),
            markers_left=(board.markers_per_seat,) * board.seats,
        )
    if type(event) is HandDealt:
        return replace(state, version=version, hands=_put(state.hands, event.seat, event.cards))
    if type(event) is DrawPileStacked:
        return replace(state, version=version, draw=event.cards)
    if type(event) is FaceUpDealt:
        dealt = event.cards
        return replace(state, version=version, face_up=dealt, draw=state.draw[len(dealt) :])
    if type(event) is ArchitettoCardsSetAside:
        hidden = event.cards
        return replace(state, version=version, hidden=hidden, draw=state.draw[len(hidden) :])
    if type(event) is GameEnded:
        return replace(
            state,
            version=version,
            phase="over",
            result=event,
            pending=None,
            architetto=None,
        )
    if type(event) is SeedRevealed:
        return replace(state, version=version)
    assert_never(event)


def fold(events: Iterable[Event], state: State = NEW_GAME) -> State:
    for event in events:
        state = evolve(state, event)
    return state

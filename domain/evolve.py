"""`evolve` applies one event to a state; `fold` applies a log. Neither checks a rule.

An event is a fact `decide` already judged, so evolving never fails on a valid log; the
`match` ends in `assert_never` so that mypy proves no event is forgotten. The cases are ordered
by how often they occur, since folding is on the path of every load and every replay.
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
    GameCreated,
    GameEnded,
    GameStarted,
    HandDealt,
    SeatJoined,
    SeedRevealed,
    SeedSealed,
    StepSkipped,
    StepStarted,
    TradeRoutePlaced,
    TurnStarted,
)
from domain.state import NEW_GAME, ArchitettoWork, Marker, Pending, State, Turn

T = TypeVar("T")


def _put(items: tuple[T, ...], index: int, value: T) -> tuple[T, ...]:
    return (*items[:index], value, *items[index + 1 :])


def evolve(state: State, event: Event) -> State:
    version = state.version + 1
    match event:
        case FloorPlaced(seat=seat, city=city, site=site):
            i = 2 * state.board.city_index[city] + site
            towers = state.towers
            supply = state.supply
            if seat == state.board.seats:
                work = state.architetto
                assert work is not None
                return replace(
                    state,
                    version=version,
                    towers=_put(towers, i, (*towers[i], seat)),
                    supply=_put(supply, seat, supply[seat] - 1),
                    architetto=replace(work, placed=work.placed + 1),
                )
            turn = state.turn
            assert turn is not None
            return replace(
                state,
                version=version,
                towers=_put(towers, i, (*towers[i], seat)),
                supply=_put(supply, seat, supply[seat] - 1),
                turn=replace(turn, placed=turn.placed + 1),
            )
        case StepStarted(seat=seat, step=step):
            return replace(state, version=version, pending=Pending(seat, step))
        case CardPlayed(seat=seat, card=card):
            hand = list(state.hands[seat])
            hand.remove(card)
            turn = state.turn
            assert turn is not None
            return replace(
                state,
                version=version,
                hands=_put(state.hands, seat, tuple(hand)),
                played=_put(state.played, seat, (*state.played[seat], card)),
                turn=replace(turn, card=card),
            )
        case CardTaken(seat=seat, city=city, card=card):
            c = state.board.city_index[city]
            turn = state.turn
            assert turn is not None
            return replace(
                state,
                version=version,
                face_up=_put(state.face_up, c, None),
                hands=_put(state.hands, seat, (*state.hands[seat], card)),
                turn=replace(turn, taken_from=c),
            )
        case CardRevealed(city=city, card=card):
            return replace(
                state,
                version=version,
                face_up=_put(state.face_up, state.board.city_index[city], card),
                draw=state.draw[1:],
            )
        case TurnStarted(seat=seat):
            return replace(
                state,
                version=version,
                turn=Turn(seat),
                architetto=None,
                pending=Pending(seat, "play_card"),
            )
        case CityScored(city=city, high_seat=high, low_seat=low, bonus=bonus):
            c = state.board.city_index[city]
            points = state.bonus
            if bonus:
                points = _put(points, high, points[high] + bonus)
                points = _put(points, low, points[low] + bonus)
            return replace(
                state, version=version, winners=_put(state.winners, c, (high, low)), bonus=points
            )
        case FloorMoved(city=city, from_site=site):
            i = 2 * state.board.city_index[city] + site
            j = i + 1 - 2 * site
            towers = state.towers
            source = towers[i]
            moved = _put(towers, i, source[:-1])
            return replace(state, version=version, towers=_put(moved, j, (*towers[j], source[-1])))
        case StepSkipped():
            return replace(state, version=version)
        case TradeRoutePlaced(seat=seat, cities=(a, b), side=side):
            ia, ib = sorted((state.board.city_index[a], state.board.city_index[b]))
            left = state.markers_left
            return replace(
                state,
                version=version,
                markers=(*state.markers, Marker(seat, ia, ib, side)),
                markers_left=_put(left, seat, left[seat] - 1),
            )
        case ArchitettoRevealed(card=card, source=source, chooser=chooser):
            arch = state.board.seats
            return replace(
                state,
                version=version,
                draw=state.draw[1:] if source == "draw" else state.draw,
                hidden=state.hidden[1:] if source == "hidden" else state.hidden,
                played=_put(state.played, arch, (*state.played[arch], card)),
                architetto=ArchitettoWork(card, source, chooser),
            )
        case GameCreated():
            return State(
                board=build_board(event),
                version=version,
                phase="waiting",
                seed_commitment=event.seed_commitment,
            )
        case SeedSealed(server_seed=seed):
            return replace(state, version=version, server_seed=seed)
        case SeatJoined(player=player, entropy=entropy):
            return replace(
                state,
                version=version,
                players=(*state.players, player),
                entropies=(*state.entropies, entropy),
            )
        case GameStarted(seat_players=seat_players):
            board = state.board
            return replace(
                state,
                version=version,
                phase="playing",
                seat_players=seat_players,
                hands=((),) * board.seats,
                played=((),) * board.builders,
                supply=board.supply,
                towers=((),) * (2 * len(board.cities)),
                winners=(None,) * len(board.cities),
                bonus=(0,) * board.builders,
                face_up=(None,) * len(board.cities),
                markers_left=(board.markers_per_seat,) * board.seats,
            )
        case HandDealt(seat=seat, cards=cards):
            return replace(state, version=version, hands=_put(state.hands, seat, cards))
        case DrawPileStacked(cards=cards):
            return replace(state, version=version, draw=cards)
        case FaceUpDealt(cards=cards):
            return replace(state, version=version, face_up=cards, draw=state.draw[len(cards) :])
        case ArchitettoCardsSetAside(cards=cards):
            return replace(state, version=version, hidden=cards, draw=state.draw[len(cards) :])
        case GameEnded():
            return replace(
                state,
                version=version,
                phase="over",
                result=event,
                pending=None,
                turn=None,
                architetto=None,
            )
        case SeedRevealed():
            return replace(state, version=version)
        case _:
            assert_never(event)


def fold(events: Iterable[Event], state: State = NEW_GAME) -> State:
    for event in events:
        state = evolve(state, event)
    return state

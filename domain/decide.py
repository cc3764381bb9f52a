"""`decide`: judge a seat's command and say what happens, down to the next decision.

A command is accepted exactly when `legal_commands` lists it; a refused command raises
`IllegalCommand` naming the ruling and changes nothing. After an accepted command the automatic
steps follow (scoring, refill, the Architetto, the next turn, the end: `domain.steps`) until
the game waits for somebody's decision again, and all of it comes out as events.
"""

from __future__ import annotations

from collections.abc import Sequence

from domain.board import Board
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
from domain.errors import CommandRefused, IllegalCommand
from domain.events import (
    ArchitettoRevealed,
    CardPlayed,
    CardRevealed,
    CardTaken,
    Event,
    FloorMoved,
    FloorPlaced,
    StepSkipped,
    TradeRoutePlaced,
)
from domain.legal import legal_commands
from domain.refusals import why_refused
from domain.state import State
from domain.steps import Run, build_for_architetto, proceed, score_if_full


def decide(state: State, seat: int, command: Command) -> tuple[list[Event], State]:
    """Decide `command` for `seat` and return the events with the state they lead to."""
    pending = state.pending
    if pending is None:
        if state.phase == "over":
            raise IllegalCommand("game_over", "R19", "the game is over")
        if state.phase == "cancelled":
            raise IllegalCommand("game_cancelled", "R7", "the game was cancelled before it began")
        raise IllegalCommand("game_not_started", "R7", "the game has not started")
    if pending.seat != seat:
        raise IllegalCommand(
            "not_your_decision",
            "R44",
            f"seat {pending.seat} decides now ({pending.step}), not seat {seat}",
        )
    command = canonical(state.board, command)
    if command not in legal_commands(state, seat):
        raise why_refused(state, command)
    run = Run(state)
    match command:
        case PlayCard(card=card):
            run.emit(CardPlayed(seat, card))
            proceed(run, "play")
        case PlaceFloor(site=site):
            city = run.state.played_card().city
            run.emit(FloorPlaced(seat, state.board.cities[city], site))
            score_if_full(run, city)
            proceed(run, "play")
        case TakeCard(city=name):
            taken = state.face_up[state.board.city_index[name]]
            assert taken is not None
            run.emit(CardTaken(seat, name, taken))
            proceed(run, "take")
        case MoveFloor(city=name, from_site=site):
            run.emit(FloorMoved(seat, name, site))
            proceed(run, "move")
        case PlaceTradeRoute(cities=cities, side=side):
            run.emit(TradeRoutePlaced(seat, cities, side))
            proceed(run, "trade")
        case ChooseArchitettoSite(site=site):
            work = state.architetto
            assert work is not None
            city = state.board.cards[work.card].city
            run.emit(FloorPlaced(state.board.seats, state.board.cities[city], site))
            score_if_full(run, city)
            if not build_for_architetto(run, final=work.source == "hidden"):
                proceed(run, "architetto")
        case Skip():
            run.emit(StepSkipped(seat, pending.step))
            proceed(run, "move" if pending.step == "move_floor" else "trade")
    return run.events, run.state


def turns_up_a_card(events: Sequence[Event]) -> bool:
    """Whether a command's events turn up a hidden card (R42: a batch ends there)."""
    return any(type(event) in _REVEALING for event in events)


def decide_all(state: State, seat: int, commands: Sequence[Command]) -> tuple[list[Event], State]:
    """Decide a seat's commands one after the other, all of them or none (`CommandRefused`
    names the first refused); the events and the state they lead to.

    R42: a batch ends where a hidden card is turned up (a refill, the Architetto's reveal).
    A command after it would be judged on a card its sender has not seen, and a refusal of
    the batch would tell them something of that card while nothing is written; so such a
    command is refused, whatever it is, and is to be sent once the card is seen."""
    events: list[Event] = []
    decided: list[Event] = []
    for index, command in enumerate(commands):
        if turns_up_a_card(decided):
            raise CommandRefused(
                index,
                IllegalCommand(
                    "sent_before_a_reveal",
                    "R42",
                    f"command {index - 1} turned up a hidden card: send the commands after it "
                    "once you have seen it",
                ),
            )
        try:
            decided, state = decide(state, seat, command)
        except IllegalCommand as error:
            raise CommandRefused(index, error) from None
        events += decided
    return events, state


_REVEALING = (CardRevealed, ArchitettoRevealed)
"""The events that turn a hidden card face up (R16, R20, R24)."""


# --- the one way to write a command -------------------------------------------------------


def canonical(board: Board, command: Command) -> Command:
    """The one way to write `command`: a signpost is an unordered pair (R47), so its cities
    are named in board order. Commands are kept (and audited) as written so."""
    if not isinstance(command, PlaceTradeRoute):
        return command
    a, b = command.cities
    ia, ib = board.city_index.get(a, -1), board.city_index.get(b, -1)
    return PlaceTradeRoute((b, a), command.side) if ib < ia else command

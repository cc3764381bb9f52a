"""`decide`: judge a seat's command and say what happens, down to the next decision.

A command is accepted exactly when `legal_commands` lists it; a refused command raises
`IllegalCommand` naming the ruling and changes nothing. After an accepted command the automatic
steps follow (scoring, refill, the Architetto, the next turn, the end) until the game waits for
somebody's decision again, and all of it comes out as events.

A turn is a fixed sequence of steps per edition (towers: R10-R18, classic: R38); each step
either waits for a decision (`StepStarted`), happens by itself, or is passed (R44).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

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
    Part,
    SeedRevealed,
    StepSkipped,
    StepStarted,
    TradeRoutePlaced,
)
from domain.evolve import evolve
from domain.legal import legal_commands, moves, trade_routes
from domain.refusals import why_refused
from domain.scoring import city_scoring, final_scores, would_hold
from domain.state import State


class _Run:
    """The events decided so far, and the state they lead to."""

    __slots__ = ("events", "state")

    def __init__(self, state: State) -> None:
        self.state = state
        self.events: list[Event] = []

    def emit(self, event: Event) -> None:
        self.events.append(event)
        self.state = evolve(self.state, event)


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
    run = _Run(state)
    match command:
        case PlayCard(card=card):
            run.emit(CardPlayed(seat, card))
            _proceed(run, "play")
        case PlaceFloor(site=site):
            city = _played_city(run.state)
            run.emit(FloorPlaced(seat, state.board.cities[city], site))
            _score_if_full(run, city)
            _proceed(run, "play")
        case TakeCard(city=name):
            taken = state.face_up[state.board.city_index[name]]
            assert taken is not None
            run.emit(CardTaken(seat, name, taken))
            _proceed(run, "take")
        case MoveFloor(city=name, from_site=site):
            run.emit(FloorMoved(seat, name, site))
            _proceed(run, "move")
        case PlaceTradeRoute(cities=cities, side=side):
            run.emit(TradeRoutePlaced(seat, cities, side))
            _proceed(run, "trade")
        case ChooseArchitettoSite(site=site):
            work = state.architetto
            assert work is not None
            city = state.board.cards[work.card].city
            run.emit(FloorPlaced(state.board.seats, state.board.cities[city], site))
            _score_if_full(run, city)
            if not _architetto(run, final=work.source == "hidden"):
                _proceed(run, "architetto")
        case Skip():
            run.emit(StepSkipped(seat, pending.step))
            _proceed(run, "move" if pending.step == "move_floor" else "trade")
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


# --- the sequence of steps ----------------------------------------------------------------


def _played_city(state: State) -> int:
    return state.played_card().city


def _score_if_full(run: _Run, city: int) -> None:
    """R13: a city is scored the moment it holds its floor count."""
    state = run.state
    if state.winners[city] is None and state.city_floors(city) == state.board.capacity[city]:
        run.emit(city_scoring(state, city))


def _place(run: _Run) -> bool:
    """R11, R41: one decision per crest while the seat has floors and the city has room."""
    state = run.state
    card = state.played_card()
    if (
        state.placed < card.crests
        and state.supply[state.active] > 0
        and not state.city_full(card.city)
    ):
        run.emit(StepStarted(state.active, "place_floor"))
        return True
    return False


def _take(run: _Run) -> bool:
    """R14: passed only when no face-up card is left on the board."""
    state = run.state
    if any(card is not None for card in state.face_up):
        run.emit(StepStarted(state.active, "take_card"))
        return True
    return False


def _move(run: _Run) -> bool:
    """R15: only after a card with the move symbol, and only if some city qualifies."""
    state = run.state
    if state.played_card().move and moves(state):
        run.emit(StepStarted(state.active, "move_floor"))
        return True
    return False


def _refill(run: _Run) -> bool:
    """R16: the top of the draw pile onto the city whose card was taken."""
    state = run.state
    if state.taken_from is not None and state.draw:
        run.emit(CardRevealed(state.board.cities[state.taken_from], state.draw[0]))
    return False


def _trade(run: _Run) -> bool:
    """R17, R30: after a star card, if the module is on and a placement is possible."""
    state = run.state
    if state.board.trade_routes and state.played_card().star and trade_routes(state):
        run.emit(StepStarted(state.active, "trade_route"))
        return True
    return False


def _architetto_step(run: _Run) -> bool:
    return run.state.board.architetto and _architetto(run, final=False)


def _end_turn(run: _Run) -> bool:
    """R19: the next seat with cards in hand; with none left, R24 and the final scoring."""
    state = run.state
    seats = state.board.seats
    last = state.active
    for k in range(1, seats + 1):
        seat = (last + k) % seats
        if state.hands[seat]:
            run.emit(StepStarted(seat, "play_card"))
            return True
    if state.board.architetto and _architetto(run, final=True):
        return True
    run.emit(final_scores(run.state))
    run.emit(SeedRevealed(run.state.server_seed))
    return True


_Stage = Callable[[_Run], bool]
_TOWERS: tuple[tuple[str, _Stage], ...] = (
    ("place", _place),
    ("take", _take),
    ("move", _move),
    ("refill", _refill),
    ("trade", _trade),
    ("architetto", _architetto_step),
    ("end", _end_turn),
)
_CLASSIC: tuple[tuple[str, _Stage], ...] = (  # R38
    ("place", _place),
    ("move", _move),
    ("take", _take),
    ("refill", _refill),
    ("end", _end_turn),
)


def _after(stages: tuple[tuple[str, _Stage], ...]) -> dict[str, tuple[_Stage, ...]]:
    """For each step, the steps that follow it; "play" (and a placed floor) leads to all."""
    following = {"play": tuple(stage for _, stage in stages)}
    for index, (name, _) in enumerate(stages):
        following[name] = tuple(stage for _, stage in stages[index + 1 :])
    return following


_AFTER = {"towers": _after(_TOWERS), "classic": _after(_CLASSIC)}


def _proceed(run: _Run, done: str) -> None:
    """Run the steps after `done` until one waits for a decision. A placed floor resumes
    after "play", since placing repeats while crests are left (R11)."""
    for stage in _AFTER[run.state.board.edition][done]:
        if stage(run):
            return


# --- the Architetto (R20-R24) -------------------------------------------------------------


def architetto_site(state: State, city: int) -> int | None:
    """R21: the site of the Architetto's next floor, or None where the seat chooses (R21b)."""
    first, second = state.towers[2 * city], state.towers[2 * city + 1]
    if len(first) + len(second) + 1 == state.board.capacity[city]:  # R21a = R12
        if not first:
            return 0
        if not second:
            return 1
    if len(first) == len(second):
        return None
    arch = state.board.seats
    holds = (would_hold(first, arch), would_hold(second, arch))
    if holds[0] and holds[1]:
        return 0 if len(first) > len(second) else 1
    if holds[0] != holds[1]:
        return 0 if holds[0] else 1
    return 0 if len(first) < len(second) else 1


def _architetto(run: _Run, *, final: bool) -> bool:
    """Reveal and build cards for the Architetto until one needs a seat's choice (True) or
    nothing is left to build (False). During the game it builds after a two-crest card while
    the draw pile lasts, chaining on two crests (R20); at the end, its hidden cards (R24)."""
    source: Part = "hidden" if final else "draw"
    state = run.state
    work = state.architetto
    if work is None or work.source != source:  # nothing revealed yet in this phase
        if not final and state.played_card().crests != 2:
            return False
        if not _reveal(run, source, chooser=state.active):
            return False
    while True:
        if _architetto_floors(run):
            return True
        work = run.state.architetto
        assert work is not None
        if not final and run.state.board.cards[work.card].crests != 2:
            return False
        if not _reveal(run, source, chooser=work.chooser):
            return False


def _reveal(run: _Run, source: Part, chooser: int) -> bool:
    pile = run.state.hidden if source == "hidden" else run.state.draw
    if not pile:
        return False
    run.emit(ArchitettoRevealed(pile[0], source, chooser))
    return True


def _architetto_floors(run: _Run) -> bool:
    """R21: place the revealed card's floors; True when a seat must choose a site."""
    while True:
        state = run.state
        work = state.architetto
        assert work is not None
        card = state.board.cards[work.card]
        arch = state.board.seats
        if work.placed >= card.crests or state.supply[arch] == 0 or state.city_full(card.city):
            return False
        site = architetto_site(state, card.city)
        if site is None:
            run.emit(StepStarted(work.chooser, "architetto_site"))
            return True
        run.emit(FloorPlaced(arch, state.board.cities[card.city], 0 if site == 0 else 1))
        _score_if_full(run, card.city)


# --- why a command is refused -------------------------------------------------------------


def canonical(board: Board, command: Command) -> Command:
    """The one way to write `command`: a signpost is an unordered pair (R47), so its cities
    are named in board order. Commands are kept (and audited) as written so."""
    if not isinstance(command, PlaceTradeRoute):
        return command
    a, b = command.cities
    ia, ib = board.city_index.get(a, -1), board.city_index.get(b, -1)
    return PlaceTradeRoute((b, a), command.side) if ib < ia else command

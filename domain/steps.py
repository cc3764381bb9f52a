"""The steps that follow a decision, down to the next one: what `decide` runs after it has
accepted a command.

A turn is a fixed sequence of steps per edition (towers: R10-R18, classic: R38); each step
either waits for a decision (`StepStarted`), happens by itself (scoring, refill, the
Architetto, the next turn, the end), or is passed (R44). A module of its own because this is
the order of play, apart from judging the command that set it going (`domain.decide`): each
step emits its events into a `Run`, which folds them as it goes.
"""

from __future__ import annotations

from collections.abc import Callable

from domain.events import (
    ArchitettoRevealed,
    CardRevealed,
    Event,
    FloorPlaced,
    Part,
    SeedRevealed,
    StepStarted,
)
from domain.evolve import evolve
from domain.legal import moves, trade_routes
from domain.scoring import city_scoring, final_scores, would_hold
from domain.state import State


class Run:
    """The events decided so far, and the state they lead to."""

    __slots__ = ("events", "state")

    def __init__(self, state: State) -> None:
        self.state = state
        self.events: list[Event] = []

    def emit(self, event: Event) -> None:
        self.events.append(event)
        self.state = evolve(self.state, event)


def score_if_full(run: Run, city: int) -> None:
    """R13: a city is scored the moment it holds its floor count."""
    state = run.state
    if state.winners[city] is None and state.city_floors(city) == state.board.capacity[city]:
        run.emit(city_scoring(state, city))


def proceed(run: Run, done: str) -> None:
    """Run the steps after `done` until one waits for a decision. A placed floor resumes
    after "play", since placing repeats while crests are left (R11)."""
    for stage in _AFTER[run.state.board.edition][done]:
        if stage(run):
            return


# --- the sequence of steps ----------------------------------------------------------------


def _place(run: Run) -> bool:
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


def _take(run: Run) -> bool:
    """R14: passed only when no face-up card is left on the board."""
    state = run.state
    if any(card is not None for card in state.face_up):
        run.emit(StepStarted(state.active, "take_card"))
        return True
    return False


def _move(run: Run) -> bool:
    """R15: only after a card with the move symbol, and only if some city qualifies."""
    state = run.state
    if state.played_card().move and moves(state):
        run.emit(StepStarted(state.active, "move_floor"))
        return True
    return False


def _refill(run: Run) -> bool:
    """R16: the top of the draw pile onto the city whose card was taken."""
    state = run.state
    if state.taken_from is not None and state.draw:
        run.emit(CardRevealed(state.board.cities[state.taken_from], state.draw[0]))
    return False


def _trade(run: Run) -> bool:
    """R17, R30: after a star card, if the module is on and a placement is possible."""
    state = run.state
    if state.board.trade_routes and state.played_card().star and trade_routes(state):
        run.emit(StepStarted(state.active, "trade_route"))
        return True
    return False


def _architetto_step(run: Run) -> bool:
    return run.state.board.architetto and build_for_architetto(run, final=False)


def _end_turn(run: Run) -> bool:
    """R19: the next seat with cards in hand; with none left, R24 and the final scoring."""
    state = run.state
    seats = state.board.seats
    last = state.active
    for k in range(1, seats + 1):
        seat = (last + k) % seats
        if state.hands[seat]:
            run.emit(StepStarted(seat, "play_card"))
            return True
    if state.board.architetto and build_for_architetto(run, final=True):
        return True
    run.emit(final_scores(run.state))
    run.emit(SeedRevealed(run.state.server_seed))
    return True


_Stage = Callable[[Run], bool]
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


def build_for_architetto(run: Run, *, final: bool) -> bool:
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


def _reveal(run: Run, source: Part, chooser: int) -> bool:
    pile = run.state.hidden if source == "hidden" else run.state.draw
    if not pile:
        return False
    run.emit(ArchitettoRevealed(pile[0], source, chooser))
    return True


def _architetto_floors(run: Run) -> bool:
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
        score_if_full(run, card.city)

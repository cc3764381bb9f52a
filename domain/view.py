"""What one seat, or a spectator, may see of a game (R42), and what each event reveals.

These two functions are the only gates between the state of a game and anything that leaves
the server: a board view is built from `view`, an event goes out only through `redact`.
Secret until the game ends: cards in hand that were never face up, the order of the draw
pile, the Architetto's hidden cards, and the seed. Memory rule: others see only the top card
and the size of a seat's played stack, and in `classic` only how many tokens a seat holds.
Once the game is over everybody sees everything.
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from domain.commands import Command
from domain.events import (
    ArchitettoCardsSetAside,
    DrawPileStacked,
    Edition,
    Event,
    GameEnded,
    HandDealt,
    Module,
    SeedSealed,
    Step,
)
from domain.legal import legal_commands
from domain.scoring import token_values
from domain.state import Phase, State


class MarkerView(msgspec.Struct, frozen=True, gc=False):
    seat: int
    cities: tuple[str, str]
    side: str


class CityView(msgspec.Struct, frozen=True, gc=False):
    name: str
    capacity: int
    floors: int
    sites: tuple[tuple[int, ...], tuple[int, ...]]
    tokens_left: tuple[int, ...]
    face_up: str | None
    scored: bool
    high_seat: int | None = None
    low_seat: int | None = None


class SeatView(msgspec.Struct, frozen=True, gc=False):
    seat: int
    player: str
    name: str
    hand_size: int
    top_card: str | None
    played_count: int
    token_count: int
    tokens: tuple[int, ...] | None
    trade_bonus: int
    supply: int
    markers_left: int
    played: tuple[str, ...] | None = None


class ArchitettoView(msgspec.Struct, frozen=True, gc=False):
    seat: int
    supply: int
    top_card: str | None
    discard_count: int
    tokens: tuple[int, ...]
    trade_bonus: int
    hidden_count: int
    discard: tuple[str, ...] | None = None
    building: str | None = None


class PendingView(msgspec.Struct, frozen=True, gc=False):
    seat: int
    step: Step
    card: str | None = None
    city: str | None = None


class SeatClock(msgspec.Struct, frozen=True, gc=False):
    seat: int
    bank_seconds: float
    """The seat's bank of extra time (as it stood when its current turn began)."""
    timeouts: int
    """Its turns in a row that the clock played (0 once it plays one itself)."""
    away_until: str | None = None
    """Its player is on vacation until then (UTC, ISO 8601): its clock stands still."""


class ClockView(msgspec.Struct, frozen=True, gc=False):
    """A timed game's clocks at a version (docs/api.md "Clocks"); filled by the server, which
    alone keeps time: the domain never fills it."""

    per_move_seconds: float
    max_bank_seconds: float
    hand_over_after: int
    running: int | None
    """The seat whose clock runs (the one to decide), None once the game is over."""
    turn_started: str | None
    """When its turn began (UTC, ISO 8601)."""
    deadline: str | None
    """When its turn is played for it, if it has not played it (UTC, ISO 8601)."""
    seats: tuple[SeatClock, ...]


class RematchView(msgspec.Struct, frozen=True, gc=False):
    """A new table for the players of a finished game (`POST /api/games/{id}/rematch`);
    filled by the server, which alone knows who asked: the domain never fills it."""

    game_id: str
    """The new game."""
    by: str
    """The player who asked for it: its creator."""
    name: str
    """Their name."""
    invite_code: str | None = None
    """The code that opens its table: for the players of the finished game only."""


class TableRequirements(msgspec.Struct, frozen=True, gc=False):
    """What a player must show to join a table (set by its creator; the server checks it at
    each join and fills it in: the domain never does). Absent: anyone may join."""

    min_rating: int | None = None
    """The lowest rating shown that may join (a player never rated counts as 1000)."""
    max_timeouts_per_100: float | None = None
    """The most turns timed out per 100 turns, over their last 100 games, that may join (a
    player with no turn yet may)."""


class View(msgspec.Struct, frozen=True, gc=False):
    version: int
    phase: Phase
    edition: Edition
    seats: int
    modules: tuple[Module, ...]
    viewer: int | None
    cities: tuple[CityView, ...]
    players: tuple[SeatView, ...]
    architetto: ArchitettoView | None
    draw_count: int
    markers: tuple[MarkerView, ...]
    pending: PendingView | None
    hand: tuple[str, ...]
    played: tuple[str, ...]
    legal_commands: tuple[Command, ...]
    joined: tuple[str, ...]
    seed_commitment: str
    server_seed: str | None = None
    result: GameEnded | None = None
    hands: tuple[tuple[str, ...], ...] | None = None
    draw: tuple[str, ...] | None = None
    hidden: tuple[str, ...] | None = None
    names: tuple[str, ...] = ()
    """The names of the `joined` players, in the same order."""
    invite_code: str | None = None
    """The code that opens the table, for the players at it while it waits (set by the
    server, which alone knows who is asking; the domain never fills it)."""
    clock: ClockView | None = None
    """A timed game's clocks (set by the server; None in an untimed game)."""
    rematch: RematchView | None = None
    """Once the game is over, the rematch a player asked for (set by the server)."""
    requirements: TableRequirements | None = None
    """While the table waits, what a player must show to join it (set by the server; None:
    anyone may)."""


def view(state: State, seat: int | None, *, everything: bool = False) -> View:
    """The game as `seat` sees it; `None` is a spectator.

    `everything` shows every hand, the draw pile and the hidden cards: for the steps of a game
    that is over, since once it ends everybody sees everything (R42).
    """
    board = state.board
    over = state.finished or everything
    tokens = token_values(state) if state.seat_players else []
    mine = seat is not None and 0 <= seat < len(state.hands)
    return View(
        version=state.version,
        phase=state.phase,
        edition=board.edition,
        seats=board.seats,
        modules=board.modules,
        viewer=seat,
        cities=_cities(state, seat, over),
        players=_players(state, seat, tokens, over),
        architetto=_architetto(state, tokens, over),
        draw_count=len(state.draw),
        markers=tuple(
            MarkerView(m.seat, (board.cities[m.a], board.cities[m.b]), m.side)
            for m in state.markers
        ),
        pending=_pending(state),
        hand=tuple(sorted(state.hands[seat])) if mine and seat is not None else (),
        played=state.played[seat] if mine and seat is not None else (),
        legal_commands=tuple(legal_commands(state, seat)) if seat is not None else (),
        joined=state.players,
        seed_commitment=state.seed_commitment,
        server_seed=state.server_seed if over else None,
        result=state.result,
        hands=state.hands if everything else None,
        draw=state.draw if everything else None,
        hidden=state.hidden if everything else None,
        names=state.names,
    )


def _cities(state: State, seat: int | None, over: bool) -> tuple[CityView, ...]:
    if not state.towers:
        return ()
    board = state.board
    # R42: classic tokens lie face down, so others learn only that a city was scored.
    hide = board.edition == "classic" and not over
    cities = []
    for city, name in enumerate(board.cities):
        first, second = state.towers[2 * city], state.towers[2 * city + 1]
        won = state.winners[city]
        cities.append(
            CityView(
                name,
                board.capacity[city],
                len(first) + len(second),
                (first, second),
                board.tokens[city] if won is None else (),
                state.face_up[city],
                won is not None,
                None if won is None or (hide and won[0] != seat) else won[0],
                None if won is None or (hide and won[1] != seat) else won[1],
            )
        )
    return tuple(cities)


def _players(
    state: State, seat: int | None, tokens: list[list[tuple[int, int]]], over: bool
) -> tuple[SeatView, ...]:
    # R42 memory rule: others see a played stack's top card and size only, and in classic
    # only how many tokens a seat holds; at the end everything is shown.
    hide_tokens = state.board.edition == "classic" and not over
    players = []
    for s, joined in enumerate(state.seat_players):
        stack = state.played[s]
        players.append(
            SeatView(
                s,
                state.players[joined],
                state.names[joined],
                len(state.hands[s]),
                stack[-1] if stack else None,
                len(stack),
                len(tokens[s]),
                None if hide_tokens and s != seat else tuple(v for _, v in tokens[s]),
                state.bonus[s],
                state.supply[s],
                state.markers_left[s],
                stack if over or s == seat else None,
            )
        )
    return tuple(players)


def _architetto(
    state: State, tokens: list[list[tuple[int, int]]], over: bool
) -> ArchitettoView | None:
    board = state.board
    if not board.architetto or not state.played:
        return None
    a = board.seats
    discard = state.played[a]
    work = state.architetto
    return ArchitettoView(
        seat=a,
        supply=state.supply[a],
        top_card=discard[-1] if discard else None,
        discard_count=len(discard),
        tokens=tuple(v for _, v in tokens[a]),
        trade_bonus=state.bonus[a],
        hidden_count=len(state.hidden),
        discard=discard if over else None,
        building=work.card if work is not None else None,
    )


def _pending(state: State) -> PendingView | None:
    """Who decides what, with the card concerned (the played one, or the Architetto's)."""
    pending = state.pending
    if pending is None:
        return None
    card = state.card
    if pending.step == "architetto_site" and state.architetto is not None:
        card = state.architetto.card
    elif pending.step == "play_card":
        card = None
    city = state.board.cities[state.board.cards[card].city] if card else None
    return PendingView(pending.seat, pending.step, card, city)


_SERVER_ONLY = (SeedSealed, DrawPileStacked, ArchitettoCardsSetAside)


def visible(event: Event, seat: int | None, over: bool) -> bool:
    """Whether `seat` (None: a spectator) may see `event`: public events always; a dealt hand
    only by its seat; the seed, the draw pile and the hidden cards by nobody before the end."""
    if over:
        return True
    if isinstance(event, HandDealt):
        return event.seat == seat
    return not isinstance(event, _SERVER_ONLY)


def redact(events: Iterable[Event], seat: int | None, over: bool) -> list[Event]:
    return [event for event in events if visible(event, seat, over)]

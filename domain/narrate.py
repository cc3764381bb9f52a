"""Events told as short sentences, for people: the turn-by-turn text of a game.

Used by `patrician simulate --show` and anywhere a person reads what happened ("since your
last turn"). It reads events only after redaction, so it can never tell a secret.
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
from domain.state import State


def seat_names(state: State) -> tuple[str, ...]:
    """The name of the player at each seat, once the seats are drawn ('' for one unnamed)."""
    return tuple(
        state.names[index] if index < len(state.names) else "" for index in state.seat_players
    )


def who(board: Board, seat: int, names: Sequence[str] = ()) -> str:
    """A seat in words: "Ada (seat 0)" given the seats' `names`, else "seat 0"; the
    Architetto by its name."""
    if board.architetto and seat == board.seats:
        return "the Architetto"
    name = names[seat] if seat < len(names) else ""
    return f"{name} (seat {seat})" if name else f"seat {seat}"


def acted_for(board: Board, seat: int, by: str, names: Sequence[str] = ()) -> str | None:
    """Who acted for a seat, as an append's `by` says (docs/record.md), in words; None for
    the seat's own player."""
    kind, _, level = by.partition(":")
    if kind == "clock":
        return f"The time of {who(board, seat, names)} ran out: the {level} bot played its turn."
    if kind == "bot":
        return f"The {level} bot played for {who(board, seat, names)}."
    return None


def card_text(board: Board, card: str) -> str:
    info = board.cards[card]
    parts = [board.cities[info.city], f"{info.crests} crest{'s' if info.crests > 1 else ''}"]
    if info.star:
        parts.append("star")
    if info.portraits:
        parts.append("portraits " + "".join(info.portraits))
    if info.move:
        parts.append("move")
    if info.take_any:
        parts.append("take any")
    return f"{card} ({', '.join(parts)})"


def describe_command(command: Command) -> str:
    """What a seat did by sending `command`, in the past tense: "took the card on Siena"."""
    match command:
        case PlayCard(card=card):
            return f"played {card}"
        case PlaceFloor(site=site):
            return f"built a floor on site {site}"
        case TakeCard(city=city):
            return f"took the card on {city}"
        case MoveFloor(city=city, from_site=site):
            return f"moved the top floor of {city} site {site}"
        case PlaceTradeRoute(cities=(a, b), side=side):
            return f"put a {side} between {a} and {b}"
        case ChooseArchitettoSite(site=site):
            return f"chose site {site} for the Architetto's floor"
        case Skip():
            return "passed"


def _in_words(code: str) -> str:
    """An edition's or a module's id as a person reads it: "trade_routes" -> "Trade Routes"."""
    return code.replace("_", " ").title()


def narrate(board: Board, event: Event, names: Sequence[str] = ()) -> str | None:
    """One line about `event`, or None for bookkeeping that says nothing new to a person;
    each seat named by `names` (`seat_names`), or by its number alone."""
    match event:
        case GameCreated():
            kind = ", ".join(_in_words(part) for part in (event.edition, *event.modules))
            return f"A game for {event.seats} players was created: {kind}."
        case SeatJoined(player=player, name=name):
            return f"{name or player} joined."
        case SeatLeft(player=player):
            return f"{player} left the table."
        case GameCancelled():
            return "The game was cancelled before it began."
        case GameStarted():
            return "The table is full: seats are drawn and the cards dealt."
        case HandDealt(seat=seat, cards=cards):
            told = who(board, seat, names)
            return f"{told[0].upper()}{told[1:]} was dealt {', '.join(cards)}."
        case FaceUpDealt(cards=cards):
            return "Face up: " + ", ".join(cards) + "."
        case StepStarted(seat=seat, step="play_card"):
            return f"-- {who(board, seat, names)}'s turn --"
        case CardPlayed(seat=seat, card=card):
            return f"{who(board, seat, names)} plays {card_text(board, card)}."
        case FloorPlaced(seat=seat, city=city, site=site):
            return f"{who(board, seat, names)} builds a floor in {city}, site {site}."
        case CityScored():
            bonus = f" (trade bonus {event.trade_bonus:+d} each)" if event.trade_bonus else ""
            return (
                f"{event.city} is scored: {who(board, event.high_seat, names)} takes "
                f"{event.high_token}, {who(board, event.low_seat, names)} takes "
                f"{event.low_token}{bonus}."
            )
        case CardTaken(seat=seat, city=city, card=card):
            return f"{who(board, seat, names)} takes {card} from {city}."
        case FloorMoved(seat=seat, city=city, from_site=site):
            mover = who(board, seat, names)
            return f"{mover} moves the top floor of {city} site {site} to site {1 - site}."
        case CardRevealed(city=city, card=card):
            return f"{card} is turned face up on {city}."
        case TradeRoutePlaced(seat=seat, cities=(a, b), side=side):
            return f"{who(board, seat, names)} puts a {side} between {a} and {b}."
        case StepSkipped(seat=seat, step=step):
            return f"{who(board, seat, names)} passes on {step.replace('_', ' ')}."
        case ArchitettoRevealed(card=card, source=source):
            where = "its hidden cards" if source == "hidden" else "the draw pile"
            return f"The Architetto reveals {card_text(board, card)} from {where}."
        case GameEnded():
            lines = ["The game is over."]
            for score in event.scores:
                lines.append(
                    f"  {who(board, score.seat, names)}: {score.total} = {score.tokens} tokens + "
                    f"{score.portraits} portraits + {score.trade_bonus} trade + "
                    f"{score.delegates} delegates {''.join(score.delegate_cards)}"
                )
            winners = " and ".join(who(board, seat, names) for seat in event.winners)
            lines.append(f"Winner: {winners}.")
            return "\n".join(lines)
        case SeedRevealed(server_seed=seed):
            return f"The seed was {seed}."
        case StepStarted() | SeedSealed() | DrawPileStacked() | ArchitettoCardsSetAside():
            return None

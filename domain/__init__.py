"""The game of Patrician: pure functions over frozen msgspec Structs.

`decide(state, seat, command) -> events` judges a command; `evolve(state, event) -> state`
applies a fact; `fold(events)` rebuilds a game; `legal_commands`, `view` and `score` read a
state. This package imports only the standard library and msgspec: no clock, no randomness,
no I/O, so that everything above it can be replayed and verified anywhere.
"""

from domain.board import RULES_VERSION, Board
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
from domain.decide import decide, play
from domain.errors import IllegalCommand, InvalidOptions
from domain.events import Event, GameEnded, SeatScore
from domain.evolve import evolve, fold
from domain.gamedata import GameData, GameDataError, decode_game_data
from domain.legal import legal_commands
from domain.scoring import final_scores as score
from domain.setup import create_game, join_game, new_game
from domain.state import NEW_GAME, State
from domain.view import View, redact, view, visible

__all__ = [
    "NEW_GAME",
    "RULES_VERSION",
    "Board",
    "ChooseArchitettoSite",
    "Command",
    "Event",
    "GameData",
    "GameDataError",
    "GameEnded",
    "IllegalCommand",
    "InvalidOptions",
    "MoveFloor",
    "PlaceFloor",
    "PlaceTradeRoute",
    "PlayCard",
    "SeatScore",
    "Skip",
    "State",
    "TakeCard",
    "View",
    "create_game",
    "decide",
    "decode_game_data",
    "evolve",
    "fold",
    "join_game",
    "legal_commands",
    "new_game",
    "play",
    "redact",
    "score",
    "view",
    "visible",
]

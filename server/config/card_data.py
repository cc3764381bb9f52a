"""Which card file a server or a simulation plays with: the shipped one, or a user's own."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from domain.gamedata import GameData, decode_game_data


def default_card_file() -> bytes:
    return files("server").joinpath("data/game-data.json").read_bytes()


def load_game_data(path: Path | None = None) -> GameData:
    """Decode and validate the card file at `path` (the shipped file when None)."""
    return decode_game_data(path.read_bytes() if path is not None else default_card_file())

"""The JSON Schemas of the shapes others build on (commands, events, views, card files).

`docs/schemas/` holds them as files for client and verifier authors; a test keeps those files
equal to what this module produces, so the documentation cannot drift from the code.
"""

from __future__ import annotations

from typing import Any

import msgspec

from domain.commands import Command
from domain.events import Event
from domain.gamedata import GameData
from domain.view import View

SCHEMAS: dict[str, Any] = {
    "command": Command,
    "event": Event,
    "view": View,
    "game-data": GameData,
}


def schema_documents() -> dict[str, bytes]:
    """File name -> formatted JSON Schema."""
    return {
        f"{name}.schema.json": msgspec.json.format(msgspec.json.encode(msgspec.json.schema(kind)))
        + b"\n"
        for name, kind in SCHEMAS.items()
    }

"""The shapes of the HTTP API: request and response bodies (msgspec Structs).

These are contracts with independent clients: documented in the OpenAPI document Litestar
builds from them and in `docs/api.md`. Requests refuse unknown fields.
"""

from __future__ import annotations

from typing import Annotated

import msgspec

from domain.commands import Command
from domain.events import Edition, Event, GameEnded, Module, Step

Name = Annotated[str, msgspec.Meta(min_length=1, max_length=40)]
Entropy = Annotated[str, msgspec.Meta(max_length=256)]
CommandId = Annotated[str, msgspec.Meta(min_length=1, max_length=128)]
Commands = Annotated[list[Command], msgspec.Meta(min_length=1, max_length=30)]
Version = Annotated[int, msgspec.Meta(ge=0)]


class _Request(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    pass


class NewPlayer(_Request, frozen=True):
    name: Name


class PlayerCreated(msgspec.Struct, frozen=True):
    player_id: str
    token: str
    """The bearer secret: shown once, kept only as a hash."""


class NewGame(_Request, frozen=True):
    seats: int
    edition: str = "towers"
    modules: list[str] = []
    entropy: Entropy = ""


class GameCreated(msgspec.Struct, frozen=True):
    game_id: str
    invite_code: str
    seed_commitment: str
    version: int


class JoinGame(_Request, frozen=True):
    invite_code: Annotated[str, msgspec.Meta(max_length=128)]
    entropy: Entropy = ""


class Joined(msgspec.Struct, frozen=True):
    game_id: str
    version: int
    started: bool
    seat: int | None
    """Your seat in turn order, once the game has started (seats are drawn at the start)."""


class SendCommands(_Request, frozen=True):
    expected_version: Version
    command_id: CommandId
    commands: Commands


class VersionedEvent(msgspec.Struct, frozen=True):
    version: int
    event: Event


class CommandsAccepted(msgspec.Struct, frozen=True):
    version: int
    first_version: int
    repeated: bool
    """True when this command id had been accepted before: this is its first result again."""
    events: list[VersionedEvent]


class EventList(msgspec.Struct, frozen=True):
    version: int
    events: list[VersionedEvent]


class LobbyGame(msgspec.Struct, frozen=True):
    game_id: str
    edition: Edition
    seats: int
    modules: tuple[Module, ...]
    joined: tuple[str, ...]
    version: int


class MyGame(msgspec.Struct, frozen=True):
    game_id: str
    edition: Edition
    seats: int
    modules: tuple[Module, ...]
    phase: str
    seat: int | None
    your_decision: bool
    step: Step | None
    version: int
    since: str | None
    """When the game started waiting for its current decision (UTC, ISO 8601)."""
    waited_seconds: float | None
    result: GameEnded | None = None


class ErrorBody(msgspec.Struct, frozen=True, omit_defaults=True):
    status: int
    error: str
    """A stable machine-readable code."""
    message: str
    request_id: str = ""
    field: str | None = None
    rule: str | None = None
    index: int | None = None
    current_version: int | None = None


class Health(msgspec.Struct, frozen=True):
    status: str
    redis: str

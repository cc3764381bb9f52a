"""The game record: one JSON document that holds a whole game, for export and offline audit.

Format `patrician-record/1`, documented in `docs/record.md`. It holds the options and the card
data the game was created with (R50), the players, the fairness data (R40), the deal once the
game is over, every command with its seat, time and command id, the result, and the event log
with each entry's exact bytes and chain hash, so a verifier in any language can check the
chain, re-derive the deal and replay every command. During play it is redacted for the caller
like everything else: hidden events are left out and the seed and the deal are absent.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from domain.commands import Command
from domain.events import (
    ArchitettoCardsSetAside,
    DrawPileStacked,
    Edition,
    Event,
    FaceUpDealt,
    GameCreated,
    GameEnded,
    GameStarted,
    HandDealt,
    Module,
)
from domain.gamedata import GameData
from domain.state import State
from domain.view import visible
from evidence.signatures import RecordSignature

FORMAT = "patrician-record/1"


class RecordPlayer(msgspec.Struct, frozen=True):
    joined: int
    player_id: str
    name: str
    seat: int | None


class RecordFairness(msgspec.Struct, frozen=True):
    shuffle_algorithm: str
    seed_commitment: str
    entropies: tuple[str, ...]
    server_seed: str | None


class RecordDeal(msgspec.Struct, frozen=True):
    seat_players: tuple[int, ...]
    hands: tuple[tuple[str, ...], ...]
    draw_pile: tuple[str, ...]
    face_up: tuple[str, ...]
    architetto_hidden: tuple[str, ...]


class RecordCommand(msgspec.Struct, frozen=True):
    command_id: str
    kind: str
    player_id: str
    seat: int | None
    time: str
    commands: tuple[Command, ...]
    first_version: int
    last_version: int
    by: str = ""


class RecordEvent(msgspec.Struct, frozen=True):
    version: int
    hash: str
    data: str


class RecordHead(msgspec.Struct, frozen=True):
    version: int
    hash: str


class Record(msgspec.Struct, frozen=True):
    format: str
    game_id: str
    complete: bool
    rules_version: int
    edition: Edition
    seats: int
    modules: tuple[Module, ...]
    game_data: GameData
    players: tuple[RecordPlayer, ...]
    fairness: RecordFairness
    deal: RecordDeal | None
    commands: tuple[RecordCommand, ...]
    result: GameEnded | None
    events: tuple[RecordEvent, ...]
    head: RecordHead
    signature: RecordSignature | None = None
    """The server's seal on a complete record (None during play), docs/record.md."""


class LoggedEvent(msgspec.Struct, frozen=True, gc=False):
    """An event with its place in the log: version, exact stored bytes, chain hash."""

    version: int
    event: Event
    data: bytes
    hash: str


def build_record(
    game_id: str,
    state: State,
    log: Sequence[LoggedEvent],
    commands: Sequence[RecordCommand],
    seat: int | None,
) -> Record:
    """The record of the game whose whole log is `log` (folded: `state`), as `seat` (None:
    anyone) may see it."""
    created = log[0].event
    assert isinstance(created, GameCreated)
    over = state.finished
    seat_players = state.seat_players
    result = state.result
    server_seed = state.server_seed if over else None
    return Record(
        format=FORMAT,
        game_id=game_id,
        complete=over,
        rules_version=created.rules_version,
        edition=created.edition,
        seats=created.seats,
        modules=created.modules,
        game_data=created.game_data,
        players=players_of(state),
        fairness=RecordFairness(
            shuffle_algorithm=created.shuffle_algorithm,
            seed_commitment=created.seed_commitment,
            entropies=state.entropies,
            server_seed=server_seed,
        ),
        deal=deal_of([entry.event for entry in log]) if over and seat_players else None,
        commands=tuple(commands),
        result=result,
        events=tuple(
            RecordEvent(entry.version, entry.hash, entry.data.decode())
            for entry in log
            if visible(entry.event, seat, over)
        ),
        head=RecordHead(log[-1].version, log[-1].hash),
    )


def players_of(state: State) -> tuple[RecordPlayer, ...]:
    """The players in join order, with the seat each one holds once the game has started."""
    seat_of = {join: seat for seat, join in enumerate(state.seat_players)}
    return tuple(
        RecordPlayer(i, player, name, seat_of.get(i))
        for i, (player, name) in enumerate(zip(state.players, state.names, strict=True))
    )


def deal_of(log: Sequence[Event]) -> RecordDeal:
    """R50: the seating, the hands, the whole shuffled pile top first, the face-up cards and
    the hidden cards, as the dealing events of `log` hold them."""
    seat_players: tuple[int, ...] = ()
    hands: dict[int, tuple[str, ...]] = {}
    pile: tuple[str, ...] = ()
    face_up: tuple[str, ...] = ()
    hidden: tuple[str, ...] = ()
    for event in log:
        if isinstance(event, GameStarted):
            seat_players = event.seat_players
        elif isinstance(event, HandDealt):
            hands[event.seat] = event.cards
        elif isinstance(event, DrawPileStacked):
            pile = event.cards
        elif isinstance(event, FaceUpDealt):
            face_up = event.cards
        elif isinstance(event, ArchitettoCardsSetAside):
            hidden = event.cards
    return RecordDeal(
        seat_players=seat_players,
        hands=tuple(hands[s] for s in sorted(hands)),
        draw_pile=pile,
        face_up=face_up,
        architetto_hidden=hidden,
    )

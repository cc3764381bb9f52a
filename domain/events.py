"""The facts of a game, in past tense, as tagged, frozen msgspec Structs.

Events carry the outcome of randomness (which card was revealed), so replaying a log never
re-rolls. Each event is public, private to one seat, or for the server only (`visibility`);
the one redaction gate of `domain.view` (`visible`) reads it on every outbound path.

Stability: tags never change, new fields get defaults, a field never changes type.
In events a "seat" may be the Architetto, whose number is the seat count (R22).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Annotated, Literal, final

import msgspec
from msgspec.structs import force_setattr

from domain.commands import Side, Site
from domain.gamedata import GameData

Step = Literal[
    "play_card", "place_floor", "take_card", "move_floor", "trade_route", "architetto_site"
]
Edition = Literal["towers", "classic"]
Module = Literal["trade_routes", "delegates"]
Part = Literal["draw", "hidden"]


class _Event(msgspec.Struct, frozen=True, gc=False, tag_field="type"):
    """Events are stored: they are read leniently, so that an event written by a newer
    version, with a field added (and its default), still folds here."""


# --- creation and setup -------------------------------------------------------------------


@final
class GameCreated(_Event, tag="game_created", frozen=True):
    """R1, R40: the options, the card data (R50) and the seed commitment, fixed for good."""

    rules_version: int
    edition: Edition
    seats: int
    modules: tuple[Module, ...]
    seed_commitment: str
    shuffle_algorithm: str
    game_data: GameData


@final
class SeedSealed(_Event, tag="seed_sealed", frozen=True):
    """The server's secret seed, kept with the game and published only at its end (R40, R42)."""

    server_seed: str


@final
class SeatJoined(_Event, tag="seat_joined", frozen=True):
    """A player took a place at the table, adding entropy to the shuffle (R40); `name` is the
    name they play under, as it stood when they joined."""

    player: str
    entropy: str
    name: str = ""


@final
class SeatLeft(_Event, tag="seat_left", frozen=True):
    """A player gave up their place before the table was full; their entropy goes with them
    and the places after theirs move up one in join order."""

    player: str


@final
class GameCancelled(_Event, tag="game_cancelled", frozen=True):
    """The creator called the game off before it started; the seed is revealed next, as at
    the end of a game (nothing was dealt, so nothing is secret)."""

    player: str


@final
class GameStarted(_Event, tag="game_started", frozen=True):
    """R7: the table is full; `seat_players[seat]` is the join index of the seat's player."""

    seat_players: tuple[int, ...]


@final
class HandDealt(_Event, tag="hand_dealt", frozen=True):
    """R6: a seat's three star cards; private to that seat. `salt` (docs/shuffle.md) keeps
    the event's public chain hash from telling which cards it holds."""

    seat: int
    cards: tuple[str, ...]
    salt: str = ""


@final
class DrawPileStacked(_Event, tag="draw_pile_stacked", frozen=True):
    """R6: the whole shuffled pile, top first (R50), before any card left it: the face-up
    cards, then the Architetto's hidden cards, then the pile of play. For the server only;
    salted like `HandDealt`."""

    cards: tuple[str, ...]
    salt: str = ""


@final
class ArchitettoCardsSetAside(_Event, tag="architetto_cards_set_aside", frozen=True):
    """R6, R20: the Architetto's three hidden cards, in the order set aside; server only,
    salted like `HandDealt`."""

    cards: tuple[str, ...]
    salt: str = ""


@final
class FaceUpDealt(_Event, tag="face_up_dealt", frozen=True):
    """R6: one card face up on each city, in board order, from the top of the draw pile."""

    cards: tuple[str, ...]


# --- the turn -----------------------------------------------------------------------------


@final
class StepStarted(_Event, tag="step_started", frozen=True):
    """The game waits for `seat` to make a decision of kind `step` (R44); `play_card` is the
    start of the seat's turn (R19)."""

    seat: int
    step: Step


@final
class CardPlayed(_Event, tag="card_played", frozen=True):
    """R10."""

    seat: int
    card: str


@final
class FloorPlaced(_Event, tag="floor_placed", frozen=True):
    """R11, R21: a floor on top of a site; `seat` may be the Architetto."""

    seat: int
    city: str
    site: Site


_LEGACY_BONUS = (
    "Read only: rules version 2's spelling of trade_bonus, found in the stored events of "
    "version-2 games (docs/rules-versions.md); never sent, and taken as trade_bonus when read."
)


@final
class CityScored(_Event, tag="city_scored", frozen=True):
    """R13, R32: the taller tower's winner took the high token, the shorter's the low one;
    each of them also gained `trade_bonus` from the trade routes pointing to the city
    (spelled `bonus` in the stored events of rules version 2: docs/rules-versions.md)."""

    city: str
    high_seat: int
    high_token: int
    low_seat: int
    low_token: int
    trade_bonus: int = 0
    bonus: Annotated[int, msgspec.Meta(description=_LEGACY_BONUS)] | msgspec.UnsetType = (
        msgspec.UNSET
    )

    def __post_init__(self) -> None:
        """The upcaster of the one field rules version 3 renamed: `bonus` -> `trade_bonus`.

        Why: one name means one thing, and the final scores already call this concept
        `SeatScore.trade_bonus`. But the events a version-2 game stored keep their bytes for
        good (they are hashed into its chain and audited byte for byte, and the game may still
        be in play: `domain.shapes.stored_bytes` writes them), so the old spelling must still
        be read. When `bonus` was decoded (or given), it moves into `trade_bonus` and is reset
        to UNSET, which msgspec never encodes. msgspec calls this on every construction, JSON
        decode and `msgspec.convert`, so no code anywhere meets the old shape: an event read
        from version-2 bytes equals the one decided today, and is served as `trade_bonus`."""
        legacy = self.bonus
        if legacy is msgspec.UNSET:
            return
        if self.trade_bonus not in (0, legacy):
            raise ValueError("city_scored names two different bonuses (bonus, trade_bonus)")
        force_setattr(self, "trade_bonus", legacy)
        force_setattr(self, "bonus", msgspec.UNSET)


@final
class CardTaken(_Event, tag="card_taken", frozen=True):
    """R14: a face-up card went to the seat's hand."""

    seat: int
    city: str
    card: str


@final
class FloorMoved(_Event, tag="floor_moved", frozen=True):
    """R15, R46: the top floor of `from_site` went onto the other site."""

    seat: int
    city: str
    from_site: Site


@final
class StepSkipped(_Event, tag="step_skipped", frozen=True):
    """The seat declined an optional step (R15, R30)."""

    seat: int
    step: Step


@final
class CardRevealed(_Event, tag="card_revealed", frozen=True):
    """R16: the top card of the draw pile went face up on the city."""

    city: str
    card: str


@final
class TradeRoutePlaced(_Event, tag="trade_route_placed", frozen=True):
    """R30: a marker on the signpost between two cities."""

    seat: int
    cities: tuple[str, str]
    side: Side


@final
class ArchitettoRevealed(_Event, tag="architetto_revealed", frozen=True):
    """R20, R24: the Architetto revealed a card from the draw pile or its hidden cards and
    will build its crests; the card goes on its discard pile."""

    card: str
    source: Part
    chooser: int


# --- the end ------------------------------------------------------------------------------


@final
class SeatScore(msgspec.Struct, frozen=True, gc=False):
    """R36: a final score and its parts; `seat` may be the Architetto."""

    seat: int
    tokens: int
    portraits: int
    trade_bonus: int
    delegates: int
    total: int
    floors_on_board: int
    delegate_cards: tuple[str, ...] = ()


@final
class GameEnded(_Event, tag="game_ended", frozen=True):
    """R36, R37, R49: final scores and the winners (several on a shared win)."""

    scores: tuple[SeatScore, ...]
    winners: tuple[int, ...]
    architetto_won: bool = False


@final
class SeedRevealed(_Event, tag="seed_revealed", frozen=True):
    """R40: the server seed, published at the end so that anyone can re-derive the deal."""

    server_seed: str


Event = (
    FloorPlaced
    | StepStarted
    | CardPlayed
    | CardTaken
    | CardRevealed
    | CityScored
    | FloorMoved
    | StepSkipped
    | TradeRoutePlaced
    | ArchitettoRevealed
    | GameCreated
    | SeedSealed
    | SeatJoined
    | GameStarted
    | HandDealt
    | DrawPileStacked
    | ArchitettoCardsSetAside
    | FaceUpDealt
    | GameEnded
    | SeedRevealed
    | SeatLeft
    | GameCancelled
)


def log_finished(events: Sequence[Event]) -> bool:
    """Whether `events` is the whole log of a game that is finished for good: it ends with
    the result (or the cancellation) and the revealed seed, so everything in it is public."""
    return any(type(event) is GameEnded or type(event) is GameCancelled for event in events[-2:])


event_decoder = msgspec.json.Decoder(Event)
events_decoder = msgspec.json.Decoder(list[Event])


def decode_events(datas: Iterable[bytes]) -> list[Event]:
    """Stored events, each its JSON bytes, decoded in one pass (one list, one decoder call)."""
    return events_decoder.decode(b"[" + b",".join(datas) + b"]")


encoder = msgspec.json.Encoder()
"""The current shape of events, as served (events, streams, replays). The bytes a game
stores are `domain.shapes.stored_bytes`, in the shape of the game's rules version."""

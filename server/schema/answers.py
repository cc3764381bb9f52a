"""The answer bodies of the HTTP API (msgspec Structs): contracts with independent clients,
documented in the OpenAPI document Litestar builds from them and in `docs/api.md`.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from domain.commands import Command
from domain.events import Edition, Event, GameEnded, Module
from domain.view import TableRequirements, View
from evidence.signatures import Receipt
from store.inbox import InboxEntry


class PlayerCreated(msgspec.Struct, frozen=True):
    player_id: str
    token: str
    """The bearer secret: shown once, kept only as a hash."""


class PlayerInfo(msgspec.Struct, frozen=True):
    player_id: str
    name: str
    rating: int | None = None
    """Their rating (docs/api.md, "Ratings"); null until a game of theirs was rated."""
    provisional: bool = True
    """Fewer than 5 rated games."""
    rated_games: int = 0


class CreatedGame(msgspec.Struct, frozen=True):
    game_id: str
    invite_code: str
    seed_commitment: str
    version: int
    receipt: Receipt
    """The server's signature on the game's head at `version` (docs/record.md, "Receipts")."""
    repeated: bool = False
    """True when this command id had created the game before: this is its answer again."""


class RematchCreated(msgspec.Struct, frozen=True):
    """The new table of a finished game's players (`POST /api/games/{id}/rematch`)."""

    game_id: str
    invite_code: str
    """The code that opens its table, to join it (`POST /api/games/{game_id}/join`)."""
    seed_commitment: str
    version: int
    receipt: Receipt
    """The server's signature on the new game's head at `version` (docs/record.md,
    "Receipts"): its creation, or its last bot's join."""
    repeated: bool
    """True when a rematch of this game had been asked for before: this is it again."""
    rematch_of: str
    """The finished game."""
    by: str
    """The player who asked for it first: the new game's creator."""
    name: str
    """Their name."""


class Joined(msgspec.Struct, frozen=True):
    game_id: str
    version: int
    started: bool
    seat: int | None
    """Your seat in turn order, once the game has started (seats are drawn at the start)."""
    receipt: Receipt
    """The server's signature on the game's head at `version` (docs/record.md, "Receipts")."""


class VersionedEvent(msgspec.Struct, frozen=True, omit_defaults=True):
    version: int
    event: Event
    text: str | None = None
    """The event in words, for people; in event lists only, and there left out for
    bookkeeping that says nothing new."""


class CommandsAccepted(msgspec.Struct, frozen=True):
    version: int
    first_version: int
    repeated: bool
    """True when this command id had been accepted before: this is its first result again."""
    events: list[VersionedEvent]
    receipt: Receipt
    """The server's signature on the game's head at `version` (docs/record.md, "Receipts"):
    keep it, it proves what the server acknowledged."""
    board: View | msgspec.UnsetType = msgspec.UNSET
    """Only when asked for (`?include=board`): your board as it stands once the commands are
    appended, as `GET /api/games/{game_id}/board` gives it (a bot may have moved since)."""


class Resigned(msgspec.Struct, frozen=True):
    """A seat handed to a bot for good: which, to which level, at which version."""

    game_id: str
    seat: int
    level: str
    version: int


class TableChanged(msgspec.Struct, frozen=True):
    """A place given up, or a game cancelled: the game's version and phase after it."""

    game_id: str
    version: int
    phase: str
    receipt: Receipt
    """The server's signature on the game's head at `version` (docs/record.md, "Receipts")."""


class Revealed(msgspec.Struct, frozen=True):
    """On a live stream, right after the end: the earlier events the caller could not see."""

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
    names: tuple[str, ...] = ()
    """The names of the `joined` players, in the same order (its creator first)."""
    ratings: tuple[int | None, ...] = ()
    """The rating of each of the `joined` players, in the same order (null: not rated yet;
    docs/api.md, "Ratings")."""
    requirements: TableRequirements | None = None
    """What a player must show to join (null: nothing; docs/api.md, "A table's
    requirements")."""


# A game in the caller's list (`/api/me/games`): its inbox entry as the workers keep it
# (`store.inbox.InboxEntry`, the one place its fields are named), and how long it has waited
# now, worked out when it is read. (No docstring: it would become the document's words.)
class MyGame(InboxEntry, frozen=True, kw_only=True):
    waited_seconds: float | None


class WebhookInfo(msgspec.Struct, frozen=True):
    url: str
    enabled: bool
    disabled_reason: str | None = None
    secret: str | None = None
    """The signing secret (`whsec_...`): in the answer that set this URL only, never again."""


class QuietHoursInfo(msgspec.Struct, frozen=True):
    start: str
    end: str
    time_zone: str


class EmailInfo(msgspec.Struct, frozen=True):
    address: str
    confirmed: bool
    """Whether you followed the confirmation link sent to it (nothing else is sent before)."""


class DigestInfo(msgspec.Struct, frozen=True):
    hour: int
    time_zone: str
    """The time zone `hour` is in (the one set, or the one it defaulted to)."""


class PushDeviceInfo(msgspec.Struct, frozen=True):
    """A device of yours that gets your notifications by Web Push."""

    id: str
    name: str
    service: str
    """The host of its push service (its endpoint, a secret of that browser, is not shown)."""
    created: str
    """When it subscribed (UTC, ISO 8601)."""
    current: bool
    """Whether it subscribed with the server's current push key; false: it gets nothing
    until it subscribes again (the page does so when it is next opened on that device)."""


class PushKeyInfo(msgspec.Struct, frozen=True):
    public_key: str | None
    """The server's public VAPID key (`applicationServerKey`, base64url); null: Web Push is off
    on this server."""


class Notifications(msgspec.Struct, frozen=True):
    webhook: WebhookInfo | None
    quiet_hours: QuietHoursInfo | None
    reminder_hours: list[float]
    email: EmailInfo | None = None
    digest: DigestInfo | None = None
    """The daily digest, if you get one instead of an e-mail per turn."""
    push: list[PushDeviceInfo] = []
    """Your devices subscribed to Web Push (set with `POST /api/me/push`)."""


class VacationInfo(msgspec.Struct, frozen=True):
    allowance_days: int
    """The days each player may take in a calendar year (UTC)."""
    used_days: float
    """Taken or booked this year."""
    until: str | None
    """The end of the vacation going on (UTC, ISO 8601); None: not on vacation."""


class Health(msgspec.Struct, frozen=True):
    status: str
    redis: str


class RatedPlayer(msgspec.Struct, frozen=True):
    """A player's (or a bot level's) rating: `rating` is the number shown, 1000 + 40 * (mu -
    3 * sigma), rounded (docs/api.md, "Ratings")."""

    place: int
    """Its place in the list (1: the highest rating; equal ratings share a place)."""
    player_id: str
    """A player's id, or `bot:<level>` for a level of the server's bots."""
    name: str
    rating: int
    provisional: bool
    """Fewer than 5 rated games: the figure may still move a lot."""
    games: int
    mu: float
    sigma: float


class RatingList(msgspec.Struct, frozen=True):
    total: int
    """How many are rated in all."""
    offset: int
    ratings: tuple[RatedPlayer, ...]


# --- a player's page (`GET /api/players/{id}/profile`, docs/api.md "A player's page") -------


class ProfilePlayer(msgspec.Struct, frozen=True):
    """A player at one of the games of a player's page."""

    player_id: str
    name: str
    seat: int | None
    """Their seat once the seats are drawn (null at a table that waits)."""
    bot: str = ""
    """The level of the server's bot that plays as this player (`greedy`...; "" a person)."""


class Standing(msgspec.Struct, frozen=True):
    """How a finished game went for the page's player."""

    place: int
    """1: first (a shared win ranks each winner first); the Architetto is not counted."""
    of: int
    """How many players."""
    points: int
    won: bool


class ProfileGame(msgspec.Struct, frozen=True):
    """One game of the page's player: only what anyone may see of it (no live score)."""

    game_id: str
    phase: str
    """`waiting` (an open table), `playing` or `over`."""
    edition: Edition
    seats: int
    modules: tuple[Module, ...]
    seat: int | None
    """The page's player's seat (null before the seats are drawn)."""
    players: tuple[ProfilePlayer, ...]
    """Everyone at the game, the page's player too: in seat order once the seats are drawn,
    else in the order they joined."""
    since: str | None
    """When the game last changed (UTC, ISO 8601): its last append."""
    ended: str | None
    """When it ended (null but once it is over)."""
    standing: Standing | None
    """The page's player's place, points and win, once the game is over (null before)."""
    result: GameEnded | None
    """The final scores and winners, as the event `game_ended` (null before the end)."""
    accuracy: float | None = None
    """The page's player's accuracy in the game, once it is analysed (docs/api.md,
    "Analysis"; null before, or when no decision of theirs was judged)."""


class RatingPoint(msgspec.Struct, frozen=True):
    """The player's rating after one rated game."""

    game_id: str
    ended: str
    rating: int
    """The rating shown after it."""
    change: int
    """What the game did to the shown rating."""
    games: int
    """Their rated games by then."""


class ReliabilityRecord(msgspec.Struct, frozen=True):
    """Turns that timed out over the player's last `window` games at most (docs/api.md, "A
    player's page": what counts as a turn, and why a vacation or quiet hours count as on
    time)."""

    window: int
    """How many games it looks back over at most (100)."""
    games: int
    """The games it looked at: the player's latest in play or finished."""
    turns: int
    """Their turns in those games, each counted once over."""
    timed_out: int
    """Turns the clock played when their deadline passed."""
    per_100: float | None
    """`timed_out` per 100 `turns`, to one decimal; null while there is no turn."""
    excused: int
    """Turns the clock played during the player's vacation or quiet hours: on time."""
    handed_over: int
    """Turns a bot played after the player handed the seat over: in no count above."""


class PlayerProfile(msgspec.Struct, frozen=True):
    """A player's page: their rating and its history, their reliability record and their
    games (latest first, a page at a time)."""

    player_id: str
    name: str
    bot: str
    """The level of the server's bot that plays as this player ("" a person)."""
    rating: int | None
    """As `GET /api/players/{id}` shows it (null: never rated)."""
    provisional: bool
    rated_games: int
    sigma: float | None
    """The uncertainty of the rating (as the rating list's; null: never rated)."""
    rating_history: tuple[RatingPoint, ...]
    """After each rated game, oldest first (the last 500 at most)."""
    reliability: ReliabilityRecord
    total: int
    """How many games the player has (open tables, in play and over; none called off)."""
    offset: int
    games: tuple[ProfileGame, ...]
    """From the latest change down, from `offset` on."""
    accuracy: AccuracyRecord = msgspec.field(default_factory=lambda: AccuracyRecord(0, 0, None))
    """Over every analysed game of theirs."""


class AccuracyRecord(msgspec.Struct, frozen=True):
    """A player's accuracy over their analysed games: the mean of every judged decision of
    theirs (each game weighted by its judged decisions)."""

    games: int
    own_decisions: int
    """Their own judged decisions in those games."""
    accuracy: float | None
    """0..100, one decimal; null while no game of theirs is analysed."""


# --- a finished game's analysis (`GET /api/games/{id}/analysis`, docs/api.md "Analysis") -----


class JudgedDecision(msgspec.Struct, frozen=True):
    """One decision of the game, judged from what its seat could see at its version."""

    version: int
    """The version the game stood at when it was made (the replay's step)."""
    seat: int
    played: Command
    best: Command
    """The option the search preferred; `played` when it agrees."""
    chance_before: float
    """The seat's chance to win with `best` (0..1, the search's estimate)."""
    chance_after: float
    """Its chance with `played`."""
    loss: float
    """`chance_before - chance_after`."""
    mark: Literal["inaccuracy", "mistake", "blunder"] | None
    options: int
    """How many commands were legal (a decision with one is not judged)."""
    by: str = ""
    """"" the seat's player; else who acted for them (a timeout's `clock:<level>`, a seat
    handed over's `bot:<level>`): such a decision counts in no figure of the seat."""


class SeatAnalysis(msgspec.Struct, frozen=True):
    seat: int
    accuracy: float | None
    """0..100 over the player's own judged decisions (null: none)."""
    own_decisions: int
    """The player's own judged decisions (not those made for them)."""
    inaccuracies: int
    mistakes: int
    blunders: int


class GameAnalysis(msgspec.Struct, frozen=True):
    game_id: str
    status: Literal["queued", "running", "done", "off"]
    """`off`: this server analyses no game."""
    decisions: int
    """How many decisions the game has (0 while queued)."""
    analysed: int
    """How many were analysed so far."""
    thresholds: dict[str, float]
    """The least loss of each mark."""
    seats: tuple[SeatAnalysis, ...]
    judged: tuple[JudgedDecision, ...]

"""What the HTTP API does, behind thin controllers: accounts, games, reads, redaction.

Every write goes through the command path of `store.games`; every outbound event and board goes
through the domain's one redaction gate (`domain.view.visible` / `view`), for the caller's seat
in that game (a spectator when the caller holds none). Randomness (ids, tokens, seeds) and the
clock are passed in by the composition root, so tests can fix them.
"""

from __future__ import annotations

import base64
import secrets
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime
from typing import TypeVar

import msgspec
from cachetools import LRUCache

from domain.events import Event, GameCancelled, GameEnded, SeedRevealed, event_decoder
from domain.setup import check_options
from domain.state import State
from domain.view import View, view, visible
from projections.record import LoggedBatch, LoggedEvent, Record, build_record
from projections.replay import replay, view_at
from server import models
from store import accounts as acc
from store import games as gm
from store import ops
from store.client import AsyncEventStore
from store.errors import StoreError
from store.records import Batch

Clock = Callable[[], datetime]
T = TypeVar("T")


LISTING_GRACE_SECONDS = 600.0
"""How long a listing may wait for the game or the seat it was made for (`_listing_cutoff`)."""


class Unauthorized(StoreError):
    """No bearer token, or one that belongs to nobody."""


class NotFound(StoreError):
    """Nothing at this address (a version beyond the game's, say)."""


def iso(moment: datetime) -> str:
    """UTC, ISO 8601, to the millisecond: `2026-11-30T01:36:40.811Z`."""
    if moment.utcoffset():
        moment = moment.astimezone(UTC)
    return f"{moment:%Y-%m-%dT%H:%M:%S}.{moment.microsecond // 1000:03d}Z"


class Service:
    def __init__(
        self,
        store: AsyncEventStore,
        games: gm.Games,
        accounts: acc.Accounts,
        *,
        follow_store: AsyncEventStore | None = None,
        clock: Clock = lambda: datetime.now(UTC),
        token_bytes: Callable[[int], bytes] = secrets.token_bytes,
        cache_size: int = 256,
    ) -> None:
        self.store = store
        self.follow_store = follow_store or store
        self.games = games
        self.accounts = accounts
        self.clock = clock
        self.token_bytes = token_bytes
        # Every cached document is a pure function of its key: a token's player never changes,
        # nor does a seat's view of a game at a version.
        self._tokens: LRUCache[str, str] = LRUCache(16 * cache_size)
        self._names: LRUCache[str, str] = LRUCache(16 * cache_size)
        self._views: LRUCache[tuple[str, int, int | None, bool], bytes] = LRUCache(16 * cache_size)
        self._replays: LRUCache[tuple[str, int, int | None], bytes] = LRUCache(cache_size)

    async def run(self, op: ops.Op[T]) -> T:
        return await self.store.run(op)

    def _id(self, prefix: str, size: int = 9) -> str:
        return prefix + self.token_bytes(size).hex()

    async def check_store(self) -> None:
        """One round trip to the store; raises `StoreUnavailable` when it does not answer."""
        await self.store.head("healthz")

    # --- accounts ------------------------------------------------------------------------

    async def create_player(self, name: str) -> models.PlayerCreated:
        player = acc.Player(self._id("p"), acc.clean_name(name), iso(self.clock()))
        token = base64.urlsafe_b64encode(self.token_bytes(32)).rstrip(b"=").decode()
        await self.run(acc.create_player_op(self.accounts, player, token))
        return models.PlayerCreated(player.player_id, token)

    async def authenticate(self, token: str) -> str:
        """The player a bearer token acts for (tokens never change, so they are cached)."""
        player = self._tokens.get(token)
        if player is None:
            player = await self.run(acc.authenticate_op(self.accounts, token))
            if player is None:
                raise Unauthorized("unknown token")
            self._tokens[token] = player
        return player

    async def name_of(self, player_id: str) -> str:
        """A player's name (names never change, so they are cached); `NotFound` if unknown."""
        name = self._names.get(player_id)
        if name is None:
            found = await self.run(acc.players_op(self.accounts, [player_id]))
            if player_id not in found:
                raise NotFound(f"no player has the id {player_id!r}")
            name = self._names[player_id] = found[player_id].name
        return name

    async def player(self, player_id: str) -> models.PlayerInfo:
        return models.PlayerInfo(player_id, await self.name_of(player_id))

    # --- games ---------------------------------------------------------------------------

    async def create_game(self, player: str, request: models.NewGame) -> models.GameCreated:
        check_options(request.edition, request.seats, request.modules, self.games.game_data)
        game_id = self._id("g")
        if request.command_id is not None:  # a retry creates (or finds) the same game
            request_digest = gm.digest(b"create", msgspec.json.encode(request))
            game_id = await self.run(
                acc.claim_creation_op(
                    self.accounts, player, request.command_id, game_id, request_digest
                )
            )
        name = await self.name_of(player)
        now = self.clock()
        outcome = await self.run(
            gm.create_op(
                self.games,
                game_id,
                player=player,
                name=name,
                edition=request.edition,
                seats=request.seats,
                modules=request.modules,
                entropy=request.entropy,
                server_seed=self.token_bytes(32),
                now=iso(now),
                listings=(
                    acc.list_game(self.accounts, player, game_id, now.timestamp()),
                    acc.open_game(self.accounts, game_id, now.timestamp()),
                ),
            )
        )
        return models.GameCreated(
            game_id,
            gm.invite_code_of(outcome.state),
            outcome.state.seed_commitment,
            outcome.last_version,
            outcome.repeated,
        )

    async def join(self, game_id: str, player: str, request: models.JoinGame) -> models.Joined:
        now = self.clock()
        name = await self.name_of(player)
        outcome = await self.run(
            gm.join_op(
                self.games,
                game_id,
                player=player,
                name=name,
                invite_code=request.invite_code,
                entropy=request.entropy,
                now=iso(now),
                listings=(acc.list_game(self.accounts, player, game_id, now.timestamp()),),
            )
        )
        started = outcome.state.phase != "waiting"
        if started:
            await self.run(acc.close_game_op(self.accounts, game_id))
        return models.Joined(
            game_id, outcome.last_version, started, gm.seat_of(outcome.state, player)
        )

    async def leave(self, game_id: str, player: str) -> models.TableChanged:
        outcome = await self.run(gm.leave_op(self.games, game_id, player=player, now=self._now()))
        await self.run(acc.drop_listing_op(self.accounts, player, game_id))
        return models.TableChanged(game_id, outcome.last_version, outcome.state.phase)

    async def cancel(self, game_id: str, player: str) -> models.TableChanged:
        outcome = await self.run(gm.cancel_op(self.games, game_id, player=player, now=self._now()))
        await self.run(acc.close_game_op(self.accounts, game_id))
        return models.TableChanged(game_id, outcome.last_version, outcome.state.phase)

    def _now(self) -> str:
        return iso(self.clock())

    async def state(self, game_id: str) -> State:
        return await self.run(gm.current_op(self.games, game_id))

    async def board(self, game_id: str, viewer: str | None) -> bytes:
        """The caller's view of the game now, encoded (kept per game, version and seat)."""
        state = await self.state(game_id)
        seat = _seat(state, viewer)
        at_table = state.phase == "waiting" and viewer in state.players
        key = (game_id, state.version, seat, at_table)
        encoded = self._views.get(key)
        if encoded is None:
            shown = view(state, seat, everything=state.finished)
            if at_table:  # the players at a waiting table may pass its invite code on
                shown = msgspec.structs.replace(shown, invite_code=gm.invite_code_of(state))
            encoded = msgspec.json.encode(shown)
            self._views[key] = encoded
        return encoded

    async def execute(
        self, game_id: str, player: str, request: models.SendCommands
    ) -> models.CommandsAccepted:
        outcome = await self.run(
            gm.execute_op(
                self.games,
                game_id,
                player=player,
                expected_version=request.expected_version,
                command_id=request.command_id,
                commands=request.commands,
                now=iso(self.clock()),
            )
        )
        seat = gm.seat_of(outcome.state, player)
        over = outcome.state.finished
        return models.CommandsAccepted(
            version=outcome.last_version,
            first_version=outcome.first_version,
            repeated=outcome.repeated,
            events=[
                models.VersionedEvent(version, event)
                for version, event in enumerate(outcome.events, outcome.first_version)
                if visible(event, seat, over)
            ],
        )

    async def events(self, game_id: str, viewer: str | None, after: int) -> models.EventList:
        state = await self.state(game_id)
        seat, over = _seat(state, viewer), state.finished
        found = await self.run(gm.events_op(self.games, game_id, after + 1, state.version))
        return models.EventList(
            state.version,
            [
                models.VersionedEvent(version, event)
                for version, event in enumerate(found, after + 1)
                if visible(event, seat, over)
            ],
        )

    async def follow(
        self, game_id: str, viewer: str | None, after: int, *, idle: float = 15.0
    ) -> AsyncIterator[models.VersionedEvent | models.Revealed | None]:
        """The caller's visible events after `after`, as they are appended (server-sent);
        None after `idle` seconds without one. Ends after the game's last event.

        When the game ends, the events the caller could not see before (the deal, the seed)
        come as one `Revealed` right after the end; so they do on a reconnection to a game
        that is over, since the caller may have followed it during play."""
        state = await self.state(game_id)
        seat = _seat(state, viewer)
        over = state.finished
        if over and after >= state.version:
            return
        if over and after > 0:
            yield await self._revealed(game_id, seat, after)
        while True:
            async for stored in self.follow_store.follow(
                game_id, after, timeout=idle, poll=min(idle, 5.0)
            ):
                after = stored.version
                event = event_decoder.decode(stored.data)
                ends = isinstance(event, (GameEnded, GameCancelled))
                if visible(event, seat, over or ends):
                    yield models.VersionedEvent(stored.version, event)
                if ends and not over:
                    over = True
                    yield await self._revealed(game_id, seat, stored.version - 1)
                if isinstance(event, SeedRevealed):  # a game's last event
                    return
            yield None

    async def _revealed(self, game_id: str, seat: int | None, last: int) -> models.Revealed:
        """The events up to `last` that `seat` could not see while the game was on."""
        found = await self.run(gm.events_op(self.games, game_id, 1, last))
        return models.Revealed(
            [
                models.VersionedEvent(version, event)
                for version, event in enumerate(found, 1)
                if not visible(event, seat, False)
            ]
        )

    async def _log(self, game_id: str) -> list[Event]:
        return [event for _v, event, _d, _h in await self.run(gm.log_op(self.games, game_id))]

    async def replay(self, game_id: str, viewer: str | None) -> bytes:
        """Every step with the caller's view after it, encoded. A finished game's replay
        never changes, so it is kept (per game, version and seat)."""
        state = await self.state(game_id)
        seat = _seat(state, viewer)
        key = (game_id, state.version, seat)
        encoded = self._replays.get(key)
        if encoded is None:
            events = await self._log(game_id)
            encoded = msgspec.json.encode(replay(events[: state.version], seat))
            self._replays[key] = encoded
        return encoded

    async def view_at(self, game_id: str, viewer: str | None, version: int) -> View:
        state = await self.state(game_id)
        if not 1 <= version <= state.version:
            raise NotFound(f"version {version} is not in 1..{state.version}")
        events = await self._log(game_id)
        return view_at(events[: state.version], version, _seat(state, viewer))

    async def record(self, game_id: str, viewer: str | None) -> Record:
        state = await self.state(game_id)
        log = await self.run(gm.log_op(self.games, game_id))
        batches = await self.run(gm.batches_op(self.games, game_id))
        logged = [LoggedEvent(v, e, d, h) for v, e, d, h in log[: state.version]]
        return build_record(
            game_id,
            state,
            logged,
            [_batch(b) for b in batches if b.last_version <= state.version],
            _seat(state, viewer),
        )

    async def my_games(self, player: str) -> list[models.MyGame]:
        now = self.clock()
        mine = []
        for game_id, listed in await self.run(acc.games_of_op(self.accounts, player)):
            state = await self._listed(game_id)
            if state is None or player not in state.players:  # its append did not land
                if listed < (cutoff := _listing_cutoff(now)):
                    await self.run(acc.unlist_game_op(self.accounts, player, game_id, cutoff))
                continue
            seat = _seat(state, player)
            pending = state.pending
            since = await self.run(gm.last_change_op(self.games, game_id))
            waited = (now - datetime.fromisoformat(since)).total_seconds() if since else None
            mine.append(
                models.MyGame(
                    game_id=game_id,
                    edition=state.board.edition,
                    seats=state.board.seats,
                    modules=state.board.modules,
                    phase=state.phase,
                    seat=seat,
                    your_decision=pending is not None and pending.seat == seat,
                    step=pending.step if pending is not None else None,
                    version=state.version,
                    since=since,
                    waited_seconds=waited,
                    result=state.result,
                )
            )
        # Awaiting your decision first, longest waiting first; then the rest, newest first.
        mine.sort(key=lambda g: (not g.your_decision, -(g.waited_seconds or 0.0)))
        return mine

    async def _listed(self, game_id: str) -> State | None:
        """A listed game's state; None for a game listed before a creation that failed."""
        try:
            return await self.state(game_id)
        except gm.GameNotFound:
            return None

    async def lobby(self, limit: int = 100) -> list[models.LobbyGame]:
        games = []
        now = self.clock()
        for game_id, listed in await self.run(acc.lobby_op(self.accounts, limit)):
            state = await self._listed(game_id)
            if state is None:  # its creation did not land
                if listed < (cutoff := _listing_cutoff(now)):
                    await self.run(acc.drop_open_game_op(self.accounts, game_id, cutoff))
            elif state.phase != "waiting":
                # Its last join was answered but the lobby was not told: tell it now.
                await self.run(acc.close_game_op(self.accounts, game_id))
            else:
                games.append(
                    models.LobbyGame(
                        game_id,
                        state.board.edition,
                        state.board.seats,
                        state.board.modules,
                        state.players,
                        state.version,
                    )
                )
        return games


def _listing_cutoff(now: datetime) -> float:
    """Listings made before this moment whose append has not landed never will: they go.
    (Before it, the append may still be on its way.)"""
    return now.timestamp() - LISTING_GRACE_SECONDS


def _batch(batch: Batch) -> LoggedBatch:
    meta = gm.meta_decoder.decode(batch.metadata)
    command_id = gm.client_command_id(batch.command_id, meta.player)
    return LoggedBatch(command_id, meta, batch.first_version, batch.last_version)


def _seat(state: State, viewer: str | None) -> int | None:
    return None if viewer is None else gm.seat_of(state, viewer)

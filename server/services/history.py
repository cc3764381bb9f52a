"""A game's history as a caller may see it: its events (listed, and followed live as they are
appended), its replay, a board at a past version, its record and its notation.

Kept apart from `server.services.games` (setting tables, sending commands, the current board),
whose state and clocks it reads: these are the reads of the whole log, each through the
domain's one redaction gate (`domain.view.visible`) for the caller's seat, and those of a
finished game kept encoded and gzipped, as they never change (`server.transport.packed`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import msgspec
from cachetools import LRUCache

from domain.events import Event, GameCancelled, GameEnded, GameStarted, SeedRevealed, event_decoder
from domain.narrate import narrate, seat_names
from domain.state import State
from domain.view import View, visible
from evidence.appends import command_of
from evidence.notation import write_notation
from evidence.record import LoggedEvent, Record, build_record
from projections.replay import clock_at, replay, seen_at, view_at
from server.schema import answers
from server.schema.errors import NotFound, SeatViewSecret
from server.services.games import GameService, viewer_seat
from server.transport.packed import Encoded, Packer
from store import reads
from store.notifications import NotificationKeys, mark_watching_op
from store.stored import meta_decoder


class HistoryService:
    """The reads of a game's history, over the game service's store, state and clocks."""

    def __init__(self, games: GameService, cache_size: int = 256) -> None:
        self.games = games
        # Each kept document is a pure function of its key (docs/store.md, "Caches").
        self._replays: LRUCache[tuple[str, int, int | None, bool], bytes] = LRUCache(cache_size)
        # A finished game's replays and records, gzipped (they never change).
        self._packed = Packer(cache_size)

    async def events(self, game_id: str, viewer: str | None, after: int) -> answers.EventList:
        state = await self.games.state(game_id)
        seat, over = viewer_seat(state, viewer), state.finished
        found = await self.games.run(
            reads.events_op(self.games.path, game_id, after + 1, state.version)
        )
        names = seat_names(state)
        return answers.EventList(
            state.version,
            [
                answers.VersionedEvent(version, event, narrate(state.board, event, names))
                for version, event in enumerate(found, after + 1)
                if visible(event, seat, over)
            ],
        )

    async def follow(
        self, game_id: str, viewer: str | None, after: int, *, idle: float = 15.0
    ) -> AsyncIterator[answers.VersionedEvent | answers.Revealed | None]:
        """The caller's visible events after `after`, as they are appended (server-sent);
        None after `idle` seconds without one. Ends after the game's last event.

        When the game ends, the events the caller could not see before (the deal, the seed)
        come as one `Revealed` right after the end; so they do on a reconnection to a game
        that is over, since the caller may have followed it during play."""
        state = await self.games.state(game_id)
        seat = viewer_seat(state, viewer)
        over = state.finished
        if over and after >= state.version:
            return
        watching = Watching(self.games, game_id, viewer)
        await watching.mark()
        if over and after > 0:
            yield await self._revealed(game_id, seat, after)
        while True:
            async for stored in self.games.follow_store.follow(
                game_id, after, timeout=idle, poll=min(idle, 5.0)
            ):
                after = stored.version
                event = event_decoder.decode(stored.data)
                if isinstance(event, GameStarted) and viewer is not None:
                    # The seats are drawn now: a player who followed the table from before
                    # follows their own seat from here on (their hand comes next).
                    seat = (await self.games.state(game_id)).seat_of(viewer)
                ends = isinstance(event, (GameEnded, GameCancelled))
                await watching.mark()
                if visible(event, seat, over or ends):
                    yield answers.VersionedEvent(stored.version, event)
                if ends and not over:
                    over = True
                    yield await self._revealed(game_id, seat, stored.version - 1)
                if isinstance(event, SeedRevealed):  # a game's last event
                    return
            await watching.mark()
            yield None

    async def _revealed(self, game_id: str, seat: int | None, last: int) -> answers.Revealed:
        """The events up to `last` that `seat` could not see while the game was on."""
        found = await self.games.run(reads.events_op(self.games.path, game_id, 1, last))
        return answers.Revealed(
            [
                answers.VersionedEvent(version, event)
                for version, event in enumerate(found, 1)
                if not visible(event, seat, False)
            ]
        )

    async def _log(self, game_id: str) -> list[Event]:
        log = await self.games.run(reads.log_op(self.games.path, game_id))
        return [event for _v, event, _d, _h in log]

    async def replay(self, game_id: str, viewer: str | None, *, gzipped: bool = False) -> Encoded:
        """Every step with the caller's view after it, encoded (kept per game, version and
        seat), and gzipped if `gzipped` (see `server.transport.packed`)."""
        state = await self.games.state(game_id)
        seat = viewer_seat(state, viewer)
        key = (game_id, state.version, seat, False)

        async def plain() -> bytes:
            encoded = self._replays.get(key)
            if encoded is None:
                events = await self._log(game_id)
                clocks = await self.games.timing.clocks(game_id, state)
                acted = [
                    (batch.first_version, meta_decoder.decode(batch.metadata).by)
                    for batch in await self.games.run(reads.batches_op(self.games.path, game_id))
                    if batch.last_version <= state.version
                ]
                encoded = self._replays[key] = msgspec.json.encode(
                    replay(events[: state.version], seat, clocks, acted)
                )
            return encoded

        return await self._packed.encode(
            ("replay", *key), plain, gzipped=gzipped, final=state.finished
        )

    async def view_at(
        self, game_id: str, viewer: str | None, version: int, as_seat: int | None = None
    ) -> View:
        """The caller's board right after event `version`; `as_seat`, what that seat saw
        then (anyone may ask once the game is over: nothing is secret any more)."""
        state = await self.games.state(game_id)
        if not 1 <= version <= state.version:
            raise NotFound(f"version {version} is not in 1..{state.version}")
        seat = viewer_seat(state, viewer)
        if as_seat is not None and not (0 <= as_seat < state.board.seats and state.seat_players):
            raise NotFound(f"seat {as_seat} is not a seat of this game")
        if as_seat is not None and as_seat != seat and not state.finished:
            raise SeatViewSecret()
        events = await self._log(game_id)
        shown = (
            view_at(events[: state.version], version, seat)
            if as_seat is None
            else seen_at(events[: state.version], version, as_seat)
        )
        clock = clock_at(await self.games.timing.clocks(game_id, state), version)
        return shown if clock is None else msgspec.structs.replace(shown, clock=clock)

    async def record(self, game_id: str, viewer: str | None, *, gzipped: bool = False) -> Encoded:
        """The game record for the caller, encoded, and gzipped if `gzipped`."""
        state = await self.games.state(game_id)
        seat = viewer_seat(state, viewer)

        async def plain() -> bytes:
            record = await self._record(game_id, state, seat)
            if record.complete:  # the server's seal (docs/record.md, "Signatures")
                await self.games.key_listed()
                # Dated by the game's last append: a record is the same bytes whenever, and
                # by whichever process of the deployment, it is made.
                seal = self.games.signer.seal(msgspec.to_builtins(record), record.commands[-1].time)
                record = msgspec.structs.replace(record, signature=seal)
            return msgspec.json.encode(record)

        return await self._packed.encode(
            ("record", game_id, state.version, seat), plain, gzipped=gzipped, final=state.finished
        )

    async def notation(self, game_id: str, viewer: str | None) -> str:
        """The game's notation (docs/notation.md), of the record the caller may see."""
        state = await self.games.state(game_id)
        return write_notation(await self._record(game_id, state, viewer_seat(state, viewer)))

    async def _record(self, game_id: str, state: State, seat: int | None) -> Record:
        """The record of the game up to `state`, as `seat` may see it (not sealed)."""
        log = await self.games.run(reads.log_op(self.games.path, game_id))
        batches = await self.games.run(reads.batches_op(self.games.path, game_id))
        return build_record(
            game_id,
            state,
            [LoggedEvent(v, e, d, h) for v, e, d, h in log[: state.version]],
            [command_of(b) for b in batches if b.last_version <= state.version],
            seat,
        )


class Watching:
    """A player's open stream says, at most every few seconds, that they watch the game live
    (`store.notifications.mark_watching_op`: their `turn.started` is not sent meanwhile)."""

    EVERY_SECONDS = 5.0

    def __init__(self, games: GameService, game_id: str, viewer: str | None) -> None:
        self.games, self.game_id, self.viewer = games, game_id, viewer
        self.said = float("-inf")

    async def mark(self) -> None:
        if self.viewer is None:
            return
        now = self.games.clock().timestamp()
        if now - self.said >= self.EVERY_SECONDS or now < self.said:
            self.said = now
            keys = NotificationKeys(self.games.listings)
            await self.games.run(mark_watching_op(keys, self.game_id, self.viewer))

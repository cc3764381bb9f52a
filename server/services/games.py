"""What the HTTP API does with games, behind thin controllers: setting a table, sending
commands, and reading a game as it stands, each redacted for the caller (its history, the
reads of its whole log, is `server.services.history`'s).

Every write goes through the command path of `store.games`; every outbound event and board goes
through the domain's one redaction gate (`domain.view.visible` / `view`), for the caller's seat
in that game (a spectator when the caller holds none). Randomness (ids, seeds) and the clock
are passed in by the composition root, so tests can fix them.
"""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable
from typing import TypeVar

import msgspec
import structlog
from cachetools import LRUCache

from domain.errors import InvalidOptions
from domain.setup import check_options
from domain.state import State
from domain.view import TableRequirements, View, view, visible
from evidence.signatures import Receipt, Signer
from evidence.signing_keys import announce_op
from projections.timekeeping import Append
from server.schema import answers, requests
from server.services.accounts import AccountService
from server.services.clocks import GameClocks
from server.transport.compression import gzip_body
from server.transport.metrics import count_append
from server.transport.packed import BOARD_LEVEL, Encoded
from store import accounts, appending, games, reads, tables
from store.client import AsyncEventStore
from store.clock import Clock, iso, system_clock
from store.command_path import CommandPath
from store.errors import GameNotFound
from store.protocol import Op
from store.rematch import offer_op
from store.requirements import requirements_op, set_requirements
from store.stored import meta_decoder
from store.time_controls import TimeControl, set_time_control

T = TypeVar("T")
log = structlog.get_logger("patrician")
Admit = Callable[[str, TableRequirements], Awaitable[None]]
"""Whether a player meets a table's requirements: raises `NotAdmitted` if not
(`server.services.profiles.ProfileService.admit`)."""

BOT_NAMES = {"random": "Random bot", "greedy": "Greedy bot", "ismcts": "Search bot"}
"""The name a bot player gets, by its level: the words the pages use for it (server/web/names.js),
numbered by its place among the bots asked for when its level comes more than once."""


def appended(kind: str, game_id: str, answer: T) -> T:
    """An append a request made: counted (`server.transport.metrics`) and logged, under the
    request's id, the first line of its trail through the workers (docs/workers.md, "Request
    ids"). A request answered again with its first result (`repeated`) made none."""
    if not getattr(answer, "repeated", False):
        count_append(kind)
        version = getattr(answer, "version", None)
        log.info("appended", kind=kind, game_id=game_id, version=version)
    return answer


class GameService:
    def __init__(
        self,
        store: AsyncEventStore,
        path: CommandPath,
        listings: accounts.Accounts,
        players: AccountService,
        signer: Signer,
        *,
        follow_store: AsyncEventStore | None = None,
        clock: Clock = system_clock,
        token_bytes: Callable[[int], bytes] = secrets.token_bytes,
        cache_size: int = 256,
    ) -> None:
        self.store = store
        self.follow_store = follow_store or store
        self.path = path
        self.listings = listings
        self.players = players
        self.signer = signer
        self._listed = False
        self.clock = clock
        self.token_bytes = token_bytes
        # Each kept document is a pure function of its key: a seat's view of a game at a
        # version never changes (docs/store.md, "Caches").
        self._views: LRUCache[tuple[object, ...], bytes] = LRUCache(16 * cache_size)
        self._packed_views: LRUCache[tuple[object, ...], bytes] = LRUCache(16 * cache_size)
        self.timing = GameClocks(store, path, listings, clock=clock, cache_size=16 * cache_size)
        self.admit: Admit | None = None
        """Checks a table's requirements at a join (set by `build_services`)."""

    async def run(self, op: Op[T]) -> T:
        return await self.store.run(op)

    async def check_store(self) -> None:
        """One round trip to the store; raises `StoreUnavailable` when it does not answer."""
        await self.store.head("healthz")

    # --- setting a table -------------------------------------------------------------------

    async def create(
        self, player: str, request: requests.NewGame, *, game_id: str | None = None
    ) -> answers.CreatedGame:
        """A new game, its creator in the first place; `game_id` one claimed before (a
        rematch's, `server.services.rematch`): created once, answered again after."""
        edition, modules = check_options(
            request.edition, request.seats, request.modules, self.path.game_data
        )
        if len(request.bots) >= request.seats:
            raise InvalidOptions("bots", "the creator holds a seat: at most seats - 1 bots")
        control = _time_control(request.clock)
        required = _requirements(request.requirements)
        in_lobby, claimed_before = True, game_id is not None
        game_id = game_id or "g" + self.token_bytes(9).hex()
        if claimed_before:  # made once, found after: a table that moved on stays out
            in_lobby = await self._waiting_or_missing(game_id)
        elif request.command_id is not None:  # a retry creates (or finds) the same game
            asked: list[object] = [request.seats, edition, modules, request.entropy, control]
            if required is not None:  # only then: a retry of an older request digests alike
                asked.append(required)
            options = msgspec.json.encode(asked)
            digest = appending.digest(b"create", options)
            claimed = await self.run(
                accounts.claim_creation_op(
                    self.listings, player, request.command_id, game_id, digest
                )
            )
            if claimed != game_id:  # a retry: a table that moved on leaves the lobby be
                game_id = claimed
                in_lobby = await self._waiting_or_missing(game_id)
        name = await self.players.name_of(player)
        now = self.clock()
        beside = [accounts.list_game(self.listings, player, game_id, now.timestamp())]
        if in_lobby:
            beside.append(accounts.open_game(self.listings, game_id, now.timestamp()))
        if control is not None:
            beside.append(set_time_control(self.listings.prefix, game_id, control))
        if required is not None:
            beside.append(set_requirements(self.listings.prefix, game_id, required))
        outcome = await self.run(
            tables.create_op(
                self.path,
                game_id,
                player=player,
                name=name,
                edition=request.edition,
                seats=request.seats,
                modules=request.modules,
                entropy=request.entropy,
                server_seed=self.token_bytes(32),
                now=iso(now),
                beside=beside,
            )
        )
        code = tables.invite_code_of(outcome.state)
        if request.bots and not outcome.repeated:
            joined = await self._seat_bots(game_id, code, request.bots)
            version, receipt = joined.version, joined.receipt
        else:
            if request.bots:  # told again: answered as the first time, at the last bot's join
                outcome = await self._last_bot_join(game_id, outcome, len(request.bots))
            version, receipt = outcome.last_version, await self.receipt(game_id, outcome)
        created = answers.CreatedGame(
            game_id, code, outcome.state.seed_commitment, version, receipt, outcome.repeated
        )
        return appended("create", game_id, created)

    async def _last_bot_join(
        self, game_id: str, created: games.Outcome, bots: int
    ) -> games.Outcome:
        """A retried creation with bots: the join of its last bot (the appends right after
        the creation), whose answer the first creation gave."""
        batches = await self.run(reads.batches_op(self.path, game_id))
        if len(batches) <= bots:  # the bots did not all join the first time
            return created
        joined = batches[bots]
        head = await self.run(reads.hash_at_op(self.path, game_id, joined.last_version))
        return msgspec.structs.replace(
            created,
            last_version=joined.last_version,
            head_hash=head,
            time=meta_decoder.decode(joined.metadata).time,
        )

    async def receipt(self, game_id: str, outcome: games.Outcome) -> Receipt:
        """The signed receipt of an append (the same when it is told again)."""
        await self.key_listed()
        return self.signer.receipt(game_id, outcome.last_version, outcome.head_hash, outcome.time)

    async def key_listed(self) -> None:
        """List the signing key (`GET /api/keys`) before anything it signs goes out: at the
        start, or at the first signature if the store did not answer then."""
        if not self._listed:
            await self.run(announce_op(self.listings.prefix, self.signer, iso(self.clock())))
            self._listed = True

    async def _seat_bots(
        self, game_id: str, code: str, bots: list[requests.BotSeat]
    ) -> answers.Joined:
        """Bots join the new table, one after the other; the answer to the last join."""
        joined: answers.Joined | None = None
        for number, bot in enumerate(bots, 1):
            same = sum(1 for other in bots if other.level == bot.level)
            name = BOT_NAMES[bot.level] + (f" {number}" if same > 1 else "")
            player = await self.players.create_bot(bot.level, name)
            joined = await self._join(
                game_id, player, requests.JoinGame(invite_code=code), checked=False
            )
        assert joined is not None  # there is a bot: the request asked for them
        return joined

    async def _waiting_or_missing(self, game_id: str) -> bool:
        """Whether a retried creation lists its game in the lobby again: while the table
        waits, or if the first creation never landed; not once it has started or ended."""
        try:
            return (await self.state(game_id)).phase == "waiting"
        except GameNotFound:
            return True

    async def join(self, game_id: str, player: str, request: requests.JoinGame) -> answers.Joined:
        return appended("join", game_id, await self._join(game_id, player, request))

    async def _join(
        self, game_id: str, player: str, request: requests.JoinGame, *, checked: bool = True
    ) -> answers.Joined:
        """A join, not counted or logged apart: the bots a creation seats join so, the creation
        being the request's one append to count and log (`appended`); `checked`: against the
        table's requirements (not the bots its creator asked for)."""
        name = await self.players.name_of(player)
        if checked:
            await self._admitted(game_id, player)
        now = self.clock()
        outcome = await self.run(
            tables.join_op(
                self.path,
                game_id,
                player=player,
                name=name,
                invite_code=request.invite_code,
                entropy=request.entropy,
                now=iso(now),
                listings=(accounts.list_game(self.listings, player, game_id, now.timestamp()),),
            )
        )
        started = outcome.state.phase != "waiting"
        if started:
            await self.run(accounts.close_game_op(self.listings, game_id))
        receipt = await self.receipt(game_id, outcome)
        return answers.Joined(
            game_id, outcome.last_version, started, outcome.state.seat_of(player), receipt
        )

    async def _admitted(self, game_id: str, player: str) -> None:
        """Raises `NotAdmitted` if the table has requirements the player does not meet (a
        player at the table already joins again as before: answered with their first join)."""
        required = await self.run(requirements_op(self.listings.prefix, game_id))
        if required is None or self.admit is None:
            return
        try:
            state = await self.state(game_id)
        except GameNotFound:
            return  # the join says so
        if state.phase == "waiting" and player not in state.players:
            await self.admit(player, required)

    async def leave(self, game_id: str, player: str) -> answers.TableChanged:
        outcome = await self.run(
            tables.leave_op(self.path, game_id, player=player, now=iso(self.clock()))
        )
        await self.run(accounts.drop_listing_op(self.listings, player, game_id))
        return appended("leave", game_id, await self._changed(game_id, outcome))

    async def cancel(self, game_id: str, player: str) -> answers.TableChanged:
        outcome = await self.run(
            tables.cancel_op(self.path, game_id, player=player, now=iso(self.clock()))
        )
        await self.run(accounts.close_game_op(self.listings, game_id))
        return appended("cancel", game_id, await self._changed(game_id, outcome))

    async def _changed(self, game_id: str, outcome: games.Outcome) -> answers.TableChanged:
        receipt = await self.receipt(game_id, outcome)
        return answers.TableChanged(game_id, outcome.last_version, outcome.state.phase, receipt)

    # --- playing --------------------------------------------------------------------------

    async def execute(
        self, game_id: str, player: str, request: requests.SendCommands
    ) -> answers.CommandsAccepted:
        outcome = await self.run(
            games.execute_op(
                self.path,
                game_id,
                player=player,
                expected_version=request.expected_version,
                command_id=request.command_id,
                commands=request.commands,
                now=iso(self.clock()),
            )
        )
        over = outcome.state.finished
        accepted = answers.CommandsAccepted(
            version=outcome.last_version,
            first_version=outcome.first_version,
            repeated=outcome.repeated,
            events=[
                answers.VersionedEvent(version, event)
                for version, event in enumerate(outcome.events, outcome.first_version)
                if visible(event, outcome.seat, over)
            ],
            receipt=await self.receipt(game_id, outcome),
        )
        return appended("commands", game_id, accepted)

    # --- reading --------------------------------------------------------------------------

    async def state(self, game_id: str) -> State:
        return await self.run(reads.current_op(self.path, game_id))

    async def board(self, game_id: str, viewer: str | None, *, gzipped: bool = False) -> Encoded:
        """The caller's view of the game now, encoded, gzipped if the client takes it (both
        kept per game, version and seat; in a timed game per who is on vacation too: that
        moves the clocks without an append)."""
        state = await self.state(game_id)
        seat = viewer_seat(state, viewer)
        at_table = state.phase == "waiting" and viewer in state.players
        rematch = None
        if state.phase == "over":  # one may have been asked for since (no append says so)
            prefix = self.listings.prefix
            rematch = await self.run(offer_op(self.path, prefix, game_id, seat is not None))
        key: tuple[object, ...] = (game_id, state.version, seat, at_table, rematch)
        if state.seat_players and await self.timing.time_control(game_id) is not None:
            key += (await self.timing.away_now(state),)
        if gzipped and (packed := self._packed_views.get(key)) is not None:
            return Encoded(packed, True)
        encoded = self._views.get(key)
        if encoded is None:
            shown = await self.shown(game_id, state, seat, at_table=at_table)
            if rematch is not None:
                shown = msgspec.structs.replace(shown, rematch=rematch)
            encoded = self._views[key] = msgspec.json.encode(shown)
        if gzipped and (packed := gzip_body(encoded, BOARD_LEVEL)) is not None:
            self._packed_views[key] = packed
            return Encoded(packed, True)
        return Encoded(encoded, False)

    async def shown(
        self,
        game_id: str,
        state: State,
        seat: int | None,
        *,
        at_table: bool = False,
        planned: Append | None = None,
    ) -> View:
        """The board of `seat` in `state`, as `board` answers it; `planned`, an append not
        made (a preview's), is timed as if it were made now."""
        shown = view(state, seat, everything=state.finished)
        if at_table:  # the players at a waiting table may pass its invite code on
            shown = msgspec.structs.replace(shown, invite_code=tables.invite_code_of(state))
        if state.phase == "waiting":  # what a player must show to join it
            required = await self.run(requirements_op(self.listings.prefix, game_id))
            if required is not None:
                shown = msgspec.structs.replace(shown, requirements=required)
        clocks = await self.timing.clocks(game_id, state, planned)
        if clocks:
            shown = msgspec.structs.replace(shown, clock=clocks[-1][1])
        return shown


def _time_control(setting: requests.ClockSetting | None) -> TimeControl | None:
    if setting is None:
        return None
    if setting.max_bank_hours is not None and setting.max_bank_hours < setting.bank_hours:
        raise InvalidOptions("clock.max_bank_hours", "a bank may not start above its most")
    return TimeControl(**msgspec.structs.asdict(setting))


def _requirements(asked: requests.Requirements | None) -> TableRequirements | None:
    """A table's requirements as kept (None: it asks nothing)."""
    if asked is None or (asked.min_rating is None and asked.max_timeouts_per_100 is None):
        return None
    return TableRequirements(asked.min_rating, asked.max_timeouts_per_100)


def viewer_seat(state: State, viewer: str | None) -> int | None:
    """The caller's seat in the game; None for a spectator (no seat, or no caller)."""
    return None if viewer is None else state.seat_of(viewer)

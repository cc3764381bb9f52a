"""The lobby and each player's game list cannot lose a game to a crash or a failed write.

They are written before the append that creates or joins a game (store/games.py), so a write
that fails in between leaves a listed game that does not exist, or where the player holds no
seat: readers skip those, and nobody sees an error. The service runs here on an embedded
fakeredis behind a client that fails chosen commands, as a dying Redis or process would.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

import fakeredis
import pytest
import redis.exceptions

from domain.errors import IllegalCommand
from server.config.card_data import load_game_data
from server.schema import answers, requests
from server.services.bundle import Services, build_services
from store.client import AsyncEventStore
from store.errors import StoreUnavailable, WrongInvite
from workers.context import WorkerContext
from workers.repairs import LISTING_GRACE_SECONDS, repair_games_of, repair_lobby
from workers.settings import WorkerSettings, context_for

T = TypeVar("T")


class _Faulty:
    """An asyncio fakeredis that fails the next call of the command `fail_next` before it
    runs, or every call after one of `die_after` ran (a process that died just then), and can
    run something else right before a command."""

    def __init__(self) -> None:
        self.server = fakeredis.FakeServer()
        self.client = fakeredis.FakeAsyncRedis(server=self.server)
        self.fail_next: str | None = None
        self.die_after: str | None = None
        self.dead = False
        self.before: dict[str, Callable[[], Awaitable[object]]] = {}
        """Run once right before the next call of a command: what another request does then."""

    def get_encoder(self) -> Any:
        return self.client.get_encoder()  # type: ignore[no-untyped-call]

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.client, name)

        async def call(*args: Any, **kwargs: Any) -> Any:
            if name in self.before:
                await self.before.pop(name)()
            if self.dead or self.fail_next == name:
                self.fail_next = None
                raise redis.exceptions.ConnectionError("Connection reset by peer")
            result = await method(*args, **kwargs)
            self.dead = self.die_after == name
            return result

        return call


class _Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


def _workers(client: _Faulty, clock: Callable[[], datetime]) -> WorkerContext:
    """The workers' view of the same store (they repair the lists), at the same time."""
    shared = fakeredis.FakeRedis(server=client.server)
    return context_for(shared, load_game_data(), WorkerSettings(prefix="listings"), clock)


def _service(client: _Faulty, clock: Callable[[], datetime] | None = None) -> Services:
    store = AsyncEventStore(client, prefix="listings")
    return build_services(
        store, load_game_data(), prefix="listings", clock=clock or (lambda: datetime.now(UTC))
    )


def _run(test: Callable[[_Faulty, Services], Coroutine[Any, Any, T]]) -> T:
    client = _Faulty()
    return asyncio.run(test(client, _service(client)))


async def _players(service: Services, count: int) -> list[str]:
    return [(await service.accounts.create_player(f"p{n}")).player_id for n in range(count)]


async def _two_seat_game(service: Services) -> tuple[str, answers.CreatedGame, requests.JoinGame]:
    """A new two-seat game of Anna's, Bert, and his request to join it."""
    anna, bert = await _players(service, 2)
    created = await service.games.create(anna, requests.NewGame(seats=2))
    return bert, created, requests.JoinGame(invite_code=created.invite_code)


def test_a_game_whose_creation_failed_after_it_was_listed_is_in_no_list() -> None:
    async def scenario(client: _Faulty, service: Services) -> None:
        (anna,) = await _players(service, 1)
        client.fail_next = "evalsha"  # the append of the creation
        with pytest.raises(StoreUnavailable):
            await service.games.create(anna, requests.NewGame(seats=2))
        assert await service.listings.lobby() == []
        assert await service.listings.my_games(anna) == []
        created = await service.games.create(anna, requests.NewGame(seats=2))
        assert [g.game_id for g in await service.listings.lobby()] == [created.game_id]
        assert [g.game_id for g in await service.listings.my_games(anna)] == [created.game_id]

    _run(scenario)


def test_a_crash_just_after_a_creation_or_a_join_landed_loses_no_listing() -> None:
    async def scenario(client: _Faulty, service: Services) -> None:
        anna, bert = await _players(service, 2)
        await service.games.key_listed()  # as at the start of the server
        client.die_after = "evalsha"  # the creation lands, then the process dies
        created = await service.games.create(anna, requests.NewGame(seats=3))
        client.die_after, client.dead = "evalsha", False
        await service.games.join(created.game_id, bert, requests.JoinGame(created.invite_code))
        client.die_after, client.dead = None, False
        restarted = _service(client)
        assert [g.game_id for g in await restarted.listings.lobby()] == [created.game_id]
        for player in (anna, bert):
            assert [g.game_id for g in await restarted.listings.my_games(player)] == [
                created.game_id
            ]

    _run(scenario)


def test_a_join_that_failed_after_it_was_listed_shows_nothing_and_can_be_retried() -> None:
    async def scenario(client: _Faulty, service: Services) -> None:
        bert, created, join = await _two_seat_game(service)
        client.fail_next = "evalsha"  # the append of the join
        with pytest.raises(StoreUnavailable):
            await service.games.join(created.game_id, bert, join)
        assert await service.listings.my_games(bert) == []
        joined = await service.games.join(created.game_id, bert, join)
        assert joined.started
        assert [g.game_id for g in await service.listings.my_games(bert)] == [created.game_id]

    _run(scenario)


def test_a_started_game_the_lobby_was_not_told_of_is_not_shown_and_the_repair_removes_it() -> None:
    async def scenario(client: _Faulty, service: Services) -> None:
        anna, bert = await _players(service, 2)
        created = await service.games.create(anna, requests.NewGame(seats=2))
        client.fail_next = "zrem"  # the lobby's removal, after the join that fills the table
        with pytest.raises(StoreUnavailable):
            await service.games.join(created.game_id, bert, requests.JoinGame(created.invite_code))
        state = await service.games.state(created.game_id)
        assert state.phase != "waiting", "the join itself landed"
        assert await service.listings.lobby() == []
        assert await client.client.zcard("listings:lobby") == 1, "a read writes nothing"
        assert repair_lobby(_workers(client, lambda: datetime.now(UTC))).closed == 1
        assert await client.client.zcard("listings:lobby") == 0, "the repair healed the lobby"
        for player in (anna, bert):
            assert [g.game_id for g in await service.listings.my_games(player)] == [created.game_id]

    _run(scenario)


def test_a_join_refused_for_a_full_table_or_a_wrong_invite_lists_nothing() -> None:
    async def scenario(client: _Faulty, service: Services) -> None:
        anna, bert, cleo = await _players(service, 3)
        created = await service.games.create(anna, requests.NewGame(seats=2))
        with pytest.raises(WrongInvite):
            await service.games.join(created.game_id, cleo, requests.JoinGame("not-the-code"))
        await service.games.join(created.game_id, bert, requests.JoinGame(created.invite_code))
        with pytest.raises(IllegalCommand) as refused:
            await service.games.join(created.game_id, cleo, requests.JoinGame(created.invite_code))
        assert refused.value.code == "game_not_open"
        assert await client.client.zcard("listings:player:" + cleo + ":games") == 0

    _run(scenario)


def test_a_listing_whose_append_never_landed_is_dropped_once_it_cannot_land_any_more() -> None:
    """Until then it is only hidden: the append it was made for may still be on its way."""

    async def scenario(client: _Faulty, _service_now: Services) -> None:
        clock = _Clock()
        service = _service(client, clock)
        (anna,) = await _players(service, 1)
        client.fail_next = "evalsha"
        with pytest.raises(StoreUnavailable):
            await service.games.create(anna, requests.NewGame(seats=2))
        lobby, mine = "listings:lobby", f"listings:player:{anna}:games"
        assert await service.listings.lobby() == [] and await service.listings.my_games(anna) == []
        assert await client.client.zcard(lobby) == 1 and await client.client.zcard(mine) == 1
        workers = _workers(client, clock)
        assert repair_lobby(workers).dropped == 0, "it may still land"
        assert repair_games_of(workers, anna).dropped == 0
        clock.now += timedelta(seconds=LISTING_GRACE_SECONDS + 1)
        assert await service.listings.lobby() == [] and await service.listings.my_games(anna) == []
        assert await client.client.zcard(lobby) == 1, "a read writes nothing"
        assert repair_lobby(workers).dropped == 1
        assert repair_games_of(workers, anna).dropped == 1
        assert await client.client.zcard(lobby) == 0 and await client.client.zcard(mine) == 0

    _run(scenario)


def test_a_join_retried_long_after_a_failed_one_keeps_its_listing_while_it_lands() -> None:
    """The retry lists the game anew before its append, so a reader dropping old listings
    in the meantime leaves it be."""

    async def scenario(client: _Faulty, _service_now: Services) -> None:
        clock = _Clock()
        service = _service(client, clock)
        bert, created, join = await _two_seat_game(service)
        client.fail_next = "evalsha"
        with pytest.raises(StoreUnavailable):
            await service.games.join(created.game_id, bert, join)
        clock.now += timedelta(seconds=LISTING_GRACE_SECONDS + 1)
        # A repair while the join is on its way:
        workers = _workers(client, clock)

        async def repair() -> None:
            repair_games_of(workers, bert)

        client.before["evalsha"] = repair
        await service.games.join(created.game_id, bert, join)
        assert "evalsha" not in client.before, "the reader ran"
        assert [g.game_id for g in await service.listings.my_games(bert)] == [created.game_id]

    _run(scenario)


def test_joining_again_restores_a_lost_listing() -> None:
    async def scenario(client: _Faulty, service: Services) -> None:
        bert, created, join = await _two_seat_game(service)
        first = await service.games.join(created.game_id, bert, join)
        await client.client.delete(f"listings:player:{bert}:games")
        assert await service.listings.my_games(bert) == []
        assert await service.games.join(created.game_id, bert, join) == first
        assert [g.game_id for g in await service.listings.my_games(bert)] == [created.game_id]

    _run(scenario)

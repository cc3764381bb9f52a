"""Web Push end to end without the internet: the embedded server and its workers send each
notice to the devices a player subscribed, through a real push service on loopback that
checks the VAPID token, decrypts the message with the device's keys and answers as the test
asks (`tests.workers.push_service`).

A played game tells each device of every turn that starts for its player, once, under the
notice's one id (the same notices as the webhook's), in words that name the game by its
players and say the step asked; a push service's 404 or 410 removes the device; a 429 is
tried again later; a device subscribed with an earlier key of the server is removed, not sent
to."""

from __future__ import annotations

import functools
import random
import time
from collections.abc import Callable
from typing import Any

import msgspec
import pytest
from litestar import Litestar
from litestar.testing import TestClient

from outbound.web_push import topic_of
from server.services.push_devices import PushDeviceService
from store.notifications import channels_op, set_channels_op
from tests.server.client import Api, Json, Player, Table
from tests.workers.push_service import Device, PushService, Received
from tests.workers.sink import Sink
from workers.push import TTL_SECONDS


def _subscribed(api: Api, service: PushService, player: Player, name: str = "Phone") -> Device:
    device = service.add(Device())
    body = {**device.subscription(service), "name": name}
    api.ok(api.request("POST", "/api/me/push", player=player, json=body), 201)
    return device


def _log(api: Api, player: Player, channel: str) -> list[Json]:
    entries = api.ok(api.request("GET", "/api/me/deliveries", player=player))
    return [d for d in entries if d["channel"] == channel]


def _started_logged(api: Api, player: Player) -> bool:
    return any(d["type"] == "game.started" for d in _log(api, player, "push"))


def _told(api: Api, player: Player, kind: str, status: str) -> bool:
    return any(d["type"] == kind and d["status"] == status for d in _log(api, player, "push"))


def _told_the_end(api: Api, player: Player) -> bool:
    return any(
        d["type"] == "game.ended" and d["status"] == "delivered" for d in _log(api, player, "push")
    )


def _until(ready: Callable[[], Any], what: Callable[[], Any], timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not ready():
        assert time.monotonic() < deadline, what()
        time.sleep(0.02)


def test_a_played_game_pushes_each_turn_that_starts_to_its_players_device_once_in_words(
    api: Api, service: PushService
) -> None:
    """Each turn's push is awaited before the turn is played (a turn over before the workers
    come to it is rightly not told), at the device of the player whose turn it is."""
    with Sink() as sink:
        ada, bea = api.create_player("Ada"), api.create_player("Bea")
        devices = {"Ada": _subscribed(api, service, ada), "Bea": _subscribed(api, service, bea)}
        for player in (ada, bea):
            hook = {"webhook": {"url": sink.url(f"/{player.name}")}}
            answer = api.ok(api.request("PUT", "/api/me/notifications", player=player, json=hook))
            sink.secrets[f"/{player.name}"] = answer["webhook"]["secret"]
        created = api.create_game(ada, 2)
        api.join(bea, created["game_id"], created["invite_code"])
        table = api.table_of(created["game_id"], [ada, bea])
        game = table.game_id
        turns = {"Ada": 0, "Bea": 0}
        last: list[int | None] = [None]

        def turn_told(table: Table) -> None:
            if table.pending is None or table.pending == last[0]:
                return  # the same turn goes on: no new notice
            last[0] = table.pending
            name = table.seats[table.pending].name
            turns[name] += 1
            path = devices[name].path
            _until(lambda: _turns_at(service, path) >= turns[name],
                   lambda: service.received.get(path))  # fmt: skip

        table.play_to_end(random.Random(7), between=turn_told)
        for player in (ada, bea):
            _until(functools.partial(_told_the_end, api, player),
                   functools.partial(_log, api, player, "push"))  # fmt: skip
            path = devices[player.name].path
            hooks = sink.received[f"/{player.name}"]
            _until(functools.partial(_pushed_as_many, service, path, hooks),
                   lambda: (service.received, sink.received))  # fmt: skip
            arrived = service.received[path]
            assert len(arrived) == len(hooks), "a push per notice, as the webhook's"
            assert _turns_at(service, path) == turns[player.name] > 0, "one per turn"
            assert sum(m["type"] == "turn.started" for m in hooks) == turns[player.name]
            other = "Bea" if player is ada else "Ada"
            for received in arrived:
                message = received.message
                assert message["title"] == f"{other} and you", message
                assert message["url"] == f"/games/{game}" and message["tag"] == f"game-{game}"
                assert game not in message["title"] + message["body"], "named by its players"
                assert received.ttl == TTL_SECONDS and received.topic
            for received in arrived:  # high for the player's turn, normal for the others
                wanted = "high" if _is_turn(received) else "normal"
                assert received.urgency == wanted, (received.urgency, received.message)
            assert {r.topic for r in arrived} == {topic_of(game)}, "one topic per game, its own"
            log = _log(api, player, "push")
            assert {d["status"] for d in log} == {"delivered"}, log
        assert service.received[devices["Ada"].path][0].topic == (
            service.received[devices["Bea"].path][0].topic
        )


def _pushed_as_many(service: PushService, path: str, hooks: list[Json]) -> bool:
    return len(service.received.get(path, [])) >= len(hooks) > 0


def _is_turn(received: Received) -> bool:
    return str(received.message["body"]).startswith("Your turn")


def _turns_at(service: PushService, path: str) -> int:
    return sum(_is_turn(r) for r in service.received.get(path, []))


def test_each_device_of_a_player_gets_each_notice_once(api: Api, service: PushService) -> None:
    """A phone and a laptop: the notice reaches both, each under its own sending claim (one
    device sent to does not make the other's copy 'sent already')."""
    ada, bea = api.create_player("Ada"), api.create_player("Bea")
    phone, laptop = _subscribed(api, service, ada), _subscribed(api, service, ada, "Laptop")
    created = api.create_game(ada, 2)
    api.join(bea, created["game_id"], created["invite_code"])
    _until(lambda: _told(api, ada, "game.started", "delivered"), lambda: _log(api, ada, "push"))
    (entry,) = [d for d in _log(api, ada, "push") if d["type"] == "game.started"]
    assert "Phone" in entry["detail"] and "Laptop" in entry["detail"], entry
    for device in (phone, laptop):
        started = [r for r in service.wait(device.path, 1)
                   if str(r.message["body"]).startswith("Your game has started")]  # fmt: skip
        assert len(started) == 1, device.path


@pytest.mark.parametrize("status", [404, 410])
def test_a_device_the_push_service_says_is_gone_is_removed_and_sent_nothing_more(
    api: Api, service: PushService, status: int
) -> None:
    """404 Not Found and 410 Gone alike: the subscription is no more."""
    ada, bea = api.create_player("Ada"), api.create_player("Bea")
    gone, kept = _subscribed(api, service, ada, "Old phone"), _subscribed(api, service, ada)
    service.answer(gone.path, status)
    created = api.create_game(ada, 2)
    api.join(bea, created["game_id"], created["invite_code"])
    _until(lambda: _started_logged(api, ada), lambda: _log(api, ada, "push"))
    (left,) = api.ok(api.request("GET", "/api/me/push", player=ada))
    assert left["name"] == "Phone"
    (started,) = [d for d in _log(api, ada, "push") if d["type"] == "game.started"]
    assert started["status"] == "delivered", started
    assert "Old phone" in started["detail"] and str(status) in started["detail"], started
    assert gone.path not in started["detail"], "the endpoint is never said"
    service.wait(kept.path, 1)
    requests_before = service.requests.get(gone.path, 0)
    table = api.table_of(created["game_id"], [ada, bea])
    table.play_to_end(random.Random(3))
    _until(lambda: any(d["type"] == "game.ended" for d in _log(api, ada, "push")),
           lambda: _log(api, ada, "push"))  # fmt: skip
    assert service.requests.get(gone.path, 0) == requests_before, "nothing to the gone device"


def test_a_push_service_that_asks_to_wait_gets_the_notice_again_later_under_its_id(
    api: Api, service: PushService
) -> None:
    """A 429 fails the attempt: RQ tries it again (10 s later), and the message arrives
    once; the delivery log has the failed attempt and the delivered one, under one id."""
    ada, bea = api.create_player("Ada"), api.create_player("Bea")
    device = _subscribed(api, service, ada)
    service.answer(device.path, 429, times=1)
    created = api.create_game(ada, 2)
    api.join(bea, created["game_id"], created["invite_code"])
    (arrived,) = service.wait(device.path, 1, timeout=90)  # RQ's retry: 10 s later
    assert arrived.message["tag"] == f"game-{created['game_id']}"
    _until(lambda: _told(api, ada, "game.started", "delivered"), lambda: _log(api, ada, "push"))
    log = [d for d in _log(api, ada, "push") if d["type"] == "game.started"]
    assert sorted((d["attempt"], d["status"]) for d in log) == [(1, "failed"), (2, "delivered")]
    assert len({d["webhook_id"] for d in log}) == 1
    assert service.statuses[device.path][0] == 429 and service.statuses[device.path].count(429) == 1
    started = [r for r in service.received[device.path]
               if str(r.message["body"]).startswith("Your game has started")]  # fmt: skip
    assert len(started) == 1, "once, though tried twice"


def test_a_device_subscribed_with_an_earlier_key_is_removed_not_sent_to(
    app: TestClient[Litestar], api: Api, service: PushService
) -> None:
    """As after the operator gave the server a new push key (`patrician push-keygen`)."""
    ada, bea = api.create_player("Ada"), api.create_player("Bea")
    device = _subscribed(api, service, ada)
    push: PushDeviceService = app.app.dependencies["services"].dependency().push
    keys, store = push.keys, push.store

    async def rotate() -> None:
        channels = await store.run(channels_op(keys, ada.player_id))
        old = tuple(msgspec.structs.replace(d, server_key="an-earlier-key") for d in channels.push)
        await store.run(
            set_channels_op(keys, ada.player_id, msgspec.structs.replace(channels, push=old))
        )

    app.blocking_portal.call(rotate)
    listed = api.ok(api.request("GET", "/api/me/push", player=ada))
    assert [d["current"] for d in listed] == [False]
    created = api.create_game(ada, 2)
    api.join(bea, created["game_id"], created["invite_code"])
    _until(lambda: _started_logged(api, ada), lambda: _log(api, ada, "push"))
    assert api.ok(api.request("GET", "/api/me/push", player=ada)) == []
    (entry,) = [d for d in _log(api, ada, "push") if d["type"] == "game.started"]
    assert entry["status"] == "refused" and "earlier key" in entry["detail"], entry
    assert service.requests.get(device.path, 0) == 0

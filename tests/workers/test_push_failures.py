"""Web Push when a device cannot be reached, or need not be: through the embedded server and
its workers, and a real push service on loopback that answers as the test asks
(`tests.workers.push_service`).

A device whose push service fails once (a 429, a 5xx) gets the notice on the attempt made
again, and only it: a device reached on the first attempt is not sent it twice. A device
whose endpoint leads to an address no webhook may reach is refused at the connection, and
removed. A player who watches the game live gets no push of their turn. Every delivery log
entry names each device by its name and its push service's host, never by its endpoint."""

from __future__ import annotations

import random

import msgspec
import pytest
from litestar import Litestar
from litestar.testing import TestClient
from rq import Retry

from server.services.push_devices import PushDeviceService
from store.notifications import channels_op, set_channels_op, watching_op
from tests.server.client import Api, Json, Player
from tests.server.sse import asgi_stream
from tests.workers.push_service import PushService
from tests.workers.test_play_by_webhook import _play_turn
from tests.workers.test_push_delivery import _log, _subscribed, _told, _until
from workers import telling

PRIVATE_ENDPOINT = "https://10.0.0.8/push/1"
"""A push endpoint on a private address (as a subscription rewritten in the store would say):
no webhook may go there."""


def _push_service(app: TestClient[Litestar]) -> PushDeviceService:
    """The server's service of push devices, whose store and keys the test reaches into."""
    push: PushDeviceService = app.app.dependencies["services"].dependency().push
    return push


def _entries(api: Api, player: Player, kind: str) -> list[Json]:
    return [d for d in _log(api, player, "push") if d["type"] == kind]


def _started_pushes(service: PushService, path: str) -> int:
    return sum(
        str(r.message["body"]).startswith("Your game has started") for r in service.received[path]
    )


@pytest.mark.parametrize("status", [429, 500])
def test_a_device_whose_service_fails_once_gets_the_notice_again_and_the_other_device_not(
    api: Api, service: PushService, monkeypatch: pytest.MonkeyPatch, status: int
) -> None:
    """A phone and a tablet; the tablet's push service fails the first attempt: RQ tries
    the notice again (a second later here, not on the production schedule), which goes to
    the tablet alone. The log has both attempts under one id, the failure naming the tablet
    and its status."""
    monkeypatch.setattr(telling, "DELIVERY_RETRY", Retry(max=6, interval=[1] * 6))
    ada, bea = api.create_player("Ada"), api.create_player("Bea")
    phone, tablet = _subscribed(api, service, ada), _subscribed(api, service, ada, "Tablet")
    service.answer(tablet.path, status, times=1)
    created = api.create_game(ada, 2)
    api.join(bea, created["game_id"], created["invite_code"])
    _until(lambda: _told(api, ada, "game.started", "delivered"),
           lambda: _log(api, ada, "push"), timeout=90)  # fmt: skip
    log = _entries(api, ada, "game.started")
    assert sorted((d["attempt"], d["status"]) for d in log) == [(1, "failed"), (2, "delivered")]
    assert len({d["webhook_id"] for d in log}) == 1, "one id for every attempt"
    (failed,) = [d for d in log if d["status"] == "failed"]
    assert "Tablet" in failed["detail"] and f"HTTP {status}" in failed["detail"], failed
    everything = str(_log(api, ada, "push"))
    for device in (phone, tablet):
        assert device.path not in everything, "the endpoint is never said"
        assert _started_pushes(service, device.path) == 1, (device.path, service.statuses)
    statuses = service.statuses  # (Ada's turn may be told too, whoever plays first)
    assert statuses[tablet.path][0] == status and statuses[tablet.path].count(status) == 1
    assert set(statuses[phone.path]) == {201}, statuses


def test_a_device_whose_endpoint_leads_to_a_private_address_is_refused_and_removed(
    app: TestClient[Litestar], api: Api, service: PushService
) -> None:
    """As a subscription whose endpoint the store came to hold pointing inside our network:
    the check at the connection refuses it, nothing is sent, the device is removed, and the
    log names its host, not its endpoint."""
    ada, bea = api.create_player("Ada"), api.create_player("Bea")
    _subscribed(api, service, ada)
    push = _push_service(app)
    keys, store = push.keys, push.store

    async def rewrite() -> None:
        channels = await store.run(channels_op(keys, ada.player_id))
        moved = tuple(msgspec.structs.replace(d, endpoint=PRIVATE_ENDPOINT) for d in channels.push)
        await store.run(
            set_channels_op(keys, ada.player_id, msgspec.structs.replace(channels, push=moved))
        )

    app.blocking_portal.call(rewrite)
    (listed,) = api.ok(api.request("GET", "/api/me/push", player=ada))
    assert listed["service"] == "10.0.0.8"
    created = api.create_game(ada, 2)
    api.join(bea, created["game_id"], created["invite_code"])
    _until(lambda: _entries(api, ada, "game.started"), lambda: _log(api, ada, "push"))
    (entry,) = _entries(api, ada, "game.started")
    assert entry["status"] == "refused" and "removed" in entry["detail"], entry
    assert "Phone" in entry["detail"] and "10.0.0.8" in entry["detail"], entry
    assert "/push/1" not in entry["detail"], "the endpoint is never said"
    assert "push service" in entry["detail"] and "webhook" not in entry["detail"], entry
    assert ".;" not in entry["detail"], entry
    assert api.ok(api.request("GET", "/api/me/push", player=ada)) == []


def test_a_player_who_watches_the_game_live_gets_no_push_of_their_turn(
    app: TestClient[Litestar], api: Api, service: PushService
) -> None:
    """An open stream of the game says its player is at the table: the push of their
    `turn.started` is dropped, and their delivery log says so."""
    ada, bea = api.create_player("Ada"), api.create_player("Bea")
    devices = {"Ada": _subscribed(api, service, ada), "Bea": _subscribed(api, service, bea)}
    created = api.create_game(ada, 2)
    game_id = created["game_id"]
    api.join(bea, game_id, created["invite_code"])
    board = api.board(game_id)
    seats = {api.board(game_id, p)["viewer"]: p for p in (ada, bea)}
    mover, watcher = seats[board["pending"]["seat"]], seats[1 - board["pending"]["seat"]]
    device = devices[watcher.name]
    service.wait(device.path, 1)  # game.started
    push = _push_service(app)
    path = f"/api/games/{game_id}/stream?after={board['version']}"
    until = board["version"] + 1
    watching = app.blocking_portal.start_task_soon(
        asgi_stream, app.app, path, until, watcher.auth, 20
    )

    async def watched() -> bool:
        return await push.store.run(watching_op(push.keys, game_id, watcher.player_id))

    _until(lambda: app.blocking_portal.call(watched), lambda: "the stream says no one watches")
    assert _play_turn(api, game_id, mover, random.Random(1)) >= 1
    assert watching.result(timeout=30).status == 200
    assert api.board(game_id)["pending"]["seat"] == api.board(game_id, watcher)["viewer"]
    _until(lambda: _entries(api, watcher, "turn.started"), lambda: _log(api, watcher, "push"))
    turns = _entries(api, watcher, "turn.started")
    assert [d["status"] for d in turns] == ["dropped"], turns
    assert "watching" in turns[0]["detail"], turns
    assert service.requests[device.path] == 1, "the game's start only, no turn"
    arrived = [str(r.message["body"]) for r in service.received[device.path]]
    assert not any(body.startswith("Your turn") for body in arrived), arrived

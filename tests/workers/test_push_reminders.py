"""A reminder by Web Push alone: a player with no webhook and no e-mail, whose device is
subscribed, is reminded before their turn's deadline at the hour they chose, as urgently as
their turn is told, in words that say how far off the deadline is. Through the embedded
server and its workers under one fake clock (the timers live in the store), and a real push
service on loopback (`tests.workers.push_service`) that does not check the time (it leaps)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from litestar.testing import TestClient

from server.config.settings import Settings
from tests.server.client import Api, Json
from tests.server.live import build_app
from tests.workers.push_service import Device, PushService, Received
from tests.workers.test_clocks import FakeClock, _reminds, _timed_game
from tests.workers.test_push_delivery import _log, _until
from workers import runner

PUBLIC = "https://play.example"


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def api(clock: FakeClock, monkeypatch: pytest.MonkeyPatch) -> Iterator[Api]:
    """The embedded server (its push key made at start) and its workers, on the fake clock."""
    monkeypatch.setattr(runner, "TIMER_SECONDS", 0.02)  # the timers looked at often
    settings = Settings(webhook_allow="127.0.0.1", public_url=PUBLIC)
    with TestClient(build_app(settings, clock=clock), timeout=30) as client:
        yield Api(client)


def test_a_player_with_push_alone_is_reminded_by_push_urgently_with_the_time_left(
    api: Api, clock: FakeClock, pushes: PushService
) -> None:
    """Three hours before the deadline of a 24-hour turn: the reminder's id says how long
    before (`-180m-`), its `Urgency` is high, its body says the deadline is in 3 hours."""
    ada, bea = api.create_player("Ada"), api.create_player("Bea")
    devices = {}
    for player in (ada, bea):
        chosen = {"reminder_hours": [3]}
        settings = api.ok(api.request("PUT", "/api/me/notifications", player=player, json=chosen))
        assert settings["webhook"] is None and settings["reminder_hours"] == [3], settings
        devices[player.name] = pushes.add(Device())
        body = devices[player.name].subscription(pushes)
        api.ok(api.request("POST", "/api/me/push", player=player, json=body), 201)
    game_id = _timed_game(api, [ada, bea], {"per_move_hours": 24})
    board = api.board(game_id)
    seats = {api.board(game_id, p)["viewer"]: p for p in (ada, bea)}
    player = seats[board["pending"]["seat"]]
    path = devices[player.name].path
    before = len(pushes.wait(path, 2))  # game.started, turn.started
    clock.advance(21 * 3600 + 1)  # three hours before the deadline
    assert pushes.until(lambda: any(_reminds(r) for r in pushes.received[path]))
    (reminder,) = [r for r in pushes.received[path] if _reminds(r)]
    assert len(pushes.received[path]) == before + 1
    assert reminder.urgency == "high", _said(reminder)
    assert "Deadline: in 3 hours" in reminder.message["body"], _said(reminder)

    def reminders() -> list[Json]:
        return [d for d in _log(api, player, "push") if d["type"] == "turn.reminder"]

    _until(reminders, lambda: _log(api, player, "push"))
    (entry,) = reminders()
    assert entry["status"] == "delivered" and entry["version"] == board["version"], entry
    assert entry["webhook_id"].endswith("-180m-push"), entry
    assert api.board(game_id)["version"] == board["version"], "no timeout before the deadline"


def _said(received: Received) -> tuple[str | None, object]:
    return received.urgency, received.message

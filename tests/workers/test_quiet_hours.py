"""Quiet hours: a notification that comes while its player sleeps waits until their quiet
hours end, in their time zone, and is sent then, once, under the same id, by webhook, by
e-mail and by Web Push alike; a window that runs across midnight, and the nights a clock
change shortens or lengthens, included. Through the embedded server, a real webhook
receiver, a real SMTP server (aiosmtpd) and a real push service on loopback, under one fake
clock that RQ's scheduling reads too (a delivery put off is scheduled by that clock's time,
and moved to the queue when it comes)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from datetime import time as dt_time
from email.message import EmailMessage
from typing import Any, NamedTuple
from zoneinfo import ZoneInfo

import pytest
import rq.scheduler
from hypothesis import example, given
from hypothesis import strategies as st
from litestar.testing import TestClient

from server.config.settings import Settings
from store.notifications import QuietHours
from tests.server.client import Api, Json, Player
from tests.server.live import build_app
from tests.workers.mailbox import Inbox
from tests.workers.push_service import Device, PushService
from tests.workers.sink import Sink
from tests.workers.test_digest import FakeClock, _confirmed, _settings
from workers.delivery_attempts import after_quiet_hours

PUBLIC = "https://play.example"
BERLIN = "Europe/Berlin"
NIGHT = {"start": "22:00", "end": "07:00"}
ADDRESS = "ada@example.org"


class Night(NamedTuple):
    """A notification at `at` (UTC), inside the quiet hours `start`-`end` of `zone`, that
    must wait until `ends` (UTC)."""

    zone: str
    at: datetime
    ends: datetime


NIGHTS = {
    # 23:30 CET, before midnight: the window ends the next morning at 07:00 CET
    "a winter night in Berlin": Night(
        BERLIN, datetime(2027, 1, 15, 22, 30, tzinfo=UTC), datetime(2027, 1, 16, 6, 0, tzinfo=UTC)
    ),
    # 01:30 EST, after midnight: the window ends the same morning
    "after midnight in New York": Night(
        "America/New_York",
        datetime(2027, 1, 16, 6, 30, tzinfo=UTC),
        datetime(2027, 1, 16, 12, 0, tzinfo=UTC),
    ),
    # 23:30 CET on 27 March 2027; at 02:00 the clocks go to 03:00 CEST: 07:00 is 05:00 UTC
    "the night summer time begins in Berlin": Night(
        BERLIN, datetime(2027, 3, 27, 22, 30, tzinfo=UTC), datetime(2027, 3, 28, 5, 0, tzinfo=UTC)
    ),
    # 23:30 CEST on 30 October 2027; at 03:00 the clocks go back to 02:00 CET: 07:00 is 06:00
    "the night summer time ends in Berlin": Night(
        BERLIN, datetime(2027, 10, 30, 21, 30, tzinfo=UTC), datetime(2027, 10, 31, 6, 0, tzinfo=UTC)
    ),
}  # fmt: skip


@pytest.fixture
def clock() -> FakeClock:
    """The fake time starts a day before the nights tried (all after the real time of the
    test, so that RQ's scheduling, by the real clock, could not send a delivery put off)."""
    return FakeClock(datetime(2027, 1, 1, 12, 0, tzinfo=UTC))


@pytest.fixture
def api(
    clock: FakeClock, inbox: tuple[Inbox, int], monkeypatch: pytest.MonkeyPatch
) -> Iterator[Api]:
    # RQ's scheduling moves a job put off to the queue once its time has come by the clock
    # the workers keep (the fake one): a delivery deferred to 07:00 goes when the test says so.
    monkeypatch.setattr(rq.scheduler, "current_timestamp", lambda: int(clock().timestamp()))
    settings = Settings(
        smtp_url=f"smtp://127.0.0.1:{inbox[1]}", public_url=PUBLIC, mail_grace_seconds=0,
        webhook_allow="127.0.0.1",
    )  # fmt: skip
    with TestClient(build_app(settings, clock=clock), timeout=30) as client:
        yield Api(client)


def _deliveries(api: Api, player: Player) -> list[Json]:
    return list(api.ok(api.request("GET", "/api/me/deliveries", player=player)))


def _logged(api: Api, player: Player, match: Any, count: int = 1) -> list[Json]:
    """The delivery log entries of `player` that `match` takes, once there are `count`."""
    deadline = time.monotonic() + 20
    while len(found := [d for d in _deliveries(api, player) if match(d)]) < count:
        assert time.monotonic() < deadline, _deliveries(api, player)
        time.sleep(0.02)
    return found


def _game_mails(box: Inbox) -> list[EmailMessage]:
    return [m for m in box.of(ADDRESS) if "(game " in m["Subject"]]


def _settle() -> None:
    """Longer than the embedded workers take to move a job whose time has come to the queue
    and run it (they look about once a second)."""
    time.sleep(1.5)


@pytest.mark.parametrize("night", list(NIGHTS.values()), ids=list(NIGHTS))
def test_a_notice_in_quiet_hours_waits_for_their_end_and_comes_once_by_each_channel(
    api: Api, clock: FakeClock, inbox: tuple[Inbox, int], sink: Sink, *, pushes: PushService,
    night: Night,
) -> None:  # fmt: skip
    box, _port = inbox
    ada, bea = api.create_player("Ada"), api.create_player("Bea")
    _confirmed(api, box, ada, ADDRESS)
    phone = pushes.add(Device())
    api.ok(api.request("POST", "/api/me/push", player=ada, json=phone.subscription(pushes)), 201)
    quiet = {**NIGHT, "time_zone": night.zone}
    body = {"email": {"address": ADDRESS}, "webhook": {"url": sink.url("/ada")},
            "quiet_hours": quiet}  # fmt: skip
    answer = _settings(api, ada, body)
    assert answer["quiet_hours"] == quiet
    sink.secrets["/ada"] = answer["webhook"]["secret"]
    bea_hook = _settings(api, bea, {"webhook": {"url": sink.url("/bea")}})  # no quiet hours
    sink.secrets["/bea"] = bea_hook["webhook"]["secret"]

    clock.set(night.at)
    created = api.create_game(bea, 2)
    api.join(ada, created["game_id"], created["invite_code"])
    (told_bea,) = sink.wait("/bea", 1)  # the same notice, to a player awake: sent at once
    assert told_bea["type"] == "game.started"
    put_off = _logged(api, ada, lambda d: d["type"] == "game.started", 3)
    assert sorted(d["channel"] for d in put_off) == ["email", "push", "webhook"]
    for entry in put_off:
        assert entry["status"] == "deferred", put_off
        said = entry["detail"].removeprefix("quiet hours: to be sent at ")
        assert datetime.fromisoformat(said) == night.ends, entry["detail"]
    _settle()
    assert sink.received["/ada"] == [], "no webhook in the quiet hours"
    assert _game_mails(box) == [], "no e-mail in the quiet hours"
    assert pushes.requests.get(phone.path, 0) == 0, "no push in the quiet hours"

    clock.set(night.ends - timedelta(seconds=1))  # 06:59:59, local time
    _settle()
    assert sink.received["/ada"] == [] and _game_mails(box) == [], "not a second early"
    assert pushes.requests.get(phone.path, 0) == 0, "no push a second early"

    clock.set(night.ends + timedelta(seconds=1))
    ids = {d["channel"]: d["webhook_id"] for d in put_off}
    (started,) = [m for m in sink.wait("/ada", 1) if m["type"] == "game.started"]
    assert started["game_id"] == created["game_id"] and started["player_id"] == ada.player_id
    mails = box.wait(ADDRESS, 1, which=lambda m: "(game " in m["Subject"])
    pushed = pushes.wait(phone.path, 1)
    assert pushed[0].message["tag"] == f"game-{created['game_id']}"
    ids_put_off = {d["webhook_id"] for d in put_off}
    sent = _logged(
        api, ada, lambda d: d["status"] == "delivered" and d["webhook_id"] in ids_put_off, 3
    )
    assert sorted((d["channel"], d["webhook_id"]) for d in sent) == sorted(ids.items()), sent
    _settle()
    got = [i for i, m in zip(sink.ids["/ada"], sink.received["/ada"], strict=True)
           if m["type"] == "game.started"]  # fmt: skip
    assert got == [ids["webhook"]], "one copy, under the id it was put off with"
    mails = [m for m in _game_mails(box) if "started" in m["Subject"].lower()]
    assert len(mails) == 1, [m["Subject"] for m in _game_mails(box)]
    assert f".{ids['email']}@" in mails[0]["Message-ID"], "the e-mail's one id"
    pushed_at_all = _logged(
        api, ada, lambda d: d["channel"] == "push" and d["status"] == "delivered"
    )
    assert len(pushes.received[phone.path]) == len(pushed_at_all), "one push per notice"


ZONES = ["UTC", BERLIN, "America/New_York", "Asia/Tokyo", "Asia/Kolkata", "Australia/Lord_Howe",
         "Pacific/Chatham", "America/Santiago"]  # fmt: skip
MINUTES = 24 * 60


def _clock_time(minutes: int) -> str:
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


@given(
    zone=st.sampled_from(ZONES),
    start=st.integers(0, MINUTES - 1).map(lambda m: m - m % 15),
    length=st.integers(1, MINUTES - 1),
    now=st.datetimes(datetime(2026, 1, 1), datetime(2029, 1, 1), timezones=st.just(UTC)),
)
@example(zone=BERLIN, start=22 * 60, length=9 * 60, now=datetime(2027, 3, 27, 22, 30, tzinfo=UTC))
@example(zone=BERLIN, start=22 * 60, length=9 * 60, now=datetime(2027, 3, 28, 0, 59, tzinfo=UTC))
@example(zone=BERLIN, start=22 * 60, length=9 * 60, now=datetime(2027, 10, 30, 21, 30, tzinfo=UTC))
@example(zone=BERLIN, start=22 * 60, length=9 * 60, now=datetime(2027, 10, 31, 1, 30, tzinfo=UTC))
def test_quiet_hours_hold_a_notice_exactly_while_the_local_time_lies_in_them(
    zone: str, start: int, length: int, now: datetime
) -> None:
    """Inside the window (one across midnight too), a notice waits until the next time the
    local clock shows its end, no longer than the window lasts (an hour more on the night the
    clocks go back); outside it, it is sent now."""
    end = (start + length) % MINUTES
    quiet = QuietHours(_clock_time(start), _clock_time(end), zone)
    local = now.astimezone(ZoneInfo(zone))
    minute = local.hour * 60 + local.minute
    inside = (minute - start) % MINUTES < length
    later = after_quiet_hours(quiet, now)
    if not inside:
        assert later is None, f"{local:%H:%M} is outside {quiet.start}-{quiet.end}"
        return
    assert later is not None, f"{local:%H:%M} is inside {quiet.start}-{quiet.end}"
    assert now < later <= now + timedelta(minutes=length + 60)
    shown = later.astimezone(ZoneInfo(zone))
    if _clock_time(shown.hour * 60 + shown.minute) != quiet.end or shown.second:
        # only an end the clocks skip that day (a spring night's gap) is shown otherwise
        wall = datetime.combine(shown.date(), _wall(quiet.end), ZoneInfo(zone))
        assert wall.astimezone(UTC).astimezone(ZoneInfo(zone)).time() != wall.time(), shown


def _wall(clock_time: str) -> dt_time:
    return dt_time.fromisoformat(clock_time)

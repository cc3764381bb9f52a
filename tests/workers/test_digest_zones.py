"""The daily digest's day is the player's: a digest at 08:00 in Tokyo goes at 23:00 UTC the
day before, and carries Tokyo's date in its subject and its one id; so an hour moved after
that day's digest went sends no second one on the same local day, however the UTC dates
fall. Through the embedded server and a real SMTP server on loopback (aiosmtpd), under one
fake clock (see tests/workers/test_digest.py)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from litestar.testing import TestClient

from server.config.settings import Settings
from store.notifications import Digest
from tests.server.client import Api
from tests.server.live import build_app
from tests.workers.mailbox import Inbox
from tests.workers.test_digest import (
    FakeClock,
    _caught_up,
    _confirmed,
    _digests,
    _game,
    _play_until_turn_of,
    _settings,
    _settle,
    _wait_digests,
    _wait_for,
)
from workers import runner
from workers.deadlines import digest_day, next_digest

PUBLIC = "https://play.example"
TOKYO = "Asia/Tokyo"
ADDRESS = "ada@example.org"


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(datetime(2026, 12, 1, 9, 0, tzinfo=UTC))  # 18:00 in Tokyo


@pytest.fixture
def api(
    clock: FakeClock, inbox: tuple[Inbox, int], monkeypatch: pytest.MonkeyPatch
) -> Iterator[Api]:
    monkeypatch.setattr(runner, "TIMER_SECONDS", 0.02)  # the timers looked at often
    settings = Settings(
        smtp_url=f"smtp://127.0.0.1:{inbox[1]}", public_url=PUBLIC, mail_grace_seconds=0
    )
    with TestClient(build_app(settings, clock=clock), timeout=30) as client:
        yield Api(client)


def test_a_digest_at_eight_in_tokyo_carries_tokyos_date_and_a_moved_hour_sends_no_second(
    api: Api, clock: FakeClock, inbox: tuple[Inbox, int]
) -> None:
    box, _port = inbox
    ada, bea = api.create_player("Ada"), api.create_player("Bea")
    _confirmed(api, box, ada, ADDRESS)
    asked = _settings(api, ada, {"email": {"address": ADDRESS},
                                 "digest": {"hour": 8, "time_zone": TOKYO}})  # fmt: skip
    assert asked["digest"] == {"hour": 8, "time_zone": TOKYO}
    game_id, seats = _game(api, [ada, bea])
    _play_until_turn_of(api, game_id, seats, ada)
    _caught_up(api, ada)

    clock.set(datetime(2026, 12, 1, 22, 59, 59, tzinfo=UTC))  # 07:59:59 on 2 December, Tokyo
    _settle()
    assert _digests(box, ADDRESS) == [], "not before its hour"
    clock.set(datetime(2026, 12, 1, 23, 0, 1, tzinfo=UTC))  # 08:00:01 on 2 December, Tokyo
    (digest,) = _wait_digests(box, ADDRESS, 1)
    assert digest["Subject"] == "Patrician: 1 game awaits you (2026-12-02)", "Tokyo's date"
    sent = _wait_for(api, ada, lambda d: d["type"] == "digest")
    assert sent["status"] == "delivered"
    assert sent["webhook_id"] == f"digest-2026-12-02-{ada.player_id}-email"

    # Moved to 20:00, it would come again at 20:00 on 2 December in Tokyo (11:00 UTC, the
    # first digest's UTC date being the 1st): that day has had its digest.
    _settings(api, ada, {"email": {"address": ADDRESS}, "digest": {"hour": 20, "time_zone": TOKYO}})
    _settle()  # its time worked out again
    clock.set(datetime(2026, 12, 2, 11, 0, 1, tzinfo=UTC))
    _settle()
    assert len(_digests(box, ADDRESS)) == 1, "never two digests for one local day"
    clock.set(datetime(2026, 12, 3, 11, 0, 1, tzinfo=UTC))  # 20:00 on 3 December, Tokyo
    later = _wait_digests(box, ADDRESS, 2)[1]
    assert later["Subject"] == "Patrician: 1 game awaits you (2026-12-03)"


ZONES = ["UTC", "Asia/Tokyo", "Pacific/Kiritimati", "Pacific/Pago_Pago", "America/Los_Angeles",
         "Europe/Berlin", "Asia/Kolkata", "Australia/Lord_Howe", "America/St_Johns"]  # fmt: skip


@given(
    zone=st.sampled_from(ZONES),
    hour=st.integers(0, 23),
    after=st.datetimes(datetime(2026, 1, 1), datetime(2029, 1, 1)).map(
        lambda d: d.replace(tzinfo=UTC)
    ),
)
@example(zone="Asia/Tokyo", hour=8, after=datetime(2026, 12, 1, 9, 0, tzinfo=UTC))
@example(zone="America/Los_Angeles", hour=20, after=datetime(2026, 12, 1, 9, 0, tzinfo=UTC))
def test_a_digests_day_is_the_local_date_of_its_hour_in_its_zone(
    zone: str, hour: int, after: datetime
) -> None:
    """Whatever the date in UTC: the day named is the one on which the player's clock shows
    the digest's hour (or the hour after it, when a clock change skips it)."""
    digest = Digest(hour, zone)
    due = next_digest(digest, after)
    local = due.astimezone(ZoneInfo(zone))
    assert after < due <= after + timedelta(hours=25)
    assert local.minute == 0 and local.hour in (hour, (hour + 1) % 24)
    assert digest_day(digest, due.timestamp()) == local.date().isoformat()

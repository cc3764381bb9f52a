"""The daily digest: a player who asks for one gets, at their hour in their time zone, one
e-mail a day listing the games that await their decision, each told as its own notification
would tell it (what is asked, the deadline, what happened since their last turn, the link to
play), with the one-click unsubscribe, instead of an e-mail per turn (webhooks unchanged);
never two for one day; and turning it off brings the e-mails of each turn back. Through a
real SMTP server on loopback (aiosmtpd), under one fake clock; its schedule lives in Redis."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest
import redis
from litestar.testing import TestClient
from rq.job import Job

from projections.mail import render_digest
from projections.notices import NoticeDocument
from server.config.card_data import load_game_data
from server.config.settings import Settings
from store.notifications import (
    Channels,
    Digest,
    Email,
    NotificationKeys,
    schedule_digest_op,
    set_channels_op,
)
from store.talk import TalkMessage
from tests.server.client import Api, Json, Player
from tests.server.live import build_app
from tests.store.servers import RedisServer
from tests.workers.mailbox import Inbox, html_of, text_of
from tests.workers.sink import Sink
from workers import runner
from workers.context import WorkerContext
from workers.deadlines import fire_digests, next_digest
from workers.settings import WorkerSettings, context_for

PUBLIC = "https://play.example"
BERLIN = "Europe/Berlin"


class FakeClock:
    """The one time of the server and its workers, moved on by the test."""

    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def set(self, moment: datetime) -> None:
        self.now = moment


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(datetime(2026, 12, 1, 9, 0, tzinfo=UTC))  # 10:00 in Berlin


@pytest.fixture
def api(
    clock: FakeClock, inbox: tuple[Inbox, int], monkeypatch: pytest.MonkeyPatch
) -> Iterator[Api]:
    monkeypatch.setattr(runner, "TIMER_SECONDS", 0.02)  # the timers looked at often
    settings = Settings(
        smtp_url=f"smtp://127.0.0.1:{inbox[1]}", public_url=PUBLIC, mail_grace_seconds=0,
        webhook_allow="127.0.0.1",
    )  # fmt: skip
    with TestClient(build_app(settings, clock=clock), timeout=30) as client:
        yield Api(client)


def _settings(api: Api, player: Player, body: Json, status: int = 200) -> Json:
    return api.ok(api.request("PUT", "/api/me/notifications", player=player, json=body), status)


def _confirmed(api: Api, box: Inbox, player: Player, address: str) -> None:
    _settings(api, player, {"email": {"address": address}})
    (asked,) = box.wait(address, 1)
    found = re.search(r"/api/email/confirm\?token=[A-Za-z0-9_-]+", text_of(asked))
    assert found is not None
    assert api.request("POST", found.group(0)).status_code == 200


def _game(
    api: Api, players: list[Player], clock: Json | None = None
) -> tuple[str, dict[int, Player]]:
    body: Json = {"seats": len(players), "entropy": "e"}
    if clock is not None:
        body["clock"] = clock
    created = api.ok(api.request("POST", "/api/games", player=players[0], json=body), 201)
    for player in players[1:]:
        api.join(player, created["game_id"], created["invite_code"])
    game_id = str(created["game_id"])
    return game_id, {api.board(game_id, p)["viewer"]: p for p in players}


def _play_until_turn_of(api: Api, game_id: str, seats: dict[int, Player], player: Player) -> Json:
    """Play first legal commands for the others until it is `player`'s decision."""
    seat = next(s for s, p in seats.items() if p is player)
    while (board := api.board(game_id))["pending"]["seat"] != seat:
        mover = seats[board["pending"]["seat"]]
        mine = api.board(game_id, mover)
        api.ok(api.send(game_id, mover, mine["version"], [mine["legal_commands"][0]]))
    return board


def _deliveries(api: Api, player: Player) -> list[Json]:
    return list(api.ok(api.request("GET", "/api/me/deliveries", player=player)))


def _wait_for(api: Api, player: Player, match: Any, seconds: float = 20) -> Json:
    """The newest delivery of `player` that `match` takes, once there is one."""
    deadline = time.monotonic() + seconds
    while True:
        found = _deliveries(api, player)
        for delivery in found:
            if match(delivery):
                return delivery
        assert time.monotonic() < deadline, found
        time.sleep(0.02)


def _webhooks(sink: Sink, path: str, match: Any, count: int) -> list[Json]:
    """The messages of `path` that `match` takes, once there are `count` of them."""
    deadline = time.monotonic() + 20
    while len(found := [m for m in list(sink.received[path]) if match(m)]) < count:
        assert time.monotonic() < deadline, sink.received[path]
        time.sleep(0.02)
    return found


def _caught_up(api: Api, player: Player) -> None:
    """The workers have handled the player's turn (its e-mail dropped for the digest) and
    seen their digest setting, before the clock leaps (a setting seen only after its hour
    has come sends its first digest the next day)."""
    _wait_for(api, player, lambda d: d["type"] == "turn.started" and d["status"] == "dropped")
    _settle()


def _settle() -> None:
    """Time for the workers to do what they would (the timers run every 0.02 s here)."""
    time.sleep(0.5)


def _turn_mails(box: Inbox, address: str) -> list[EmailMessage]:
    return [m for m in box.of(address) if _is_turn_mail(m)]


def _is_turn_mail(message: EmailMessage) -> bool:
    return "Your turn" in message["Subject"]


def _wait_turn_mails(box: Inbox, address: str, count: int) -> list[EmailMessage]:
    return box.wait(address, count, which=_is_turn_mail)


def _is_digest(message: EmailMessage) -> bool:
    return "await" in message["Subject"]


def _digests(box: Inbox, address: str) -> list[EmailMessage]:
    return [m for m in box.of(address) if _is_digest(m)]


def _wait_digests(box: Inbox, address: str, count: int) -> list[EmailMessage]:
    """The digests of `address`, once there are `count`."""
    return box.wait(address, count, which=_is_digest)


def _section(mail: str, heading: str) -> str:
    """What the digest says of one game: from its heading to the next game's or the end."""
    start = mail.index(heading)
    ends = [i for mark in ("Game ", "<h2>", "No more e-mails")
            if (i := mail.find(mark, start + len(heading))) >= 0]  # fmt: skip
    return mail[start : min(ends, default=len(mail))]


def _hides_what_the_others_hold(api: Api, game_id: str, others: list[Player], mail: str) -> None:
    """The cards dealt to the other seats that they still hold were never shown to this one:
    none is named in the e-mail (cards taken from the face-up ones are public)."""
    for other in others:
        dealt = {
            card
            for item in api.events(game_id, other)["events"]
            if item["event"]["type"] == "hand_dealt"
            for card in item["event"]["cards"]
        }
        held = set(api.board(game_id, other)["hand"]) & dealt
        assert held, "the other seat still holds cards dealt to it"
        assert not [card for card in held if re.search(rf"\b{re.escape(card)}\b", mail)]


def test_a_player_with_a_digest_gets_one_email_a_day_for_the_games_that_await_them(
    api: Api, clock: FakeClock, inbox: tuple[Inbox, int], sink: Sink
) -> None:
    box, _port = inbox
    ada, bea, cy = (api.create_player(name) for name in ("Ada", "Bea", "Cy"))
    address = "ada@example.org"
    _confirmed(api, box, ada, address)
    body = {
        "email": {"address": address}, "webhook": {"url": sink.url("/ada")},
        "digest": {"hour": 8, "time_zone": BERLIN}, "reminder_hours": [71],
    }  # fmt: skip
    answer = _settings(api, ada, body)
    assert answer["digest"] == {"hour": 8, "time_zone": BERLIN}
    assert answer["email"] == {"address": address, "confirmed": True}
    sink.secrets["/ada"] = answer["webhook"]["secret"]

    first, first_seats = _game(api, [ada, bea])
    timed, timed_seats = _game(api, [ada, cy], clock={"per_move_hours": 72})
    other, other_seats = _game(api, [ada, bea])
    _play_until_turn_of(api, first, first_seats, bea)
    _play_until_turn_of(api, first, first_seats, ada)  # Bea played: it awaits Ada
    _play_until_turn_of(api, timed, timed_seats, ada)
    _play_until_turn_of(api, other, other_seats, bea)  # it awaits Bea, not Ada
    # Ada may be told twice of the first game before the timed one: wait for both games.
    deadline = time.monotonic() + 20
    while not {first, timed} <= {
        m["game_id"] for m in _webhooks(sink, "/ada", lambda m: m["type"] == "turn.started", 2)
    }:
        assert time.monotonic() < deadline, "webhooks are told as before"
        time.sleep(0.02)
    _wait_for(api, ada, lambda d: d["type"] == "turn.started" and d["channel"] == "email"
              and d["status"] == "dropped" and "digest" in d["detail"])  # fmt: skip
    clock.set(clock.now + timedelta(hours=1, minutes=1))  # the timed game's reminder: 71 h
    (reminder,) = _webhooks(sink, "/ada", lambda m: m["type"] == "turn.reminder", 1)
    assert reminder["game_id"] == timed
    _wait_for(api, ada, lambda d: d["type"] == "turn.reminder" and d["channel"] == "email"
              and d["status"] == "dropped")  # fmt: skip
    _settle()
    assert _turn_mails(box, address) == [] and _digests(box, address) == []

    clock.set(datetime(2026, 12, 2, 6, 59, 59, tzinfo=UTC))  # 07:59:59 in Berlin
    _settle()
    assert _digests(box, address) == [], "not before its hour"
    clock.set(datetime(2026, 12, 2, 7, 0, 1, tzinfo=UTC))
    (digest,) = _wait_digests(box, address, 1)
    assert digest["Subject"] == "Patrician: 2 games await you (2026-12-02)"
    text, page = text_of(digest), html_of(digest)
    for game_id in (first, timed):
        assert f"Game {game_id}" in text and f"{PUBLIC}/games/{game_id}" in page
    assert other not in text + page, "a game that awaits another player is not listed"
    assert text.count("you are to") == 2 and "Since your last turn:" in text
    assert text.index(timed) < text.index(first), "the game with a deadline first"
    assert "Deadline: in 2 days, Friday 10:" in text and "CET." in text, "in the digest's zone"
    unsubscribe = digest["List-Unsubscribe"].strip("<>")
    assert digest["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    assert unsubscribe.startswith(f"{PUBLIC}/api/email/unsubscribe?token=") and unsubscribe in text
    for game_id, others in ((first, [bea]), (timed, [cy])):  # the games share card names
        said = _section(text, f"Game {game_id}") + _section(page, f"<h2>Game {game_id}</h2>")
        assert "you are to" in said
        if game_id == first:  # Bea played since Ada's last turn there
            bea_seat = next(seat for seat, p in first_seats.items() if p is bea)
            assert "Since your last turn:" in said and f"Bea (seat {bea_seat}) plays" in said, said
        _hides_what_the_others_hold(api, game_id, others, said)
    sent = _wait_for(api, ada, lambda d: d["type"] == "digest")
    assert sent["status"] == "delivered" and sent["channel"] == "email"
    assert sent["webhook_id"] == f"digest-2026-12-02-{ada.player_id}-email"

    clock.set(datetime(2026, 12, 2, 18, 0, tzinfo=UTC))
    _settle()
    assert len(_digests(box, address)) == 1, "one digest a day"
    assert _turn_mails(box, address) == []

    clock.set(datetime(2026, 12, 3, 7, 0, 1, tzinfo=UTC))  # the next day's
    second = _wait_digests(box, address, 2)[1]
    assert second["Subject"] == "Patrician: 2 games await you (2026-12-03)"
    _settle()
    assert len(_digests(box, address)) == 2


def test_turning_the_digest_off_brings_back_an_email_per_turn(
    api: Api, clock: FakeClock, inbox: tuple[Inbox, int]
) -> None:
    box, _port = inbox
    ada, bea = api.create_player("Ada"), api.create_player("Bea")
    address = "ada@example.org"
    _confirmed(api, box, ada, address)
    _settings(api, ada, {"email": {"address": address}, "digest": {}})
    game_id, seats = _game(api, [ada, bea])
    board = _play_until_turn_of(api, game_id, seats, ada)
    _wait_for(api, ada, lambda d: d["version"] == board["version"] and d["status"] == "dropped")
    off = _settings(api, ada, {"email": {"address": address}})
    assert off["digest"] is None and off["email"]["confirmed"]
    _play_until_turn_of(api, game_id, seats, bea)
    board = _play_until_turn_of(api, game_id, seats, ada)
    (turn,) = _wait_turn_mails(box, address, 1)
    assert f"{PUBLIC}/games/{game_id}" in text_of(turn)
    clock.set(datetime(2026, 12, 2, 8, 0, 1, tzinfo=UTC))  # the digest's hour (08:00 UTC)
    _settle()
    assert _digests(box, address) == [], "no digest once it is off"


def test_a_digests_hour_changed_after_it_was_sent_sends_none_more_that_day(
    api: Api, clock: FakeClock, inbox: tuple[Inbox, int]
) -> None:
    box, _port = inbox
    ada, bea = api.create_player("Ada"), api.create_player("Bea")
    address = "ada@example.org"
    _confirmed(api, box, ada, address)
    _settings(api, ada, {"email": {"address": address}, "digest": {"hour": 10}})
    game_id, seats = _game(api, [ada, bea])
    _play_until_turn_of(api, game_id, seats, ada)
    _caught_up(api, ada)
    clock.set(datetime(2026, 12, 1, 10, 0, 1, tzinfo=UTC))  # 10:00 UTC: today's
    (digest,) = _wait_digests(box, address, 1)
    assert digest["Subject"] == "Patrician: 1 game awaits you (2026-12-01)"
    _settings(api, ada, {"email": {"address": address}, "digest": {"hour": 20}})
    _settle()  # its time worked out again: 20:00 today
    clock.set(datetime(2026, 12, 1, 20, 0, 1, tzinfo=UTC))
    _settle()
    assert len(_digests(box, address)) == 1, "never two digests for one day"
    clock.set(datetime(2026, 12, 2, 20, 0, 1, tzinfo=UTC))
    later = _wait_digests(box, address, 2)[1]
    assert later["Subject"] == "Patrician: 1 game awaits you (2026-12-02)"


def test_unsubscribing_from_a_digest_stops_it(
    api: Api, clock: FakeClock, inbox: tuple[Inbox, int]
) -> None:
    box, _port = inbox
    ada, bea = api.create_player("Ada"), api.create_player("Bea")
    address = "ada@example.org"
    _confirmed(api, box, ada, address)
    _settings(api, ada, {"email": {"address": address}, "digest": {"hour": 10}})
    game_id, seats = _game(api, [ada, bea])
    _play_until_turn_of(api, game_id, seats, ada)
    _caught_up(api, ada)
    clock.set(datetime(2026, 12, 1, 10, 0, 1, tzinfo=UTC))
    (digest,) = _wait_digests(box, address, 1)
    one_click = api.request(
        "POST", digest["List-Unsubscribe"].strip("<>").removeprefix(PUBLIC),
        content=b"List-Unsubscribe=One-Click",
        headers={"content-type": "application/x-www-form-urlencoded"},
    )  # fmt: skip
    assert one_click.status_code == 200, one_click.text
    mine = api.ok(api.request("GET", "/api/me/notifications", player=ada))
    assert mine["email"] is None and mine["digest"] is None
    count = len(box.of(address))
    clock.set(datetime(2026, 12, 2, 10, 0, 1, tzinfo=UTC))
    _settle()
    assert len(box.of(address)) == count and len(_digests(box, address)) == 1


@pytest.mark.parametrize(
    ("digest", "status", "field"),
    [
        ({"hour": 24}, 400, "digest.hour"),
        ({"hour": -1}, 400, "digest.hour"),
        ({"hour": 8.5}, 400, "digest.hour"),
        ({"hour": "8"}, 400, "digest.hour"),
        ({"hour": True}, 400, "digest.hour"),
        ({"minute": 30}, 400, "digest"),
        ({"time_zone": "Mars/Olympus"}, 422, "digest.time_zone"),
        ({"time_zone": "Europe"}, 422, "digest.time_zone"),
        ({"time_zone": "../etc/passwd"}, 422, "digest.time_zone"),
        ({"time_zone": "x" * 65}, 400, "digest.time_zone"),
        ("daily", 400, "digest"),
    ],
)
def test_a_digest_setting_that_cannot_be_is_refused_naming_its_field(
    api: Api, digest: Json, status: int, field: str
) -> None:
    ada = api.create_player("Ada")
    body = {"email": {"address": "ada@example.org"}, "digest": digest}
    answer = api.request("PUT", "/api/me/notifications", player=ada, json=body)
    assert answer.status_code == status, answer.text
    said = answer.json()
    assert said.get("field") == field or f"$.{field}" in said["message"], said
    assert api.ok(api.request("GET", "/api/me/notifications", player=ada))["digest"] is None


def test_a_digest_needs_an_email_address_and_defaults_to_eight_in_the_quiet_hours_zone(
    api: Api,
) -> None:
    ada = api.create_player("Ada")
    alone = api.request("PUT", "/api/me/notifications", player=ada, json={"digest": {}})
    assert alone.status_code == 422 and alone.json()["field"] == "digest", alone.text
    mail = {"email": {"address": "ada@example.org"}}
    plain = _settings(api, ada, {**mail, "digest": {}})
    assert plain["digest"] == {"hour": 8, "time_zone": "UTC"}
    quiet = {"start": "22:00", "end": "07:00", "time_zone": "America/New_York"}
    zoned = _settings(api, ada, {**mail, "quiet_hours": quiet, "digest": {"hour": 7}})
    assert zoned["digest"] == {"hour": 7, "time_zone": "America/New_York"}
    assert api.ok(api.request("GET", "/api/me/notifications", player=ada)) == zoned


def test_a_digest_escapes_a_players_words_in_its_html_and_counts_the_games_left_out() -> None:
    said = TalkMessage("1-0", 1, "<img src=x onerror=alert(1)>", "<script>steal()</script>",
                       "2026-12-01T09:00:00.000Z")  # fmt: skip
    document = NoticeDocument(
        type="turn.started", game_id="g1", version=9, head_hash="0" * 64, player_id="p1",
        seat=0, asked=None, since_version=3, happened=["Seat 1 played FIR-4."], events=[],
        play_url="https://play.example/games/g1", talk=[said],
    )  # fmt: skip
    mail = render_digest("2026-12-02", [document], "https://play.example/u?token=t", more=2)
    assert mail.subject == "Patrician: 3 games await you (2026-12-02)"
    assert "<script>" not in mail.html and "<img" not in mail.html
    assert "&lt;script&gt;steal()&lt;/script&gt;" in mail.html
    assert "And 2 more" in mail.text and "Seat 1 played FIR-4." in mail.text
    one = render_digest("2026-12-02", [document], "https://play.example/u?token=t")
    assert one.subject == "Patrician: 1 game awaits you (2026-12-02)"


@pytest.mark.parametrize(
    ("after", "hour", "zone", "due"),
    [
        (datetime(2026, 12, 1, 9, 0, tzinfo=UTC), 8, BERLIN, datetime(2026, 12, 2, 7, 0)),
        (datetime(2026, 12, 1, 6, 0, tzinfo=UTC), 8, BERLIN, datetime(2026, 12, 1, 7, 0)),
        (datetime(2026, 12, 1, 7, 0, tzinfo=UTC), 8, BERLIN, datetime(2026, 12, 2, 7, 0)),
        (datetime(2026, 7, 1, 5, 0, tzinfo=UTC), 8, BERLIN, datetime(2026, 7, 1, 6, 0)),
        (datetime(2026, 3, 28, 12, 0, tzinfo=UTC), 2, BERLIN, datetime(2026, 3, 29, 1, 0)),
        (datetime(2026, 10, 24, 12, 0, tzinfo=UTC), 2, BERLIN, datetime(2026, 10, 25, 0, 0)),
        (datetime(2026, 12, 1, 23, 30, tzinfo=UTC), 0, "UTC", datetime(2026, 12, 2, 0, 0)),
        (datetime(2026, 12, 1, 12, 0, tzinfo=UTC), 23, "Pacific/Kiritimati",
         datetime(2026, 12, 2, 9, 0)),
    ],
)  # fmt: skip
def test_the_next_digest_is_the_start_of_its_hour_in_its_zone_clock_changes_included(
    after: datetime, hour: int, zone: str, due: datetime
) -> None:
    """(On 2026-03-29 Berlin's 02:00 does not exist: 03:00 CEST; on 2026-10-25 it comes twice:
    the first.)"""
    assert next_digest(Digest(hour, zone), after) == due.replace(tzinfo=UTC)


PREFIX = "digests"
NOW = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RedisServer]:
    with RedisServer(tmp_path, "--appendonly", "yes", "--appendfsync", "always") as running:
        yield running


def _context(server: RedisServer, now: datetime) -> WorkerContext:
    client = redis.Redis(port=server.port, socket_timeout=5)
    settings = WorkerSettings(prefix=PREFIX, shards=4)
    return context_for(client, load_game_data(), settings, clock=lambda: now)


def _restart(server: RedisServer, now: datetime) -> WorkerContext:
    server.kill()  # SIGKILL: no shutdown, no last save
    server.start()
    return _context(server, now)


def test_a_digests_schedule_survives_a_redis_restart_and_fires_once_a_day(
    server: RedisServer,
) -> None:
    context = _context(server, NOW)
    keys = NotificationKeys(context.accounts)
    channels = Channels(email=Email("ada@example.org", True), digest=Digest(8, BERLIN))
    context.store.run(set_channels_op(keys, "p1", channels))
    context.store.run(schedule_digest_op(keys, "p1"))  # as the setting leaves it: due 0
    assert fire_digests(context) == 0, "its time worked out, nothing sent"
    due = datetime(2026, 12, 2, 7, 0, tzinfo=UTC)
    assert context.store.client.zscore(keys.digests(), "p1") == due.timestamp()
    context = _restart(server, due + timedelta(seconds=1))
    assert fire_digests(context) == 1
    context = _restart(server, due + timedelta(seconds=2))
    assert fire_digests(context) == 0, "fired once"
    assert context.queue.job_ids == ["digest-2026-12-02-p1-email"]
    job = Job.fetch("digest-2026-12-02-p1-email", connection=context.queue.connection,
                    serializer=context.queue.serializer)  # fmt: skip
    assert job.func_name == "workers.mail.send_digest" and job.args == ["p1", "2026-12-02"]
    tomorrow = datetime(2026, 12, 3, 7, 0, tzinfo=UTC).timestamp()
    assert context.store.client.zscore(keys.digests(), "p1") == tomorrow
    late = _restart(server, datetime(2026, 12, 6, 12, 0, tzinfo=UTC))  # the workers were down
    assert fire_digests(late) == 1, "one late digest, not one per day missed"
    assert sorted(late.queue.job_ids) == [
        "digest-2026-12-02-p1-email", "digest-2026-12-03-p1-email"
    ]  # fmt: skip
    after = datetime(2026, 12, 7, 7, 0, tzinfo=UTC).timestamp()
    assert late.store.client.zscore(keys.digests(), "p1") == after


def test_a_digest_turned_off_is_taken_off_the_schedule_when_it_comes_due(
    server: RedisServer,
) -> None:
    """(Its setting takes it off; this is what a race with the workers leaves.)"""
    context = _context(server, NOW)
    keys = NotificationKeys(context.accounts)
    context.store.run(set_channels_op(keys, "p1", Channels(email=Email("a@b.example", True))))
    context.store.run(schedule_digest_op(keys, "p1", NOW.timestamp() - 1))
    assert fire_digests(context) == 0
    assert context.store.client.zscore(keys.digests(), "p1") is None
    assert context.queue.job_ids == []

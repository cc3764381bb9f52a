"""An e-mail says its deadline as its reader would: how far off it is, then the day and the
time in the player's time zone (their quiet hours', else their digest's), with the zone's
abbreviation; UTC, said so, for a player who set no zone. The time is the caller's."""

from __future__ import annotations

from datetime import UTC, datetime

from projections.mail import Reader, render, render_digest
from projections.notices import NoticeDocument
from store.notifications import Channels, Digest, QuietHours

NOW = datetime(2026, 12, 4, 10, 0, tzinfo=UTC)  # a Friday, 11:00 in Berlin
UNSUBSCRIBE = "https://play.example/api/email/unsubscribe?token=t"


def _turn(deadline: str) -> NoticeDocument:
    return NoticeDocument(
        type="turn.started", game_id="g1", version=9, head_hash="0" * 64, player_id="p1",
        seat=0, asked=None, since_version=3, happened=[], events=[],
        play_url="https://play.example/games/g1", deadline=deadline,
    )  # fmt: skip


def test_an_emails_deadline_is_said_in_words_in_the_players_time_zone() -> None:
    berlin = QuietHours("22:00", "07:00", "Europe/Berlin")
    mail = render(_turn("2026-12-04T13:00:00.000Z"), UNSUBSCRIBE,
                  Reader.of(Channels(quiet_hours=berlin), NOW))  # fmt: skip
    assert "Deadline: in 3 hours, Friday 14:00 CET." in mail.text
    assert "<p>Deadline: in 3 hours, Friday 14:00 CET.</p>" in mail.html
    assert "2026-12-04T13:00" not in mail.text + mail.html


def test_a_player_without_a_time_zone_is_told_the_deadline_in_utc_and_that_it_is_utc() -> None:
    mail = render(_turn("2026-12-04T10:20:00.000Z"), UNSUBSCRIBE, Reader.of(Channels(), NOW))
    assert "Deadline: in 20 minutes, Friday 10:20 UTC." in mail.text


def test_a_digest_says_each_deadline_in_the_zone_of_the_players_digest() -> None:
    tokyo = Channels(digest=Digest(8, "Asia/Tokyo"))
    far = _turn("2026-12-20T03:00:00.000Z")
    mail = render_digest("2026-12-04", [far], UNSUBSCRIBE, reader=Reader.of(tokyo, NOW))
    assert "Deadline: in 16 days, Sunday 20 December 12:00 JST." in mail.text


def test_a_deadline_already_passed_is_said_to_have_passed() -> None:
    mail = render(_turn("2026-12-04T09:00:00.000Z"), UNSUBSCRIBE, Reader(NOW, "Europe/Berlin"))
    assert "Deadline: passed, Friday 10:00 CET." in mail.text

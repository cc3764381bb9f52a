"""An e-mail says what its notification's document says, and a player's words in it (names,
table talk) cannot become markup: they are escaped in the HTML part."""

from __future__ import annotations

from projections.mail import render
from projections.notices import NoticeDocument
from store.talk import TalkMessage


def test_a_players_words_are_escaped_in_the_html_of_an_email() -> None:
    said = TalkMessage("1-0", 1, "<img src=x onerror=alert(1)>", "<script>steal()</script>\nok",
                       "2026-12-01T09:00:00.000Z")  # fmt: skip
    document = NoticeDocument(
        type="turn.started", game_id="g1", version=9, head_hash="0" * 64, player_id="p1",
        seat=0, asked=None, since_version=3, happened=["Seat 1 played FIR-4."], events=[],
        play_url="https://play.example/games/g1", talk=[said],
    )  # fmt: skip
    mail = render(document, "https://play.example/api/email/unsubscribe?token=t")
    assert "<script>" not in mail.html and "<img" not in mail.html
    assert "&lt;script&gt;steal()&lt;/script&gt;<br>ok" in mail.html
    assert "<script>steal()</script>" in mail.text, "the text part says it as it was said"
    assert "Seat 1 played FIR-4." in mail.text and "https://play.example/games/g1" in mail.text

"""A push message as a phone shows it: the game named by its players (the reader as "you",
a seat without a name by its number, never the game's id), what is asked and by when in the
reader's words, a link that stays on this site, and nothing longer than a lock screen shows."""

from __future__ import annotations

from datetime import UTC, datetime

from domain.view import PendingView
from projections.mail import Reader
from projections.notices import NoticeDocument
from projections.push_messages import BODY_LENGTH, TITLE_LENGTH, game_name, message_of


def _document(**changed: object) -> NoticeDocument:
    fields: dict[str, object] = {
        "type": "turn.started", "game_id": "g12ab", "version": 9, "head_hash": "0" * 64,
        "player_id": "p1", "seat": 1, "asked": PendingView(seat=1, step="play_card"),
        "since_version": 4, "happened": ["Ada (seat 0) played a card."], "events": [],
        "play_url": "https://play.example/games/g12ab",
    }  # fmt: skip
    return NoticeDocument(**{**fields, **changed})  # type: ignore[arg-type]


def test_a_game_is_named_by_its_other_players_and_you() -> None:
    assert game_name(["Ada", "Bea"], 1) == "Ada and you"
    assert game_name(["Ada", "Bea", "Cy"], 0) == "Bea, Cy and you"
    assert game_name(["Ada", ""], 0) == "seat 1 and you"
    assert game_name([], None) == "A game of Patrician"


def test_a_turn_says_the_step_and_the_deadline_in_the_readers_zone() -> None:
    document = _document(deadline="2026-12-04T13:00:00+00:00")
    reader = Reader(datetime(2026, 12, 4, 10, 0, tzinfo=UTC), "Europe/Berlin")
    message = message_of(document, ["Ada", "Bea"], reader)
    assert message.title == "Ada and you"
    assert message.body == (
        "Your turn: you are to play a card. Deadline: in 3 hours, Friday 14:00 CET."
    )
    assert message.url == "/games/g12ab" and message.tag == "game-g12ab"
    assert "g12ab" not in message.title + message.body


def test_the_end_says_who_won_and_long_names_are_cut() -> None:
    ended = _document(type="game.ended", asked=None, winners=[1])
    message = message_of(ended, ["A" * 200, "Bea"])
    assert message.body == "The game is over: you won."
    assert len(message.title) == TITLE_LENGTH and message.title.endswith("…")
    assert len(message_of(_document(), ["x" * 500, "y"]).body) <= BODY_LENGTH


def test_the_link_stays_on_this_site_whatever_the_public_url() -> None:
    for url in ("https://play.example/games/g1", "//evil.example/games/g1", "https://x/",
                "https://x//evil.example/games/g1"):  # fmt: skip
        path = message_of(_document(play_url=url), ["Ada", "Bea"]).url
        assert path.startswith("/") and not path.startswith("//"), path

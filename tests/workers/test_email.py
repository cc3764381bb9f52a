"""Notifications by e-mail, through a real SMTP server on loopback (`aiosmtpd`): an address
gets nothing but its confirmation until its owner confirms it by the link (a GET of the link
confirms nothing: mail scanners fetch links); then each turn comes as a text and HTML e-mail
with a one-click unsubscribe (RFC 8058) that works; a turn's e-mail waits a grace period and
is dropped if the player plays within it; and an e-mail tells nothing its recipient may not
see."""

from __future__ import annotations

import re
import time
from email.message import EmailMessage
from typing import Any

import pytest
from litestar.testing import TestClient

from server.config.settings import Settings
from tests.server.client import Api, Json, Player
from tests.server.live import build_app
from tests.workers.mailbox import Inbox, html_of, text_of

PUBLIC = "https://play.example"


def _api(port: int, grace: float) -> TestClient[Any]:
    settings = Settings(
        smtp_url=f"smtp://127.0.0.1:{port}", public_url=PUBLIC, mail_grace_seconds=grace
    )
    return TestClient(build_app(settings), timeout=30)


def _link(message: EmailMessage, path: str) -> str:
    found = re.search(re.escape(PUBLIC + path) + r"\?token=[A-Za-z0-9_-]+", text_of(message))
    assert found is not None, text_of(message)
    return found.group(0).removeprefix(PUBLIC)


def _set_email(api: Api, player: Player, address: str) -> Json:
    body = {"email": {"address": address}}
    return api.ok(api.request("PUT", "/api/me/notifications", player=player, json=body))


def _game(api: Api, players: list[Player]) -> str:
    created = api.create_game(players[0], len(players), entropy="e")
    for player in players[1:]:
        api.join(player, created["game_id"], created["invite_code"])
    return str(created["game_id"])


def _play_until_turn_of(api: Api, game_id: str, seats: dict[int, Player], seat: int) -> Json:
    """Play first legal commands for the others until `seat` is to decide."""
    while (board := api.board(game_id))["pending"]["seat"] != seat:
        mover = seats[board["pending"]["seat"]]
        mine = api.board(game_id, mover)
        api.ok(api.send(game_id, mover, mine["version"], [mine["legal_commands"][0]]))
    return board


def test_an_address_is_confirmed_by_its_link_then_each_turn_comes_by_email_until_unsubscribed(
    inbox: tuple[Inbox, int],
) -> None:
    box, port = inbox
    with _api(port, grace=0.2) as client:
        api = Api(client)
        ada, bea = api.create_player("Ada"), api.create_player("Bea")
        answer = _set_email(api, ada, "Ada@Example.org")
        assert answer["email"] == {"address": "Ada@example.org", "confirmed": False}
        asked = box.wait("Ada@example.org", 1)[0]
        assert "confirm" in asked["Subject"].lower()
        game_id = _game(api, [ada, bea])
        seats = {api.board(game_id, p)["viewer"]: p for p in (ada, bea)}
        mine = {p.name: s for s, p in seats.items()}
        time.sleep(1.5)
        assert len(box.of("Ada@example.org")) == 1, "nothing but the confirmation, unconfirmed"

        link = _link(asked, "/api/email/confirm")
        page = client.get(link)
        assert page.status_code == 200 and "<form" in page.text
        mail = api.ok(api.request("GET", "/api/me/notifications", player=ada))["email"]
        assert not mail["confirmed"], "a GET of the link confirms nothing"
        assert client.post(link).status_code == 200
        mail = api.ok(api.request("GET", "/api/me/notifications", player=ada))["email"]
        assert mail["confirmed"]
        assert client.post(link).status_code == 404, "a link works once"

        _play_until_turn_of(api, game_id, seats, 1 - mine["Ada"])
        _play_until_turn_of(api, game_id, seats, mine["Ada"])
        turn = next(m for m in box.wait("Ada@example.org", 2)[1:] if "Your turn" in m["Subject"])
        text, page_html = text_of(turn), html_of(turn)
        assert f"{PUBLIC}/games/{game_id}" in text and f"{PUBLIC}/games/{game_id}" in page_html
        assert "you are to" in text
        unsubscribe = turn["List-Unsubscribe"].strip("<>")
        assert turn["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
        assert unsubscribe.startswith(f"{PUBLIC}/api/email/unsubscribe?token=")
        _hides_the_others_dealt_cards(api, game_id, bea, text + page_html)

        one_click = client.post(
            unsubscribe.removeprefix(PUBLIC),
            content=b"List-Unsubscribe=One-Click",
            headers={"content-type": "application/x-www-form-urlencoded"},
        )
        assert one_click.status_code == 200, one_click.text
        assert api.ok(api.request("GET", "/api/me/notifications", player=ada))["email"] is None
        count = len(box.of("Ada@example.org"))
        _play_until_turn_of(api, game_id, seats, 1 - mine["Ada"])
        board = _play_until_turn_of(api, game_id, seats, mine["Ada"])
        time.sleep(1.5)
        assert len(box.of("Ada@example.org")) == count, "no e-mail after unsubscribing"
        assert board["phase"] == "playing"


def _hides_the_others_dealt_cards(api: Api, game_id: str, other: Player, mail: str) -> None:
    """The cards dealt to the other seat that it still holds were never shown to this one:
    none is named in the e-mail (cards taken from the face-up ones are public)."""
    theirs = api.events(game_id, other)["events"]
    dealt = {
        card
        for item in theirs
        if item["event"]["type"] == "hand_dealt"
        for card in item["event"]["cards"]
    }
    held = set(api.board(game_id, other)["hand"]) & dealt
    assert held, "the other seat still holds cards dealt to it"
    assert not [card for card in held if card in mail]


def test_a_turns_email_is_dropped_when_the_player_plays_within_the_grace_period(
    inbox: tuple[Inbox, int],
) -> None:
    box, port = inbox
    with _api(port, grace=2.0) as client:
        api = Api(client)
        ada, bea = api.create_player("Ada"), api.create_player("Bea")
        _set_email(api, ada, "ada@example.org")
        confirm = _link(box.wait("ada@example.org", 1)[0], "/api/email/confirm")
        assert client.post(confirm).status_code == 200
        game_id = _game(api, [ada, bea])
        seats = {api.board(game_id, p)["viewer"]: p for p in (ada, bea)}
        mine = next(s for s, p in seats.items() if p is ada)
        _play_until_turn_of(api, game_id, seats, 1 - mine)
        board = _play_until_turn_of(api, game_id, seats, mine)
        _wait_for_delivery(api, ada, "deferred", board["version"])  # the e-mail waits
        own = api.board(game_id, ada)
        api.ok(api.send(game_id, ada, own["version"], [own["legal_commands"][0]]))  # in time
        _wait_for_delivery(api, ada, "dropped", board["version"])
        subjects = [m["Subject"] for m in box.of("ada@example.org")]
        turns = [s for s in subjects if "Your turn" in s]
        deliveries = api.ok(api.request("GET", "/api/me/deliveries", player=ada))
        dropped = [
            d for d in deliveries if d["status"] == "dropped" and d["version"] == board["version"]
        ]
        assert dropped and dropped[0]["channel"] == "email", deliveries
        assert len(turns) == sum(
            1 for d in deliveries if d["type"] == "turn.started" and d["status"] == "delivered"
        )


def _wait_for_delivery(api: Api, player: Player, status: str, version: int) -> Json:
    deadline = time.monotonic() + 20
    while True:
        found = api.ok(api.request("GET", "/api/me/deliveries", player=player))
        for delivery in found:
            if delivery["status"] == status and delivery["version"] == version:
                return delivery
        assert time.monotonic() < deadline, found
        time.sleep(0.05)


@pytest.mark.parametrize(
    "address", ["ada", "ada@", "@example.org", "ada@localhost", "a da@example.org",
                "ada@exa_mple.org", "ada..b@example.org", "<ada@example.org>",
                "ada@example.org\r\nBcc: eve@example.org"],
)  # fmt: skip
def test_an_address_mail_servers_would_not_take_is_refused_naming_the_field(
    inbox: tuple[Inbox, int], address: str
) -> None:
    _box, port = inbox
    with _api(port, grace=0) as client:
        api = Api(client)
        ada = api.create_player("Ada")
        body = {"email": {"address": address}}
        answer = api.request("PUT", "/api/me/notifications", player=ada, json=body)
        assert answer.status_code in (400, 422) and "email.address" in answer.text, answer.text
        assert api.ok(api.request("GET", "/api/me/notifications", player=ada))["email"] is None

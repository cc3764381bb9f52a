"""Playing in the browser, by clicks only: two people at two browsers play a whole game, each
seeing the other's moves arrive live; a person plays a bot to the end; a move the rules
refuse is shown with its rule in words; and the page of a seat never holds another seat's
secret card, neither in what it shows nor in anything it received (R42).
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import httpx

from tests.server.detector import Secrets
from tests.server.live import LiveServer
from tests.web.browser import Watched
from tests.web.players import LEGAL, Person

CARD = re.compile(r"\b[A-Z]{3}-\d+\b")


def create_game(
    person: Person, *, seats: int, bots: Sequence[str] = (), modules: Sequence[str] = ()
) -> str:
    page = person.page
    page.goto("/")
    page.get_by_label("Players").select_option(str(seats))
    for module in modules:
        page.get_by_label(module.replace("_", " ").capitalize()).check()
    for index, level in enumerate(bots):
        # The form names each opponent ("First opponent"); it once named the seat instead.
        opponent = page.get_by_label(f"{('First', 'Second', 'Third', 'Fourth')[index]} opponent")
        opponent.or_(page.get_by_label(f"Who plays the seat {index + 2}")).select_option(level)
    page.get_by_role("button", name="Create the game").click()
    page.wait_for_url(re.compile(r"/games/g[0-9a-f]+"))
    return str(page.url.split("/games/")[1].split("#")[0])


def secrets_seen(watched: Watched) -> tuple[set[str], list[Any]]:
    """Every card id the page shows (its whole DOM, attributes included) and every document it
    received (with the card list of the game's first event left out: it names every card)."""
    html = watched.page.content()
    shown = set(CARD.findall(html))
    documents = []
    for body in watched.bodies:
        try:
            document = json.loads(body)
        except ValueError:
            continue
        documents.append(_without_card_list(document))
    return shown, documents


def _without_card_list(document: Any) -> Any:
    if isinstance(document, dict):
        return {k: _without_card_list(v) for k, v in document.items() if k != "game_data"}
    if isinstance(document, list):
        return [_without_card_list(v) for v in document]
    return document


def test_two_people_play_a_whole_game_by_clicks_seeing_each_others_moves_live(
    open_page: Callable[..., Watched], web_server: LiveServer
) -> None:
    rng = random.Random(2)
    ann = Person(open_page(), "Ann")
    bob = Person(open_page(390, 844), "Bob")
    ann_session = ann.watched.sign_in("Ann")
    bob_session = bob.watched.sign_in("Bob")
    game_id = create_game(ann, seats=2, modules=["trade_routes"])
    invite = ann.page.get_by_label("Invite link").input_value()
    assert "#invite=" in invite and ann_session["token"] not in invite
    bob.page.goto(invite)
    bob.page.get_by_role("button", name="Join this table").click()
    bob.page.locator("svg.board g.city").first.wait_for()
    ann.sees(bob.version())  # Ann's page saw the table fill and the cards dealt, live

    snapshots: list[tuple[int, int, set[str], list[Any]]] = []
    seat_of = {}
    for person in (ann, bob):
        seat_of[person.name] = person.page.evaluate("window.patricianPage.base.viewer")
    turns = 0
    while ann.phase() != "over":
        mover, other = (ann, bob) if ann.deciding() else (bob, ann)
        if not mover.wait_for_turn(timeout=5000):
            continue
        version = mover.play_turn(rng, undo=turns == 3)
        other.sees(version)  # drawn on the other page without a reload
        turns += 1
        if turns % 7 == 0:
            for person in (ann, bob):
                shown, documents = secrets_seen(person.watched)
                snapshots.append((person.version(), seat_of[person.name], shown, documents))
    bob.sees(ann.version())
    assert ann.undos + bob.undos == 1 and turns > 10
    for person in (ann, bob):
        final = person.page.get_by_role("region", name="Final scores")
        final.wait_for()
        assert final.get_by_role("link", name="Replay").is_visible()
        assert final.get_by_role("link", name="Record").is_visible()

    record = httpx.get(f"{web_server.url}/api/games/{game_id}/record").json()
    secrets = Secrets(record)
    for version, seat, shown, documents in snapshots:
        hidden = secrets.cards(version, seat)
        assert not shown & hidden, f"seat {seat}'s page showed {shown & hidden} at {version}"
        for document in documents:
            assert not secrets.leaks(document, version, seat)
    assert bob_session["player_id"] != ann_session["player_id"]


def test_a_person_plays_a_bot_to_the_end(open_page: Callable[..., Watched]) -> None:
    rng = random.Random(3)
    eve = Person(open_page(), "Eve")
    eve.watched.sign_in("Eve")
    create_game(eve, seats=2, bots=["greedy"])
    eve.page.locator("svg.board g.city").first.wait_for()
    while eve.wait_for_turn():  # the bot plays within about a second
        eve.play_turn(rng)
    eve.page.get_by_role("region", name="Final scores").wait_for()
    assert eve.page.locator("table.scores tbody tr").count() >= 2  # and the Architetto, in two


def test_a_move_the_rules_refuse_is_shown_with_its_rule_once_and_is_no_error_of_the_page(
    open_page: Callable[..., Watched], screenshots: Path
) -> None:
    """The refusal is an answer, handled: its rule said once (the server's message ends with
    it too) and linked to the rules summary; the page logs nothing and throws nothing. The
    one line the console gets is Chromium's own, which it writes for every answer of 400 or
    more that any request receives (a page cannot silence it)."""
    rng = random.Random(4)
    kim = Person(open_page(), "Kim")
    kim.watched.sign_in("Kim")
    create_game(kim, seats=2, bots=["random"])
    kim.page.locator("svg.board g.city").first.wait_for()
    kim.wait_for_turn()
    kim.page.locator("button.card-chip.legal").first.click()  # play a card
    kim.idle()
    kim.page.locator("svg.board g.option.legal > rect.target").first.click()  # build in its city
    kim.idle()
    # R14: the card is taken from the city built in; the others are offered, marked so.
    refused = kim.page.locator("svg.board g.face-up.option.other > rect.target")
    assert refused.count() > 0
    chromium = "console error: Failed to load resource: the server responded with a status of 422"
    kim.watched.allow(chromium)
    before = len(kim.watched.problems)
    refused.first.click()
    kim.idle()
    alert = kim.page.get_by_role("alert")
    alert.wait_for()
    said = alert.inner_text()
    rule = re.fullmatch(r"Refused: (R\d+): (.+)", said)
    assert rule and said.count(rule[1]) == 1, said
    assert rule[1] == "R14"  # R14: the card is taken from the city built in
    assert alert.get_by_role("link", name=rule[1]).get_attribute("href") == f"/rules#{rule[1]}"
    assert kim.page.evaluate("document.body.dataset.staged") == "2"  # the rest stays staged
    kim.page.screenshot(path=screenshots / "refused-desktop.png")
    after = kim.watched.problems[before:]
    assert len(after) == 1 and after[0].startswith(chromium), after  # the browser's, only
    kim.play_turn(rng)
    assert not kim.watched.page.get_by_role("alert").count()  # sent: the refusal is gone


def test_the_turn_line_follows_the_staged_turn_and_only_tiles_a_move_changed_flash(
    open_page: Callable[..., Watched],
) -> None:
    """While a turn is staged, the line that says whose turn it is names the step it reached,
    then says to confirm; and the tiles that flash are those whose city a move changed, not
    every tile drawn again because the turn passed or other choices opened."""
    rng = random.Random(6)
    ida = Person(open_page(), "Ida")
    ida.watched.sign_in("Ida")
    create_game(ida, seats=3, bots=["random", "random"])  # three: no Architetto's site to choose
    page = ida.page
    page.locator("svg.board g.city").first.wait_for()
    cities = page.locator("svg.board g.city").count()
    turn_line = page.locator("p.pending")
    flashing = page.locator("svg.board g.city.changed")
    turns = 0
    while turns < 3:
        assert ida.wait_for_turn()
        assert flashing.count() < cities  # what moves changed, never every tile of a new turn
        if turn_line.inner_text() != "Your turn: play a card.":
            ida.play_turn(rng)  # the rest of a turn a turned-up card stopped
            continue
        turns += 1
        page.locator("button.card-chip.legal").first.click()  # the played card: no city changes
        ida.idle()
        assert turn_line.inner_text().startswith("Your turn: build a floor with ")
        assert flashing.count() == 0
        page.locator("svg.board g.option.legal > rect.target").first.click()
        ida.idle()
        assert flashing.count() == 1  # the city built in
        while page.locator(LEGAL).count():
            page.locator(LEGAL).nth(rng.randrange(page.locator(LEGAL).count())).click()
            ida.idle()
        assert turn_line.inner_text() == "Your turn: confirm and send it."
        before = ida.version()
        page.get_by_role("button", name="Confirm and send").click()
        page.wait_for_function("(v) => Number(document.body.dataset.version) > v", arg=before)


def test_the_log_names_each_seat_as_the_seats_table_does(
    open_page: Callable[..., Watched],
) -> None:
    """The words name each seat by its player, as the seats table does ("Ida (seat 0)"), so a
    bot named for the order it was added is never mistaken for the seat of that number."""
    ida = Person(open_page(), "Ida")
    ida.watched.sign_in("Ida")
    create_game(ida, seats=3, bots=["random", "random"])
    page = ida.page
    page.locator("svg.board g.city").first.wait_for()
    ida.wait_for_turn()
    ida.play_turn(random.Random(7))
    ida.wait_for_turn()
    lines = page.locator("ol.log li").all_inner_texts()
    assert any(line.startswith("Ida (seat ") for line in lines), lines
    assert not [line for line in lines if re.search(r"(?<!\()\b[Ss]eat \d", line)], lines
    table = page.locator("section.seats-wrap").inner_text()
    for bot in re.findall(r"(Random bot \d) ", " ".join(lines)):
        assert bot in table

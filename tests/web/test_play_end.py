"""The end of a game, the key to the board's marks and the Delegates on the play page: a game
played by clicks to its end shows its winners and the scores by part first, at a phone's size
and a desktop's, with nothing left over from the play; the log tells the scorings and the
final scores plainly; the key explains every mark the board draws and every mark of a card;
and in a game with the Delegates module, who holds each card is shown while it is played.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page

from tests.server.client import Api, Player, Table
from tests.server.live import LiveServer
from tests.web.browser import SIZES, Watched, not_blank
from tests.web.players import LEGAL, Person
from tests.web.test_play import create_game

BOARD_CLASSES = """() => {
  const found = new Set();
  for (const node of document.querySelectorAll('svg.board, svg.board *')) {
    if (node.closest('defs')) continue;
    if (node.tagName === 'g' && !node.children.length) continue;  // an empty group draws nothing
    for (const name of node.classList) found.add(name);
  }
  return [...found];
}"""

LEGEND_MARKS = """() => [...document.querySelectorAll('details.legend [data-marks]')]
  .flatMap((node) => node.dataset.marks.split(' ')).filter(Boolean)"""

EMPTY_BOXES = """() => [...document.querySelectorAll('main *')].filter((node) => {
  const control = ['INPUT', 'SELECT', 'TEXTAREA', 'BUTTON', 'IMG'].includes(node.tagName);
  if (control || node.closest('svg')) return false;
  if (!node.checkVisibility({visibilityProperty: true})) return false;  // a closed <details>
  const style = getComputedStyle(node);
  const box = node.getBoundingClientRect();
  if (!box.width || !box.height) return false;
  const framed = ['Top', 'Right', 'Bottom', 'Left'].every((side) =>
    parseFloat(style[`border${side}Width`]) > 0 && style[`border${side}Style`] !== 'none');
  return framed && !node.innerText.trim() && !node.querySelector('svg, img, input, select, button');
}).map((node) => node.outerHTML.slice(0, 160))"""

# A function of one of the client's modules, called in the page (its modules are served
# under the release's prefix, beside play.js).
IN_MODULE = """async ([module, name, ...args]) => {
  const url = new URL(module, document.querySelector('script[type=module]').src);
  return (await import(url))[name](...args);
}"""


@pytest.fixture(scope="module")
def api(web_server: LiveServer) -> Iterator[Api]:
    with httpx.Client(base_url=web_server.url, timeout=30) as client:
        yield Api(client)


def signed_in_as(open_page: Callable[..., Watched], player: Player, size: str) -> Watched:
    page = open_page(*SIZES[size])
    page.page.goto("/rules")  # any page of the site: the session is kept for it
    page.page.evaluate(
        "([token, id, name]) => localStorage.setItem('patrician.session', "
        "JSON.stringify({token, player_id: id, name}))",
        [player.token, player.player_id, player.name],
    )
    return page


def open_game(page: Page, game_id: str) -> None:
    page.goto(f"/games/{game_id}")
    page.locator("svg.board g.city").first.wait_for()
    page.wait_for_load_state("networkidle")


def in_first_view(page: Page, selector: str) -> bool:
    box = page.locator(selector).bounding_box()
    height = page.viewport_size["height"] if page.viewport_size else 0
    return box is not None and box["y"] >= 0 and box["y"] + box["height"] <= height


def the_end_is_first_and_clean(page: Page) -> None:
    """The winners and the whole score table in the window at the top of the page; no banner
    of an earlier action, no empty box, no turn line."""
    page.get_by_role("region", name="Final scores").wait_for()
    assert in_first_view(page, "section.final h2"), "the winners are below the fold"
    assert in_first_view(page, "section.final table.scores"), "the scores are below the fold"
    assert page.locator("div.message").inner_text().strip() == ""
    assert "Sent." not in page.locator("main").inner_text()
    assert page.evaluate(EMPTY_BOXES) == []
    assert not page.locator("p.pending").is_visible()


def test_a_game_played_to_its_end_shows_the_winner_and_the_scores_first_at_both_sizes(
    open_page: Callable[..., Watched], screenshots: Path
) -> None:
    rng = random.Random(8)
    eve = Person(open_page(*SIZES["phone"]), "Eve")
    session = eve.watched.sign_in("Eve")
    game_id = create_game(eve, seats=2, bots=["greedy"], modules=["trade_routes", "delegates"])
    page = eve.page
    page.locator("svg.board g.city").first.wait_for()
    while eve.wait_for_turn():
        eve.play_turn(rng)
    # The game ended while the page was open, scrolled wherever the last move left it.
    the_end_is_first_and_clean(page)
    assert page.evaluate("scrollY") == 0
    result = page.evaluate("window.patricianPage.base.result")
    winners = page.locator("section.final h2").inner_text()
    names = page.evaluate(
        "(seats) => seats.map((seat) => window.patricianPage.base.players"
        ".find((p) => p.seat === seat)?.name || 'the Architetto')",
        result["winners"],
    )
    assert all(name.lower() in winners.lower() for name in names), winners
    assert page.locator("section.final table.scores tbody tr").count() == len(result["scores"])
    png = page.screenshot(path=screenshots / "end-phone.png")
    assert not_blank(png)

    # The last lines of the log: one line per seat's score, every sign as it is.
    final_line = page.locator("ol.log li", has=page.locator("ul.score-lines"))
    assert final_line.locator("ul.score-lines > li").count() == len(result["scores"])
    log = page.locator("ol.log").inner_text()
    assert "+ -" not in log and "+-" not in log
    scorings = re.findall(r"^.* is scored: .*$", log, re.MULTILINE)
    assert scorings
    for line in scorings:
        told = re.match(r".+ is scored: (.+?) takes \d+(?:, (.+?) takes \d+| and \d+)", line)
        assert told and told[1] != told[2], line  # a seat that won both towers is named once
    seat = result["scores"][0]["seat"]
    view = page.evaluate("window.patricianPage.base")
    scored = {"city": "Parma", "high_seat": seat, "low_seat": seat, "high_token": 5}
    scored |= {"low_token": 2, "trade_bonus": -4}
    both = page.evaluate(IN_MODULE, ["ending.js", "scoredWords", scored, view])
    assert re.fullmatch(
        r"Parma is scored: .+ takes 5 and 2 \(trade bonus -4 per tower, -8 in all\)\.", both
    ), both
    words = page.evaluate(
        IN_MODULE,
        ["ending.js", "scoreWords", {**result["scores"][0], "trade_bonus": -8}, view],
    )
    assert "-8 trade bonus" in words and "+ -" not in words, words

    # Opened again, at either size: the end first, at the top.
    page.reload()
    page.locator("svg.board g.city").first.wait_for()
    the_end_is_first_and_clean(page)
    desk = open_page(*SIZES["desktop"])
    desk.page.goto("/rules")
    desk.page.evaluate(
        "(session) => localStorage.setItem('patrician.session', JSON.stringify(session))", session
    )
    open_game(desk.page, game_id)
    the_end_is_first_and_clean(desk.page)
    assert desk.no_sideways_scroll() and eve.watched.no_sideways_scroll()
    png = desk.page.screenshot(path=screenshots / "end-desktop.png")
    assert not_blank(png)
    desk.page.screenshot(path=screenshots / "end-desktop-full.png", full_page=True)
    page.screenshot(path=screenshots / "end-phone-full.png", full_page=True)


def play_until(table: Table, rng: random.Random, done: Callable[[dict[str, Any]], bool]) -> None:
    """Random decisions through the API until `done` holds of seat 0's board, at a decision of
    its own to play a card."""
    while table.pending is not None:
        board = table.api.board(table.game_id, table.seats[0])
        if (
            board["pending"]["seat"] == 0
            and board["pending"]["step"] == "play_card"
            and done(board)
        ):
            return
        table.step(rng, False)
    raise AssertionError("the game ended first")


def test_the_key_to_the_board_explains_every_mark_it_and_the_cards_use(
    open_page: Callable[..., Watched], api: Api, screenshots: Path
) -> None:
    rng = random.Random(21)
    table = api.new_table(3, "towers", ("trade_routes", "delegates"), rng=rng)
    play_until(
        table,
        rng,
        lambda board: (
            sum(city["scored"] for city in board["cities"]) >= 2 and len(board["markers"]) >= 2
        ),
    )
    phone = signed_in_as(open_page, table.seats[0], "phone")
    page = phone.page
    open_game(page, table.game_id)
    used: set[str] = set()
    # Every step of a turn, staged by clicks: the options on the board, legal and not.
    while page.locator(LEGAL).count():
        used |= set(page.evaluate(BOARD_CLASSES))
        page.locator(LEGAL).first.click()
        page.wait_for_function("() => document.body.dataset.busy === 'false'")
    used |= set(page.evaluate(BOARD_CLASSES))
    assert {"option", "legal", "pending", "token", "marker", "taken", "winners"} <= used
    page.get_by_text("What the marks mean").click()
    marks = set(page.evaluate(LEGEND_MARKS))
    assert used <= marks, f"the key does not explain {used - marks}"
    # Every mark a card of this game can carry, on the board or in words.
    symbols = set(
        page.locator("details.legend [data-symbol]").evaluate_all(
            "(nodes) => nodes.map((node) => node.dataset.symbol)"
        )
    )
    card_marks = page.evaluate(
        "() => { const cards = window.patricianPage.cards;"
        " return [...cards.byId.keys()].map((id) => cards.marks(id)).join(''); }"
    )
    assert set(card_marks) - {" "} <= symbols, set(card_marks) - symbols
    legend = page.locator("details.legend")
    assert phone.no_sideways_scroll()
    assert legend.evaluate("(node) => parseFloat(getComputedStyle(node).fontSize)") >= 14
    legend.screenshot(path=screenshots / "legend-phone.png")

    # Once the game is over: the scored cities and their winners, the routes taken.
    table.play_to_end(rng)
    desk = signed_in_as(open_page, table.seats[0], "desktop")
    open_game(desk.page, table.game_id)
    desk.page.get_by_text("What the marks mean").click()
    ended = set(desk.page.evaluate(BOARD_CLASSES))
    assert ended <= set(desk.page.evaluate(LEGEND_MARKS))
    assert axe_clean(desk), "axe found serious violations with the key open"
    desk.page.locator("details.legend").screenshot(path=screenshots / "legend-desktop.png")
    desk.page.screenshot(path=screenshots / "marks-desktop.png", full_page=True)


def axe_clean(page: Watched) -> bool:
    return page.axe() == []


def holders(result: dict[str, Any]) -> dict[str, int | None]:
    owner: dict[str, int | None] = dict.fromkeys("ABCD")
    for score in result["scores"]:
        for letter in score["delegate_cards"]:
            owner[letter] = score["seat"]
    return owner


@pytest.mark.parametrize("seats", [2, 5])
def test_the_delegates_are_shown_while_a_game_with_the_module_is_played(
    open_page: Callable[..., Watched], api: Api, screenshots: Path, seats: int
) -> None:
    """Who would get each card if the game ended now, beside the seats, from the first turn;
    counted from the board as the server counts at the end (R33, R34, R48): on the last
    board, the page's count names the result's holders."""
    rng = random.Random(30 + seats)
    table = api.new_table(seats, "towers", ("delegates",), rng=rng)
    play_until(table, rng, lambda board: sum(city["scored"] for city in board["cities"]) >= 2)
    size = "phone" if seats == 2 else "desktop"
    watched = signed_in_as(open_page, table.seats[0], size)
    page = watched.page
    open_game(page, table.game_id)
    section = page.get_by_role("region", name="Delegates")
    section.scroll_into_view_if_needed()
    assert section.is_visible()
    rows = section.locator("tbody tr")
    assert rows.evaluate_all("(rows) => rows.map((row) => row.dataset.card)") == list("ABCD")
    assert "if the game ended now" in section.inner_text()
    held = [h for h in rows.evaluate_all("(rows) => rows.map((r) => r.dataset.holder)") if h]
    assert held, "two cities are scored: someone holds a card"
    section.screenshot(path=screenshots / f"delegates-{size}.png")
    assert watched.axe() == []

    table.play_to_end(rng)
    page.reload()
    page.get_by_role("region", name="Final scores").wait_for()
    result = page.evaluate("window.patricianPage.base.result")
    counted = page.evaluate(
        IN_MODULE.replace(
            "return (await import(url))[name](...args);",
            "const p = window.patricianPage;"
            " return (await import(url))[name]({...p.base, result: null}, p.cards)"
            ".map((row) => [row.letter, row.holder]);",
        ),
        ["delegates.js", "delegateStanding"],
    )
    assert dict(counted) == holders(result)
    shown = page.get_by_role("region", name="Delegates").locator("tbody tr")
    got = shown.evaluate_all("(rows) => rows.map((r) => [r.dataset.card, r.dataset.holder])")
    assert {card: int(h) if h else None for card, h in got} == holders(result)

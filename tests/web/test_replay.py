"""The replay viewer of a finished five-seat game: at 20 random versions the board it draws is
the API's view at that version (the data drawn, read back from the page, not pixels), and
the keys step, jump to the ends and to the city scorings; the log follows the board and the
board follows the log.

And of a finished game of bots (a person who handed their seat to the Greedy bot at once, the
Greedy bot and the ISMCTS bot), at a phone's size and a desktop's: the controls stay in the
window whatever steps (Next, the scrubber, the keys, a click on the chart) while the log scrolls
in its own box and the page never; at 20 random versions the words of the step are the API's
view at that version (whose turn and what step, the deal, the end only at the end); bots are
named as bots and "you" is only the viewer's own seat; the chart's axes are true; axe-core
finds nothing serious.
"""

from __future__ import annotations

import random
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.server.client import Api, Player, Table
from tests.server.live import LiveServer
from tests.web.browser import SIZES, Watched, not_blank, view_as_drawn


@pytest.fixture(scope="module")
def five_seats(web_server: LiveServer) -> Iterator[tuple[Table, dict[str, Any]]]:
    with httpx.Client(base_url=web_server.url, timeout=30) as client:
        table = Api(client).new_table(
            5, "towers", ("trade_routes", "delegates"), rng=random.Random(21)
        )
        table.play_to_end(random.Random(21), whole_turns=0.3)
        for _ in range(100):  # the seed is revealed just after the end, by the server
            replay = client.get(f"/api/games/{table.game_id}/replay").json()
            if replay["over"]:
                break
            time.sleep(0.05)
        assert replay["over"]
        yield table, replay


def drawn_version(page: Watched) -> int:
    return int(page.page.evaluate("Number(document.body.dataset.version)"))


def test_the_replay_draws_the_apis_view_at_twenty_random_versions(
    open_page: Callable[..., Watched],
    web_server: LiveServer,
    five_seats: tuple[Table, dict[str, Any]],
) -> None:
    table, replay = five_seats
    page = open_page()
    page.page.goto(f"/games/{table.game_id}/replay")
    page.page.locator("ol.log li.current").wait_for()
    versions = random.Random(8).sample([step["version"] for step in replay["steps"]], 20)
    for version in versions:
        page.page.evaluate("(v) => { location.hash = `v=${v}`; }", version)
        page.page.wait_for_function(
            "(v) => Number(document.body.dataset.version) === v", arg=version
        )
        expected = httpx.get(f"{web_server.url}/api/games/{table.game_id}/at/{version}").json()
        assert page.board() == view_as_drawn(expected), f"version {version}"


def test_the_keys_step_through_the_replay_and_the_log_follows(
    open_page: Callable[..., Watched], five_seats: tuple[Table, dict[str, Any]]
) -> None:
    table, replay = five_seats
    versions = [step["version"] for step in replay["steps"]]
    scorings = [s["version"] for s in replay["steps"] if s["event"]["type"] == "city_scored"]
    page = open_page(390, 844)
    page.page.goto(f"/games/{table.game_id}/replay#v={versions[10]}")
    page.page.locator("ol.log li.current").wait_for()
    assert drawn_version(page) == versions[10]
    keyboard = page.page.keyboard
    keyboard.press("ArrowRight")
    assert drawn_version(page) == versions[11]
    keyboard.press("ArrowLeft")
    keyboard.press("ArrowLeft")
    assert drawn_version(page) == versions[9]
    keyboard.press("End")
    assert drawn_version(page) == versions[-1]
    assert page.page.get_by_role("region", name="Final scores").is_visible()
    keyboard.press("Home")
    assert drawn_version(page) == versions[0]
    keyboard.press("PageDown")
    assert drawn_version(page) == scorings[0]
    keyboard.press("PageDown")
    assert drawn_version(page) == scorings[1]
    keyboard.press("PageUp")
    assert drawn_version(page) == scorings[0]
    current = page.page.locator("ol.log li.current")
    assert "is scored" in current.inner_text()
    # The log leads the board too: a line chosen by keyboard shows its step.
    line = page.page.locator("ol.log li button").nth(30)
    line.focus()
    keyboard.press("Enter")
    chosen = int(page.page.locator("ol.log li").nth(30).get_attribute("data-version") or 0)
    assert drawn_version(page) == chosen
    page.page.wait_for_function("(v) => location.hash === `#v=${v}`", arg=chosen)


def test_the_replay_plays_at_a_chosen_speed_and_shows_any_seats_hand_once_over(
    open_page: Callable[..., Watched], five_seats: tuple[Table, dict[str, Any]]
) -> None:
    table, replay = five_seats
    page = open_page()
    page.page.goto(f"/games/{table.game_id}/replay#v=100")
    page.page.locator("ol.log li.current").wait_for()
    page.page.get_by_label("Speed").select_option("40")
    page.page.get_by_role("button", name="Play", exact=True).click()
    page.page.wait_for_function("() => Number(document.body.dataset.version) > 140")
    page.page.get_by_role("button", name="Pause", exact=True).click()
    page.page.get_by_label("Whose hand to show").select_option("3")
    heading = page.page.get_by_role("heading", name="Hand of")
    assert "seat 3" in heading.inner_text()
    at = drawn_version(page)
    step = next(s for s in replay["steps"] if s["version"] == at)
    shown = page.page.locator("section.hand ul[aria-label=Hand] li.card-chip").evaluate_all(
        "(items) => items.map((li) => li.dataset.card)"
    )
    assert shown == step["view"]["hands"][3]
    page.page.get_by_role("button", name="Next scoring", exact=True).click()
    assert "is scored" in page.page.locator("ol.log li.current").inner_text()


# --- a finished game of bots ---------------------------------------------------------------

STEP_WORDS = {
    "play_card": "play a card",
    "place_floor": "build a floor",
    "take_card": "take a face-up card",
    "move_floor": "move a floor (or pass)",
    "trade_route": "place a trade route (or pass)",
    "architetto_site": "choose the Architetto's site",
}


@dataclass
class BotGame:
    game_id: str
    person: Player
    """Ada: she created the game and handed her seat to the Greedy bot at once."""
    replay: dict[str, Any]

    def versions(self) -> list[int]:
        return [step["version"] for step in self.replay["steps"]]

    def seat_of(self, name: str) -> int:
        players = self.replay["steps"][-1]["view"]["players"]
        return int(next(p["seat"] for p in players if p["name"] == name))


@pytest.fixture(scope="module")
def bots(web_server: LiveServer) -> Iterator[BotGame]:
    with httpx.Client(base_url=web_server.url, timeout=30) as client:
        api = Api(client)
        ada = api.create_player("Ada")
        levels = [{"level": "greedy"}, {"level": "ismcts"}]
        created = api.ok(
            api.request("POST", "/api/games", player=ada, json={"seats": 3, "bots": levels}), 201
        )
        game_id = created["game_id"]
        api.ok(api.request("POST", f"/api/games/{game_id}/resign", player=ada))
        deadline = time.monotonic() + 180
        while True:  # the bots play within about a second each; the seed comes after the end
            replay = api.ok(api.request("GET", f"/api/games/{game_id}/replay"))
            if replay["over"] and replay["steps"][-1]["event"]["type"] == "seed_revealed":
                break
            assert time.monotonic() < deadline, "the bots did not finish the game"
            time.sleep(0.2)
        yield BotGame(game_id, ada, replay)


def open_replay(page: Watched, game: BotGame, version: int) -> None:
    page.page.goto(f"/games/{game.game_id}/replay#v={version}")
    page.page.locator("ol.log li.current").wait_for()
    page.page.locator("section.chart svg").wait_for()


def where_it_is(page: Watched) -> dict[str, Any]:
    """The controls' box, the page's scroll, and whether the log's current line shows in the
    log's own box, once the page has drawn the step (a frame later: the log follows then)."""
    found: dict[str, Any] = page.page.evaluate(
        """() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(() => {
          const box = (el) => el.getBoundingClientRect().toJSON();
          const log = document.querySelector('section.log-wrap');
          const line = document.querySelector('ol.log li.current');
          const [outer, inner] = [box(log), box(line)];
          const head = log.querySelector('h2').getBoundingClientRect().height;
          done({controls: box(document.querySelector('[aria-label="Replay controls"]')),
                where: box(document.querySelector('.where')),
                scrollY: window.scrollY, width: innerWidth, height: innerHeight,
                version: Number(document.body.dataset.version),
                lineShows: inner.top >= outer.top + head - 1 && inner.bottom <= outer.bottom + 1});
        })))"""
    )
    return found


def assert_in_window(state: dict[str, Any], what: str) -> None:
    for part in ("controls", "where"):
        rect = state[part]
        assert rect["top"] >= 0 and rect["left"] >= 0, f"{part} leave the window after {what}"
        assert rect["bottom"] <= state["height"] and rect["right"] <= state["width"], (
            f"{part} leave the window after {what}: {rect}"
        )
    assert state["lineShows"], f"the log's current line is out of its box after {what}"


@pytest.mark.parametrize("size", sorted(SIZES))
def test_the_controls_stay_in_the_window_and_only_the_log_scrolls_as_the_replay_steps(
    open_page: Callable[..., Watched], bots: BotGame, size: str
) -> None:
    versions = bots.versions()
    page = open_page(*SIZES[size])
    open_replay(page, bots, versions[len(versions) // 2])
    start = where_it_is(page)
    assert_in_window(start, "opening")
    next_button = page.page.get_by_role("button", name="Next", exact=True)
    for _ in range(4):
        next_button.click()
        state = where_it_is(page)
        assert_in_window(state, "Next")
        assert state["scrollY"] == start["scrollY"], "Next scrolled the page"
    for key in ("ArrowRight", "ArrowRight", "ArrowLeft", "End", "Home", "PageDown"):
        before = where_it_is(page)["version"]
        page.page.keyboard.press(key)
        state = where_it_is(page)
        assert state["version"] != before, key
        assert_in_window(state, key)
        assert state["scrollY"] == start["scrollY"], f"{key} scrolled the page"
    scrub = page.page.get_by_label("Scrub through the game")
    box = scrub.bounding_box()
    assert box is not None
    last = len(versions) - 1
    for share in (0.8, 0.25, 0.6):
        before = where_it_is(page)["version"]
        if abs(versions.index(before) - share * last) <= 0.03 * last + 1:
            continue  # already about there (PageDown went to a scoring): no step to see
        scrub.click(position={"x": box["width"] * share, "y": box["height"] / 2})
        state = where_it_is(page)
        assert state["version"] != before, f"the scrubber at {share}"
        assert_in_window(state, "the scrubber")
        assert state["scrollY"] == start["scrollY"], "the scrubber scrolled the page"
    # The chart is further down (a person scrolls to it): a click on it goes there, and the
    # controls are still in the window, at the top of it.
    chart = page.page.locator("section.chart svg")
    for share in (0.3, 0.9):
        chart.scroll_into_view_if_needed()
        box = chart.bounding_box()
        assert box is not None
        before = where_it_is(page)
        x = box["width"] * share
        chart.click(position={"x": x, "y": box["height"] / 2})
        state = where_it_is(page)
        assert state["version"] != before["version"], f"a click on the chart at {share}"
        assert_in_window(state, "a click on the chart")
        # the page stays on the chart (the browser may keep what shows in place as the parts
        # above it change height, but it never goes to the log's line)
        after = chart.bounding_box()
        assert (
            after is not None
            and after["y"] < box["y"] + box["height"] / 2 < after["y"] + after["height"]
        ), "a click on the chart took the page away from it"
        now = page.page.locator("section.chart line.now").bounding_box()
        assert now is not None and abs(now["x"] - (after["x"] + x)) < 4, "the red line is not there"
        next_button.click()
        assert_in_window(where_it_is(page), "Next, scrolled down to the chart")
    assert page.no_sideways_scroll()


def state_words(view: dict[str, Any], viewer: int | None = None) -> str:
    """What the replay says of the state after a step, from the API's view of it."""
    if view["phase"] == "over":
        return "The game is over."
    if view["phase"] == "waiting":
        joined, seats = len(view["joined"]), view["seats"]
        if joined < seats:
            return f"Waiting for players: {joined} of {seats} at the table."
        return "The table is full: the game starts."
    pending = view["pending"]
    if pending is None:
        return "The game is being set up: seats drawn, cards dealt."
    step = STEP_WORDS[pending["step"]] + (f" with {pending['card']}" if pending["card"] else "")
    if pending["seat"] == viewer:
        return f"Your turn: {step}."
    name = next(p["name"] for p in view["players"] if p["seat"] == pending["seat"])
    return f"{name} (seat {pending['seat']}) is to {step}."


def test_at_twenty_random_versions_the_step_says_the_apis_view_at_that_version(
    open_page: Callable[..., Watched], web_server: LiveServer, bots: BotGame
) -> None:
    steps = bots.replay["steps"]
    versions = random.Random(9).sample(bots.versions(), 20)
    # and the edges: the table full before the start, the deal, the first turn, the end
    waiting = [s["version"] for s in steps if s["view"]["phase"] == "waiting"]
    dealt = [s["version"] for s in steps if s["event"]["type"] == "hand_dealt"]
    first_turn = next(s["version"] for s in steps if s["view"]["pending"])
    ended = next(s["version"] for s in steps if s["event"]["type"] == "game_ended")
    versions += [waiting[-1], dealt[-1], first_turn, ended, steps[-1]["version"]]
    page = open_page(390, 844)
    open_replay(page, bots, steps[0]["version"])
    state = page.page.locator(".where .step-state")
    for version in versions:
        page.page.evaluate("(v) => { location.hash = `v=${v}`; }", version)
        page.page.wait_for_function(
            "(v) => Number(document.body.dataset.version) === v", arg=version
        )
        view = httpx.get(f"{web_server.url}/api/games/{bots.game_id}/at/{version}").json()
        said = state.inner_text()
        assert said == state_words(view), f"version {version}"
        pending = view["pending"] or {}
        assert state.get_attribute("data-phase") == view["phase"], f"version {version}"
        assert state.get_attribute("data-seat") == str(pending.get("seat", "")), version
        assert state.get_attribute("data-step") == str(pending.get("step", "")), version
        over = view["phase"] == "over"
        assert ("The game is over" in said) == over, f"version {version}: {said}"
        where = page.page.locator(".where").inner_text()
        assert ("The game is over" in where) == over, f"version {version}: {where}"
        assert "Waiting for players" not in where or view["phase"] == "waiting", version


def test_bots_are_named_as_bots_and_you_is_only_the_viewers_own_seat(
    open_page: Callable[..., Watched], bots: BotGame
) -> None:
    steps = bots.replay["steps"]
    ada, search = bots.seat_of("Ada"), bots.seat_of("Search bot")
    greedy = bots.seat_of("Greedy bot")
    # A step the Greedy bot played for Ada's seat, and the ISMCTS bot's turn starting right
    # after a move of the Greedy bot (the append was the Greedy bot's: not the search's).
    for_ada = next(
        s["version"]
        for s in steps
        if s["by"] == "bot:greedy"
        and s["event"]["type"] == "card_played"
        and s["event"]["seat"] == ada
    )
    search_turn = next(
        s["version"]
        for s in steps
        if s["event"]["type"] == "step_started"
        and s["event"]["seat"] == search
        and s["by"] == "bot:greedy"
    )
    search_move = next(s["version"] for s in steps if s["by"] == "bot:ismcts" and s["text"])
    spectator = open_page()
    open_replay(spectator, bots, for_ada)
    where = spectator.page.locator(".where")
    assert f"Played for Ada (seat {ada}) by the Greedy bot." in where.inner_text()
    spectator.page.get_by_label("Whose hand to show").select_option(str(search))
    assert (
        f"Search bot (seat {search})"
        in spectator.page.get_by_role("heading", name="Hand of").inner_text()
    )
    for version in (for_ada, search_turn, search_move, steps[-1]["version"]):
        spectator.page.evaluate("(v) => { location.hash = `v=${v}`; }", version)
        spectator.page.wait_for_function(
            "(v) => Number(document.body.dataset.version) === v", arg=version
        )
        text = spectator.page.locator("main").inner_text()
        for wrong in ("[bot:", "bot:greedy", "bot:ismcts", "(you)", "Your turn"):
            assert wrong not in text, f"version {version} says {wrong!r}"
        if version != for_ada:
            assert "Played for" not in where.inner_text(), f"version {version}"
    # Ada, at her own replay: "you" is her seat, never a bot's.
    person = open_page()
    person.page.goto("/")
    person.page.evaluate(
        "([token, id, name]) => localStorage.setItem('patrician.session', "
        "JSON.stringify({token, player_id: id, name}))",
        [bots.person.token, bots.person.player_id, bots.person.name],
    )
    ada_turn = next(s["version"] for s in steps if (s["view"]["pending"] or {}).get("seat") == ada)
    open_replay(person, bots, ada_turn)
    mine = person.page.locator("table.seats tr.me")
    assert mine.count() == 1 and mine.get_attribute("data-seat") == str(ada)
    assert "Ada (you)" in mine.inner_text()
    assert person.page.locator(".where .step-state").inner_text().startswith("Your turn: ")
    for seat in (greedy, search):
        row = person.page.locator(f"table.seats tr[data-seat='{seat}']")
        assert "(you)" not in row.inner_text()
    person.page.get_by_label("Whose hand to show").select_option(str(search))
    assert person.page.locator("table.seats tr.me").get_attribute("data-seat") == str(ada)
    search_pending = next(
        s["version"] for s in steps if (s["view"]["pending"] or {}).get("seat") == search
    )
    person.page.evaluate("(v) => { location.hash = `v=${v}`; }", search_pending)
    person.page.wait_for_function(
        "(v) => Number(document.body.dataset.version) === v", arg=search_pending
    )
    said = person.page.locator(".where .step-state").inner_text()
    assert said.startswith(f"Search bot (seat {search}) is to "), said


def test_the_charts_axes_are_true(open_page: Callable[..., Watched], bots: BotGame) -> None:
    """Zero where zero is and labelled; points from the real lowest to the highest; the
    tokens held the same; the versions along the bottom."""
    points: list[int] = []
    held: list[int] = []
    for step in bots.replay["steps"]:
        for player in step["view"]["players"]:
            points.append(sum(player["tokens"]) + player["trade_bonus"])
            held.append(player["token_count"])
    page = open_page()
    open_replay(page, bots, bots.versions()[-1])
    for name, values in (("points", points), ("tokens", held)):
        panel = page.page.locator(f"section.chart g.panel.{name}")
        drawn: dict[str, Any] = panel.evaluate(
            """(g) => ({
              low: Number(g.dataset.low), high: Number(g.dataset.high),
              ticks: [...g.querySelectorAll('text.tick')].map((t) => t.textContent),
              zero: Number(g.querySelector('line.zero').getAttribute('y1')),
              ys: [...g.querySelectorAll('polyline')].flatMap((line) =>
                line.getAttribute('points').split(' ').map((p) => Number(p.split(',')[1]))),
            })"""
        )
        assert (drawn["low"], drawn["high"]) == (min(values), max(values)), name
        assert {"0", str(max(values))} <= set(drawn["ticks"]), name
        # every seat starts at zero: the zero line is the lowest point drawn, the highest
        # score the highest
        assert max(drawn["ys"]) == pytest.approx(drawn["zero"], abs=0.11), name
    labels = page.page.locator("section.chart svg > text").all_text_contents()
    assert labels == [f"version {bots.versions()[0]}", f"version {bots.versions()[-1]}"]


@pytest.mark.parametrize("size", sorted(SIZES))
def test_the_replay_of_bots_passes_axe_and_draws_cleanly(
    open_page: Callable[..., Watched], bots: BotGame, screenshots: Path, size: str
) -> None:
    versions = bots.versions()
    page = open_page(*SIZES[size])
    open_replay(page, bots, versions[len(versions) * 2 // 3])
    page.page.get_by_label("Whose hand to show").select_option(str(bots.seat_of("Search bot")))
    page.page.wait_for_load_state("networkidle")
    png = page.page.screenshot(path=screenshots / f"replay-bots-{size}.png", full_page=True)
    assert not_blank(png)
    assert page.no_sideways_scroll()
    assert page.axe() == [], f"axe found serious violations at {size}"
    # scrolled down to the chart and the log: the step and its controls still at the top
    page.page.locator("section.chart svg").click(position={"x": 40, "y": 60})
    png = page.page.screenshot(path=screenshots / f"replay-bots-chart-{size}.png")
    assert not_blank(png)
    assert_in_window(where_it_is(page), "a click on the chart")
    page.page.keyboard.press("End")
    assert re.search(r"wins?$", page.page.locator("section.result h2").inner_text())
    assert page.axe() == [], f"axe found serious violations at the end at {size}"

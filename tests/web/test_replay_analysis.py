"""The analysis of a finished game in the replay viewer: each seat's accuracy and marks as the
API says them, each seat's chance over the game on a chart, the marks on the log's lines, a
jump to the next mistake of a seat that lands on its step and says in words what the search
preferred and the chance before and after; a seat handed to a bot has no accuracy of its own.
At a phone's size and a desktop's, clean (axe-core, no sideways scrolling)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.server.client import Api
from tests.server.live import LiveServer, serving
from tests.web.browser import SIZES, Watched, not_blank


@pytest.fixture(scope="module")
def analysing(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """A server of its own that analyses finished games (the others' do not, tests/
    conftest.py), on a budget that finds a random bot's mistakes in a few seconds."""
    env = {"PATRICIAN_ANALYSIS_ITERATIONS": "100"}
    yield from serving("analysis", tmp_path_factory.mktemp("analysis"), None, env=env, timeout=30)


@pytest.fixture(scope="module")
def analysed(analysing: LiveServer) -> Iterator[tuple[str, dict[str, Any], dict[str, Any]]]:
    """A three-seat game of two random bots and Ada, who handed her seat to a bot at once,
    played to its end and analysed: its id, its replay and its analysis."""
    with httpx.Client(base_url=analysing.url, timeout=30) as client:
        api = Api(client)
        ada = api.create_player("Ada")
        levels = [{"level": "random"}, {"level": "random"}]
        created = api.ok(
            api.request("POST", "/api/games", player=ada, json={"seats": 3, "bots": levels}), 201
        )
        game_id = created["game_id"]
        api.ok(api.request("POST", f"/api/games/{game_id}/resign", player=ada))
        deadline = time.monotonic() + 180
        while True:
            response = api.request("GET", f"/api/games/{game_id}/analysis")
            if response.status_code == 200 and response.json()["status"] == "done":
                break
            assert time.monotonic() < deadline, response.text
            time.sleep(0.3)
        replay = api.ok(api.request("GET", f"/api/games/{game_id}/replay"))
        yield game_id, replay, response.json()


def _step_of(replay: dict[str, Any], version: int) -> int:
    """The version of the replay's step that shows a decision made at `version`."""
    return max(int(s["version"]) for s in replay["steps"] if s["version"] <= version + 1)


@pytest.mark.parametrize("size", sorted(SIZES))
def test_the_replay_shows_each_seats_accuracy_chance_and_marks_and_jumps_to_a_mistake(
    open_page: Callable[..., Watched],
    analysing: LiveServer,
    analysed: tuple[str, dict[str, Any], dict[str, Any]],
    screenshots: Path,
    size: str,
) -> None:
    game_id, replay, analysis = analysed
    base = analysing.url
    players = {p["seat"]: p for p in replay["steps"][-1]["view"]["players"]}
    ada = next(seat for seat, p in players.items() if p["name"] == "Ada")
    page = open_page(*SIZES[size])
    page.page.goto(f"{base}/games/{game_id}/replay")
    table = page.page.locator("section.analysis table.accuracy")
    table.wait_for()
    for seat in analysis["seats"]:
        cells = table.locator(f"tr[data-seat='{seat['seat']}'] td").all_inner_texts()
        shown = "\u2014" if seat["accuracy"] is None else f"{seat['accuracy']:g}"
        counts = [str(seat[k]) for k in ("inaccuracies", "mistakes", "blunders")]
        assert cells == [shown, *counts]
    assert analysis["seats"][ada]["accuracy"] is None, "a seat its bot played is not the player's"
    lines = page.page.locator("svg.chances polyline")
    assert lines.count() == 3  # Ada's seat too: what its bot did is judged, not counted

    marked = [j for j in analysis["judged"] if j["mark"]]
    steps = {_step_of(replay, j["version"]) for j in marked}
    page.page.locator("ol.log .mark-sign").first.wait_for()
    assert page.page.locator("ol.log .mark-sign").count() <= len(steps)
    assert page.page.locator("ol.log .mark-sign").count() >= 1

    mistakes = [
        j for j in analysis["judged"] if j["mark"] in ("mistake", "blunder") and j["by"] == ""
    ]
    assert mistakes, "the random bot makes a mistake in a whole game"
    first = mistakes[0]
    by_seat = [j for j in mistakes if j["seat"] == first["seat"]]
    page.page.get_by_label("The seat whose next mistake to jump to").select_option(
        str(first["seat"])
    )
    page.page.get_by_role("button", name="Go to it").click()
    page.page.wait_for_function(
        f"document.body.dataset.version === '{_step_of(replay, by_seat[0]['version'])}'"
    )
    words = page.page.locator("p.step-judged").inner_text()
    assert "the search preferred" in words and players[first["seat"]]["name"] in words
    before, after = round(first["chance_before"] * 100), round(first["chance_after"] * 100)
    assert f"chance {before}% \u2192 {after}%" in words
    page.page.wait_for_load_state("networkidle")
    png = page.page.screenshot(path=screenshots / f"replay-analysis-{size}.png", full_page=True)
    assert not_blank(png)
    assert page.no_sideways_scroll(), f"the replay with its analysis scrolls sideways at {size}"
    assert page.axe() == [], f"axe found serious violations in the analysis at {size}"

    judged_bot = next(s for s in analysis["seats"] if s["accuracy"] is not None)
    bot_player = players[judged_bot["seat"]]["player"]
    page.page.goto(f"{base}/players/{bot_player}")  # its page: its accuracy over its analysed games
    shown_accuracy = page.page.locator("section.accuracy-record")
    shown_accuracy.get_by_text(f"{judged_bot['accuracy']:g}", exact=True).wait_for()
    assert f"over 1 analysed game ({judged_bot['own_decisions']} of" in shown_accuracy.inner_text()
    item = page.page.locator(f"li[data-game='{game_id}']")
    assert f"accuracy {judged_bot['accuracy']:g}" in item.inner_text()
    page.page.screenshot(path=screenshots / f"player-accuracy-{size}.png", full_page=True)
    assert page.no_sideways_scroll(), f"the player's page scrolls sideways at {size}"
    assert page.axe() == [], f"axe found serious violations on the player's page at {size}"

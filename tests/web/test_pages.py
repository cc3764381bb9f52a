"""Every page of the browser client, at a phone's size and a desktop's: it draws without an
error or a warning in the console, scrolls no page sideways, passes axe-core with no serious
violation, shows something (its screenshot is not blank), and is served with the headers
that keep it safe and fast (a strict CSP, content-hashed static files cached for good and
gzipped).
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.server.client import Api, Table
from tests.server.live import LiveServer
from tests.web.browser import SIZES, Watched, not_blank


@pytest.fixture(scope="module")
def api(web_server: LiveServer) -> Iterator[Api]:
    with httpx.Client(base_url=web_server.url, timeout=30) as client:
        yield Api(client)


@pytest.fixture(scope="module")
def games(api: Api) -> dict[str, Table]:
    """A three-seat game played to its end and a two-seat classic game in play."""
    return {"finished": finished(api), "playing": in_play(api)}


def finished(api: Api) -> Table:
    table = api.new_table(3, "towers", ("trade_routes",), rng=random.Random(13))
    table.play_to_end(random.Random(13), whole_turns=0.5)
    return table


def in_play(api: Api) -> Table:
    table = api.new_table(2, "classic", rng=random.Random(5))
    for _ in range(7):
        table.step(random.Random(5), False)
    return table


def sign_in_as(page: Watched, player: Any) -> None:
    page.page.goto("/")
    page.page.evaluate(
        "([token, id, name]) => localStorage.setItem('patrician.session', "
        "JSON.stringify({token, player_id: id, name}))",
        [player.token, player.player_id, player.name],
    )


PAGES: list[tuple[str, str]] = [
    ("sign-in", "/"),
    ("lobby", "/"),
    ("play", "/games/{playing}"),
    ("play-finished", "/games/{finished}"),
    ("spectator", "/games/{playing}"),
    ("replay", "/games/{finished}/replay#v=120"),
    ("audit", "/audit#game={finished}"),
    ("settings", "/settings"),
    ("rules", "/rules"),
    ("ratings", "/ratings"),
    ("player", "/players/{player}"),
]


@pytest.mark.parametrize("size", sorted(SIZES))
@pytest.mark.parametrize("case", PAGES, ids=[name for name, _ in PAGES])
def test_every_page_draws_cleanly_at_phone_and_desktop_size(
    open_page: Callable[..., Watched],
    games: dict[str, Table],
    screenshots: Path,
    case: tuple[str, str],
    size: str,
) -> None:
    name, path = case
    finished, in_play = games["finished"], games["playing"]
    page = open_page(*SIZES[size])
    if name not in ("sign-in", "spectator", "audit"):
        sign_in_as(page, in_play.seats[0] if "finished" not in path else finished.seats[0])
    page.page.goto(
        path.format(
            playing=in_play.game_id, finished=finished.game_id, player=in_play.seats[1].player_id
        )
    )
    ready = {
        "sign-in": "Start playing",
        "lobby": "Your games",
        "audit": "every check passed",
        "settings": "How you are told",
        "rules": "The rules in short",
        "ratings": "rated, from place",
        "player": "turns timed out per 100",
    }.get(name)
    if ready:
        page.page.get_by_text(ready).first.wait_for()
    elif name == "replay":
        page.page.locator("ol.log li.current").wait_for()
    else:
        page.page.locator("svg.board g.city").first.wait_for()
    page.page.wait_for_load_state("networkidle")
    png = page.page.screenshot(path=screenshots / f"{name}-{size}.png", full_page=True)
    assert not_blank(png), f"the screenshot of {name} at {size} is blank"
    assert page.no_sideways_scroll(), f"{name} scrolls sideways at {size}"
    assert page.axe() == [], f"axe found serious violations on {name} at {size}"


def test_pages_carry_a_strict_content_security_policy_and_no_inline_script(
    web_server: LiveServer,
) -> None:
    for path in ("/", "/audit", "/settings", "/games/gnothing", "/games/gnothing/replay"):
        answer = httpx.get(web_server.url + path)
        assert answer.status_code == 200
        policy = answer.headers["content-security-policy"]
        assert "script-src 'self'" in policy and "unsafe-inline" not in policy
        assert "frame-ancestors 'none'" in policy
        assert answer.headers["x-content-type-options"] == "nosniff"
        assert answer.headers["x-frame-options"] == "DENY"
        assert answer.headers["cache-control"] == "no-cache"
        assert not re.search(r"<script(?![^>]*\bsrc=)[^>]*>", answer.text), "an inline script"
        assert " style=" not in answer.text and "<style" not in answer.text
    api = httpx.get(web_server.url + "/api/lobby")
    assert api.headers["x-content-type-options"] == "nosniff"
    for refused in ("/static/0/x.js", "/api/games/gnothing", "/nowhere"):
        error = httpx.get(web_server.url + refused)
        assert error.status_code == 404
        assert "script-src 'self'" in error.headers["content-security-policy"], refused
        assert error.headers["x-frame-options"] == "DENY"
    too_large = httpx.post(
        web_server.url + "/api/players",
        content=b"{" * 70_000,
        headers={"Content-Type": "application/json"},
    )
    assert too_large.status_code == 413 and too_large.headers["x-content-type-options"] == "nosniff"


def test_static_files_are_named_by_their_content_cached_for_good_and_gzipped(
    web_server: LiveServer,
) -> None:
    shell = httpx.get(web_server.url + "/games/gx/replay").text
    scripts = re.findall(r'src="(/static/[0-9a-f]{16}/[a-z]+\.js)"', shell)
    assert scripts == ["/static/" + scripts[0].split("/")[2] + "/replay.js"]
    zipped = httpx.get(web_server.url + scripts[0], headers={"Accept-Encoding": "gzip"})
    assert zipped.headers["cache-control"] == "public, max-age=31536000, immutable"
    assert zipped.headers["content-encoding"] == "gzip"
    assert zipped.headers["content-type"].startswith("text/javascript")
    plain = httpx.get(web_server.url + scripts[0], headers={"Accept-Encoding": "identity"})
    assert "content-encoding" not in plain.headers
    assert zipped.content == plain.content  # httpx undid the gzip
    again = httpx.get(web_server.url + scripts[0], headers={"If-None-Match": plain.headers["etag"]})
    assert again.status_code == 304
    stale = httpx.get(web_server.url + scripts[0].replace(scripts[0].split("/")[2], "0" * 16))
    assert stale.status_code == 404


def test_json_over_a_kibibyte_is_gzipped_for_a_client_that_takes_it(
    web_server: LiveServer, games: dict[str, Table]
) -> None:
    finished, in_play = games["finished"], games["playing"]
    for path in (f"/api/games/{in_play.game_id}", f"/api/games/{finished.game_id}/replay"):
        zipped = httpx.get(web_server.url + path, headers={"Accept-Encoding": "gzip"})
        assert zipped.headers["content-encoding"] == "gzip", path
        plain = httpx.get(web_server.url + path, headers={"Accept-Encoding": "identity"})
        assert "content-encoding" not in plain.headers
        assert zipped.json() == plain.json()
    small = httpx.get(web_server.url + "/healthz", headers={"Accept-Encoding": "gzip"})
    assert "content-encoding" not in small.headers
    # A stream goes out as it is: gzip would hold each event back until its buffer filled.
    stream = f"{web_server.url}/api/games/{finished.game_id}/stream?after=0"
    with httpx.stream("GET", stream, headers={"Accept-Encoding": "gzip"}) as events:
        assert events.headers["content-type"].startswith("text/event-stream")
        assert "content-encoding" not in events.headers


@pytest.mark.parametrize("target", ["//example.org/x", "/\\example.org", "https://example.org/"])
def test_a_sign_in_link_never_sends_a_player_off_the_site(
    open_page: Callable[..., Watched], target: str
) -> None:
    page = open_page()
    page.page.goto(f"/#next={target}")
    page.page.get_by_label("Your name").fill("Ida")
    page.page.get_by_role("button", name="Start playing").click()
    page.page.get_by_role("heading", name="Lobby").wait_for()
    assert page.page.url.startswith(page.base_url + "/"), page.page.url


def test_a_login_link_never_replaces_a_session_unasked(
    open_page: Callable[..., Watched], api: Api
) -> None:
    other = api.create_player("Otto")
    page = open_page()
    mine = page.sign_in("Ines")
    page.allow("status of 401")  # the broken link's token, checked and refused
    page.page.goto("/#login=bogus&player=bogus")
    page.page.get_by_text("That login link does not work").wait_for()
    kept = page.page.evaluate("JSON.parse(localStorage.getItem('patrician.session')).token")
    assert kept == mine["token"], "a broken link changes nothing"
    page.page.goto(f"/#login={other.token}&player={other.player_id}")
    page.page.get_by_role("button", name="Switch to Otto").click()
    page.page.get_by_text("Signed in as Otto").wait_for()
    assert other.token not in page.page.url

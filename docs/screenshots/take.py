"""Takes the screenshots that the README and docs/web.md show, so that a reader sees the game
before installing it:

    .venv/bin/python docs/screenshots/take.py

Starts the embedded server (as `make run` does, its bots playing in it), and in Debian's
Chromium (`/usr/bin/chromium`) a person plays a three-seat game with Trade Routes against a
greedy and a search bot by clicks to its end, at a phone's size (390x844) and at a desktop's
(1440x900): the start of a turn, a turn staged, the end; then the replay of that game. Each
picture is saved small (256 colours) beside this file.
"""

from __future__ import annotations

import io
import random
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from PIL import Image
from playwright.sync_api import Page, sync_playwright

from tests.server.live import LiveServer
from tests.web.browser import CHROMIUM, SIZES, Watched
from tests.web.players import LEGAL, Person
from tests.web.test_play import create_game
from tests.web.test_play_on_a_phone import ON_SCREEN

HERE = Path(__file__).parent


def save(page: Page, name: str) -> None:
    """The window as it is, in 256 colours (a tenth of the bytes, the same picture)."""
    image = Image.open(io.BytesIO(page.screenshot())).convert("RGB")
    small = image.quantize(colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    small.save(HERE / f"{name}.png", optimize=True)
    print(f"{name}.png: {(HERE / f'{name}.png').stat().st_size // 1024} KB")


def play_and_shoot(server: LiveServer, size: str) -> str:
    rng = random.Random(5)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM)
        width, height = SIZES[size]
        context = browser.new_context(
            viewport={"width": width, "height": height}, base_url=server.url
        )
        watched = Watched(context.new_page(), server.url)
        person = Person(watched, "Ada")
        watched.sign_in("Ada")
        game = create_game(person, seats=3, bots=["greedy", "ismcts"], modules=["trade_routes"])
        page = person.page
        turns = 0
        while person.wait_for_turn(timeout=30000):
            turns += 1
            if turns == 6:
                page.wait_for_timeout(1000)  # the tiles that a move changed stop flashing
                save(page, f"{size}-turn")
            chosen = 0
            while page.locator(LEGAL).count():
                # a choice on screen, as a person taps it (none is ever off it: the tests hold that)
                page.locator(LEGAL).nth(rng.choice(page.evaluate(ON_SCREEN, LEGAL))).click()
                person.idle()
                chosen += 1
                if turns == 6 and chosen == 1:
                    save(page, f"{size}-staged")
            before = person.version()
            page.get_by_role("button", name="Confirm and send").click()
            page.wait_for_function("(v) => Number(document.body.dataset.version) > v", arg=before)
        page.get_by_role("region", name="Final scores").wait_for()
        page.wait_for_timeout(500)
        save(page, f"{size}-end")
        page.goto(f"/games/{game}/replay#v=60")
        page.locator("ol.log li.current").wait_for()
        page.wait_for_timeout(500)
        save(page, f"{size}-replay")
        browser.close()
    return game


def main() -> None:
    server = LiveServer("screenshots", Path(tempfile.mkdtemp()), redis_url=None, env={})
    server.start(timeout=30)
    try:
        for size in SIZES:
            play_and_shoot(server, size)
    finally:
        server.stop()


if __name__ == "__main__":
    main()

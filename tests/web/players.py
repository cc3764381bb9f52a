"""A person at the play page, as the browser tests play: they read whether it is their turn,
click one of the options the page marks as legal (a card in hand, a site or a face-up card on
the board, a button of the options list), and confirm the staged turn when the page offers
nothing more to stage. Every click goes through the page; nothing is sent to the API here.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from tests.web.browser import Watched

LEGAL = ", ".join(
    (
        "button.card-chip.legal:not([disabled])",
        "svg.board g.option.legal > rect.target",
        ".options-list button.legal",
    )
)


@dataclass
class Person:
    watched: Watched
    name: str
    clicks: int = 0
    undos: int = 0

    @property
    def page(self):  # type: ignore[no-untyped-def]
        return self.watched.page

    def version(self) -> int:
        return int(self.page.evaluate("Number(document.body.dataset.version || 0)"))

    def phase(self) -> str:
        return str(self.page.evaluate("document.body.dataset.phase || ''"))

    def idle(self) -> None:
        self.page.wait_for_function("() => document.body.dataset.busy === 'false'")

    def deciding(self) -> bool:
        return bool(self.page.evaluate("document.body.dataset.deciding === 'true'"))

    def wait_for_turn(self, timeout: float = 15000) -> bool:
        """Wait until this page is to decide, or the game is over; whether it decides."""
        self.page.wait_for_function(
            "() => document.body.dataset.deciding === 'true'"
            " || document.body.dataset.phase === 'over'",
            timeout=timeout,
        )
        return self.deciding()

    def play_turn(self, rng: random.Random, *, undo: bool = False) -> int:
        """Stage a whole batch by clicks and confirm it; the version it reached."""
        before = self.version()
        staged_once = False
        while True:
            self.idle()
            options = self.page.locator(LEGAL)
            count = options.count()
            if count == 0:
                break
            options.nth(rng.randrange(count)).click()
            self.clicks += 1
            self.idle()
            if undo and not staged_once:
                # Take the first step back and stage again: the board is the server's again.
                staged_once = True
                self.page.get_by_role("button", name="Undo the last").click()
                self.undos += 1
                self.idle()
                assert self.page.evaluate("document.body.dataset.staged") == "0"
        confirm = self.page.get_by_role("button", name="Confirm and send")
        confirm.click()
        self.page.wait_for_function(
            "(before) => Number(document.body.dataset.version) > before", arg=before
        )
        return self.version()

    def sees(self, version: int, timeout: float = 5000) -> None:
        """This page shows `version` (or later) without being reloaded."""
        self.page.wait_for_function(
            "(v) => Number(document.body.dataset.version) >= v", arg=version, timeout=timeout
        )

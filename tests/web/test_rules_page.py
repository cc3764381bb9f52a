"""The rules summary (/rules): opened from the play page, short, in sections with headings, a
point for every ruling of docs/rulings.md with an anchor of its id (a refused move links its
rule there), clean at a phone's size and a desktop's (axe-core, no sideways scrolling).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.web.browser import SIZES, Watched, not_blank
from tests.web.players import Person
from tests.web.test_play import create_game

RULINGS = Path(__file__).parents[2] / "docs" / "rulings.md"


@pytest.mark.parametrize("size", sorted(SIZES))
def test_the_rules_summary_opens_from_the_play_page_and_cites_every_ruling(
    open_page: Callable[..., Watched], screenshots: Path, size: str
) -> None:
    lea = Person(open_page(*SIZES[size]), "Lea")
    lea.watched.sign_in("Lea")
    create_game(lea, seats=3, bots=["random", "random"], modules=["delegates"])
    page = lea.page
    page.locator("svg.board g.city").first.wait_for()
    page.locator("p.links").get_by_role("link", name="Rules").click()
    page.wait_for_url(re.compile(r"/rules$"))
    page.get_by_role("heading", name="The rules in short", level=1).wait_for()

    ids = sorted(set(re.findall(r"\*\*(R\d+)\b", RULINGS.read_text())), key=lambda r: int(r[1:]))
    assert len(ids) > 40
    anchors = page.evaluate("(ids) => ids.filter((id) => !document.getElementById(id))", ids)
    assert anchors == [], f"no point of the summary for {anchors}"
    headings = page.get_by_role("heading", level=2).all_inner_texts()
    assert {"A turn", "The end", "Delegates (module)", "Trade Routes (module)"} <= set(headings)
    words = len(page.locator("main").inner_text().split())
    assert words < 1500, f"a summary of {words} words is not short"
    assert lea.watched.no_sideways_scroll()
    assert lea.watched.axe() == [], f"axe found serious violations on the rules at {size}"
    png = page.screenshot(path=screenshots / f"rules-{size}.png", full_page=True)
    assert not_blank(png)

    page.goto("/")
    page.goto("/rules#R14")  # where a refusal of R14 leads: its point, in the window
    target = page.locator("li:target")
    target.wait_for()
    assert "(R14" in target.inner_text()
    page.wait_for_function(
        "() => { const box = document.getElementById('R14').getBoundingClientRect();"
        " return box.top > -1 && box.bottom < innerHeight + 1; }"
    )

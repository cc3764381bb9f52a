"""The audit page: a record dropped on it (here: chosen in its file field) is audited by the
server and the answer shown in words, every check in order; a record changed by one card is
refused, naming the check that found it."""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from tests.server.client import Api, Json
from tests.server.live import LiveServer
from tests.web.browser import Watched


@pytest.fixture(scope="module")
def record(web_server: LiveServer) -> Iterator[Json]:
    with httpx.Client(base_url=web_server.url, timeout=30) as client:
        table = Api(client).new_table(2, "classic", rng=random.Random(31))
        table.play_to_end(random.Random(31))
        for _ in range(100):  # the seed is revealed just after the end
            document = client.get(f"/api/games/{table.game_id}/record").json()
            if document["complete"]:
                break
        yield document


def test_a_record_file_chosen_on_the_audit_page_is_shown_to_hold_up(
    open_page: Callable[..., Watched], record: Json, tmp_path: Path
) -> None:
    file = tmp_path / "game.json"
    file.write_text(json.dumps(record))
    page = open_page(390, 844)
    page.page.goto("/audit")
    page.page.get_by_label("choose one:").set_input_files(file)
    verdict = page.page.locator("p.verdict")
    verdict.wait_for()
    assert verdict.inner_text() == "The record holds up: every check passed."
    items = page.page.locator("ul.checks li")
    checks = items.evaluate_all("(li) => li.map((x) => x.dataset.check)")
    assert checks[:4] == ["shape", "signature", "hash chain", "options"]


def test_a_record_changed_by_one_event_is_refused_naming_the_check(
    open_page: Callable[..., Watched], record: Json, tmp_path: Path
) -> None:
    forged = json.loads(json.dumps(record))
    played = next(e for e in forged["events"] if '"card_played"' in e["data"])
    event = json.loads(played["data"])
    event["card"] = "ROM-1" if event["card"] != "ROM-1" else "ROM-2"
    played["data"] = json.dumps(event, separators=(",", ":"))
    file = tmp_path / "forged.json"
    file.write_text(json.dumps(forged))
    page = open_page()
    page.page.goto("/audit")
    page.page.get_by_label("choose one:").set_input_files(file)
    failed = page.page.locator("ul.checks li.failed")
    failed.wait_for()
    # The server's seal names the part changed before the chain is even looked at.
    assert failed.get_attribute("data-check") == "signature"
    assert failed.inner_text().count("events") >= 1
    assert "does not hold up" in page.page.locator("p.verdict").inner_text()

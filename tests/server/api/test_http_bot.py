"""The example bot (examples/http_bot.py) plays a whole game against a live server with only
the public API: it joins with an invite code and plays its seat to the end while the test
plays the other seat."""

from __future__ import annotations

import random
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.server.client import Api
from tests.server.live import LiveServer

EXAMPLE = Path(__file__).parents[3] / "examples" / "http_bot.py"


@pytest.mark.redis
@pytest.mark.timeout(180)
def test_the_example_bot_joins_and_plays_its_seat_to_the_end(
    live_server: LiveServer, live_api: Api
) -> None:
    creator = live_api.create_player("Ada")
    game = live_api.create_game(creator, 2)
    bot = subprocess.Popen(
        [sys.executable, str(EXAMPLE), "--url", live_server.url, "--game", game["game_id"],
         "--invite", game["invite_code"], "--level", "greedy", "--name", "Greedy Bot"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        rng = random.Random(3)
        deadline = time.monotonic() + 150
        board = live_api.board(game["game_id"], creator)
        while board["phase"] != "over":
            assert time.monotonic() < deadline, "the game did not end"
            assert bot.poll() is None, bot.communicate()
            if board["pending"] and board["pending"]["seat"] == board["viewer"]:
                live_api.send(game["game_id"], creator, board["version"],
                              [rng.choice(board["legal_commands"])])  # fmt: skip
            else:
                time.sleep(0.02)
            board = live_api.board(game["game_id"], creator)
        out, err = bot.communicate(timeout=30)
    finally:
        if bot.poll() is None:
            bot.kill()
    assert bot.returncode == 0, err
    assert '"winners"' in out
    record = live_api.record(game["game_id"])
    assert [p["name"] for p in record["players"]] == ["Ada", "Greedy Bot"]

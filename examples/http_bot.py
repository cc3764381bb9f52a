"""A bot that plays a game of Patrician over the HTTP API, with one of the project's levels.

    python examples/http_bot.py --url http://127.0.0.1:8000 --game GAME --invite CODE \
        [--level greedy] [--name "Greedy Bot"]

It makes a player, joins the game with its invite code, and plays its seat to the end: it
follows the game's live stream, and whenever its seat is to decide it reads its board and its
events (exactly what the server lets its seat see), lets the bot choose one of its legal
commands and sends it with the version it decided on. Nothing here but the public API: any
client in any language can do the same (docs/api.md, docs/bots.md).
"""

from __future__ import annotations

import argparse
import json
import random
import time
import uuid
from collections.abc import Iterable, Iterator

import httpx
import msgspec

from bots.levels import LEVELS, make
from bots.seen import Seen
from domain.events import event_decoder
from domain.view import View


def messages(lines: Iterable[str]) -> Iterator[dict[str, str]]:
    """Server-sent messages, one dict of fields each (comments left out)."""
    fields: dict[str, str] = {}
    for line in lines:
        if not line:
            if fields:
                yield fields
            fields = {}
        elif not line.startswith(":"):
            name, _, value = line.partition(":")
            fields[name] = value.removeprefix(" ")


def seen(http: httpx.Client, game: str, auth: dict[str, str]) -> Seen:
    """What the seat may see: its board and its events, as the API serves them."""
    board = http.get(f"/api/games/{game}", headers=auth).raise_for_status().json()
    listed = http.get(f"/api/games/{game}/events", headers=auth).raise_for_status().json()
    events = tuple(
        (item["version"], event_decoder.decode(json.dumps(item["event"])))
        for item in listed["events"]
        if item["version"] <= board["version"]
    )
    return Seen(msgspec.convert(board, View), events)


def play(url: str, game: str, invite: str, *, level: str, name: str, seed: int) -> None:
    think = {"milliseconds": 500, "clock": time.perf_counter} if level == "ismcts" else {}
    bot = make(level, **think)
    rng = random.Random(seed)
    with httpx.Client(base_url=url, timeout=30) as http:
        me = http.post("/api/players", json={"name": name}).raise_for_status().json()
        auth = {"Authorization": f"Bearer {me['token']}"}
        body = {"invite_code": invite}
        http.post(f"/api/games/{game}/join", json=body, headers=auth).raise_for_status()
        with http.stream("GET", f"/api/games/{game}/stream", headers=auth, timeout=None) as live:
            for message in messages(live.iter_lines()):
                if message.get("event") == "seed_revealed":
                    break  # the game is over
                if message.get("event") != "step_started":
                    continue
                now = seen(http, game, auth)
                pending = now.view.pending
                if pending is None or pending.seat != now.view.viewer:
                    continue
                command = bot.choose(now, rng)
                sent = http.post(
                    f"/api/games/{game}/commands",
                    headers=auth,
                    json={
                        "expected_version": now.view.version,
                        "command_id": uuid.uuid4().hex,
                        "commands": [msgspec.to_builtins(command)],
                    },
                )
                if sent.status_code == 409:  # the game moved on meanwhile: decide again later
                    continue
                sent.raise_for_status()
        final = http.get(f"/api/games/{game}").json()
        print(json.dumps(final["result"], indent=1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--url", default="http://127.0.0.1:8000")
    parser.add_argument("--game", required=True)
    parser.add_argument("--invite", required=True)
    parser.add_argument("--level", default="greedy", choices=LEVELS)
    parser.add_argument("--name", default="Bot")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    play(args.url, args.game, args.invite, level=args.level, name=args.name, seed=args.seed)


if __name__ == "__main__":
    main()

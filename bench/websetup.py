"""What the web benchmark (bench/web.py) measures the browser against: `patrician serve` on a
real Redis, a bare page served by Python's own http.server for the baselines, and games
played over the API (random legal commands) to have a board in play and a finished replay.

A module of its own: the servers and the games are set up before the browser starts, and
nothing here knows of the browser or the figures.
"""

from __future__ import annotations

import http.server
import random
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import httpx

from bench.processes import free_port

BARE = b"<!doctype html><html lang=en><title>bare</title><h1>Patrician</h1><p>a bare page</p>"


def start_server(redis_url: str, prefix: str, log: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    command = [sys.executable, "-c", "from server.cli.main import main; main()", "serve"]
    command += ["--host", "127.0.0.1", "--port", str(port), "--redis-url", redis_url]
    env = {"PATRICIAN_PREFIX": prefix, "PYTHONUNBUFFERED": "1", "PATH": "/usr/bin:/bin"}
    process = subprocess.Popen(command, stdout=log.open("wb"), stderr=subprocess.STDOUT, env=env)
    url = f"http://127.0.0.1:{port}"
    for _ in range(400):
        try:
            if httpx.get(url + "/healthz", timeout=1).status_code == 200:
                return process, url
        except httpx.TransportError:
            pass
        time.sleep(0.05)
    process.kill()
    raise SystemExit(f"patrician serve did not start:\n{log.read_text()[-2000:]}")


def start_bare() -> str:
    class Bare(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(BARE)))
            self.end_headers()
            self.wfile.write(BARE)

        def log_message(self, *args: Any) -> None:
            return

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Bare)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}"


# --- games over the API -----------------------------------------------------------------------


class Seat:
    def __init__(self, client: httpx.Client, name: str) -> None:
        body = client.post("/api/players", json={"name": name}).json()
        self.player_id, self.token = body["player_id"], body["token"]
        self.auth = {"Authorization": f"Bearer {self.token}"}


def new_game(client: httpx.Client, seats: int, modules: list[str]) -> tuple[str, list[Seat]]:
    players = [Seat(client, f"p{i}") for i in range(seats)]
    options = {"seats": seats, "modules": modules}
    created = client.post("/api/games", json=options, headers=players[0].auth).json()
    for player in players[1:]:
        body = {"invite_code": created["invite_code"]}
        client.post(f"/api/games/{created['game_id']}/join", json=body, headers=player.auth)
    by_seat = {}
    for player in players:
        by_seat[
            client.get(f"/api/games/{created['game_id']}", headers=player.auth).json()["viewer"]
        ] = player
    return created["game_id"], [by_seat[seat] for seat in range(seats)]


def play(client: httpx.Client, game: str, seats: list[Seat], rng: random.Random, moves: int) -> int:
    """Up to `moves` random legal commands; the version reached."""
    board = client.get(f"/api/games/{game}").json()
    for _ in range(moves):
        if board["phase"] != "playing":
            break
        seat = seats[board["pending"]["seat"]]
        mine = client.get(f"/api/games/{game}", headers=seat.auth).json()
        body = {
            "expected_version": mine["version"],
            "command_id": uuid.uuid4().hex,
            "commands": [rng.choice(mine["legal_commands"])],
        }
        client.post(f"/api/games/{game}/commands", json=body, headers=seat.auth).raise_for_status()
        board = client.get(f"/api/games/{game}").json()
    return int(board["version"])

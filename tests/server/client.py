"""The API client of the server tests: players, tables, and whole random games played over
HTTP (the whole-turn planner is in `tests.server.planner`, the record verifier in
`tests.server.records`, the secret detector in `tests.server.detector`, server-sent events in
`tests.server.sse`).

The client knows only the API: it creates players and a game, joins with the invite code,
reads its board and sends one of its `legal_commands` with the `expected_version` it decided
on and a fresh `command_id`. A "whole turn" client sends its turn in one request, planned from
its board and the public card file of the game's record; a plan that goes wrong part way is
refused with the `index` of the first bad command, and the client sends the part before it.

It runs over anything that speaks httpx's sync interface (`litestar.testing.TestClient` is an
`httpx.Client`), and over several clients at once, taking turns request by request (two live
servers behaving as one).
"""

from __future__ import annotations

import random
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx
import msgspec

from tests.server.planner import plan_turn

Json = Any
"""A decoded JSON document."""

EDITIONS_AND_MODULES: list[tuple[str, tuple[str, ...]]] = [
    ("classic", ()),
    ("towers", ()),
    ("towers", ("trade_routes",)),
    ("towers", ("delegates",)),
    ("towers", ("trade_routes", "delegates")),
]
"""Every edition and module combination a game can have."""

EVERY_OPTION: list[tuple[int, str, tuple[str, ...]]] = [
    (seats, edition, modules) for edition, modules in EDITIONS_AND_MODULES for seats in range(2, 6)
]
"""The 20 kinds of game: 2-5 seats in every edition and module combination."""


class ApiFailure(AssertionError):
    """The server answered something a well-behaved client cannot go on from."""

    def __init__(self, what: str, response: httpx.Response) -> None:
        super().__init__(
            f"{what}: {response.request.method} {response.request.url.path} answered "
            f"{response.status_code} {response.text[:600]}"
        )
        self.response = response


@dataclass(frozen=True)
class Player:
    player_id: str
    token: str
    name: str

    @property
    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}


def command_id() -> str:
    return uuid.uuid4().hex


class Api:
    """The HTTP API over one or more httpx clients, used in turn request by request."""

    def __init__(self, *clients: httpx.Client) -> None:
        assert clients
        self.clients = clients
        self.turn = 0
        self.requests = 0

    def request(
        self,
        method: str,
        path: str,
        *,
        player: Player | None = None,
        json: Json = None,
        content: bytes | str | None = None,
        headers: dict[str, str] | None = None,
        params: dict[str, Any] | None = None,
    ) -> httpx.Response:
        client = self.clients[self.turn % len(self.clients)]
        self.turn += 1
        self.requests += 1
        sent = dict(headers or {})
        if player is not None:
            sent.update(player.auth)
        return client.request(method, path, json=json, content=content, headers=sent, params=params)

    def ok(self, response: httpx.Response, *statuses: int) -> Json:
        if response.status_code not in (statuses or (200,)):
            raise ApiFailure("unexpected answer", response)
        return msgspec.json.decode(response.content)

    # --- players and games -------------------------------------------------------------

    def create_player(self, name: str = "player") -> Player:
        body = self.ok(self.request("POST", "/api/players", json={"name": name}), 201)
        return Player(body["player_id"], body["token"], name)

    def create_game(
        self,
        creator: Player,
        seats: int,
        edition: str = "towers",
        modules: Sequence[str] = (),
        entropy: str = "",
    ) -> Json:
        options = {"seats": seats, "edition": edition, "modules": list(modules), "entropy": entropy}
        return self.ok(self.request("POST", "/api/games", player=creator, json=options), 201)

    def join(self, player: Player, game_id: str, invite_code: str, entropy: str = "") -> Json:
        body = {"invite_code": invite_code, "entropy": entropy}
        return self.ok(self.request("POST", f"/api/games/{game_id}/join", player=player, json=body))

    def board(self, game_id: str, player: Player | None = None) -> Json:
        return self.ok(self.request("GET", f"/api/games/{game_id}", player=player))

    def record(self, game_id: str, player: Player | None = None) -> Json:
        return self.ok(self.request("GET", f"/api/games/{game_id}/record", player=player))

    def lists_at_heads(
        self, players: Sequence[Player], game_ids: Sequence[str], seconds: float = 30
    ) -> None:
        """Wait until each player's list (`/api/me/games`) shows each game at its head: the
        follow-ups of its appends are done (what reads a player's games, as their page,
        counts a game as far as their list says)."""
        heads = {game_id: self.board(game_id)["version"] for game_id in game_ids}
        deadline = time.monotonic() + seconds
        for player in players:
            while {
                game["game_id"]: game["version"]
                for game in self.ok(self.request("GET", "/api/me/games", player=player))
                if game["game_id"] in heads
            } != heads:
                assert time.monotonic() < deadline, f"{player.name}'s list lags"
                time.sleep(0.05)

    def events(self, game_id: str, player: Player | None = None, after: int = 0) -> Json:
        return self.ok(
            self.request(
                "GET", f"/api/games/{game_id}/events", player=player, params={"after": after}
            )
        )

    def send(
        self,
        game_id: str,
        player: Player,
        expected_version: int,
        commands: Sequence[Json],
        cid: str | None = None,
    ) -> httpx.Response:
        body = {
            "expected_version": expected_version,
            "command_id": cid or command_id(),
            "commands": list(commands),
        }
        return self.request("POST", f"/api/games/{game_id}/commands", player=player, json=body)

    def new_table(
        self,
        seats: int,
        edition: str = "towers",
        modules: Sequence[str] = (),
        rng: random.Random | None = None,
    ) -> Table:
        """A started game: players created, the game created by the first, joined by the
        others with the invite code, each seat learned from its own board."""
        rng = rng or random.Random()
        joiners = [self.create_player(f"p{i}") for i in range(seats)]
        created = self.create_game(joiners[0], seats, edition, modules, f"{rng.getrandbits(64):x}")
        game_id = created["game_id"]
        joined: Json = None
        for player in joiners[1:]:
            joined = self.join(player, game_id, created["invite_code"], f"{rng.getrandbits(64):x}")
        assert joined is not None and joined["started"], joined
        table = self.table_of(game_id, joiners)
        table.invite_code = created["invite_code"]
        return table

    def table_of(self, game_id: str, players: Sequence[Player]) -> Table:
        """The table of a started game whose seats these players hold, each seat learned
        from its own board."""
        by_seat: dict[int, Player] = {}
        boards = {}
        for player in players:
            board = self.board(game_id, player)
            by_seat[board["viewer"]] = player
            boards[board["viewer"]] = board
        assert sorted(by_seat) == list(range(len(players)))
        return Table(
            self,
            game_id,
            "",
            [by_seat[s] for s in range(len(players))],
            version=boards[0]["version"],
            pending=boards[0]["pending"]["seat"],
        )


@dataclass
class Table:
    """A started game and its seated players, by seat; `version` and `pending` follow the
    answers of the commands sent through it."""

    api: Api
    game_id: str
    invite_code: str
    seats: list[Player]
    version: int
    pending: int | None
    cards: dict[str, Json] = field(default_factory=dict)
    answers: list[Json] = field(default_factory=list)
    """Every accepted command answer, with the seat it was sent for: `(seat, body)`."""
    prefix_retries: int = 0
    batches: int = 0

    @property
    def path(self) -> str:
        return f"/api/games/{self.game_id}"

    def card_info(self) -> dict[str, Json]:
        """The card file of the game (public, in its record): id -> card."""
        if not self.cards:
            record = self.api.record(self.game_id)
            self.cards = {card["id"]: card for card in record["game_data"]["cards"]}
        return self.cards

    def note(self, seat: int, body: Json) -> None:
        self.answers.append((seat, body))
        self.version = body["version"]
        for item in body["events"]:
            event = item["event"]
            if event["type"] == "step_started":
                self.pending = event["seat"]
            elif event["type"] == "game_ended":
                self.pending = None

    def step(self, rng: random.Random, whole_turn: bool) -> None:
        """The seat whose decision it is reads its board and sends a random legal command
        (or a whole planned turn)."""
        assert self.pending is not None
        seat = self.pending
        player = self.seats[seat]
        board = self.api.board(self.game_id, player)
        assert board["viewer"] == seat and board["pending"]["seat"] == seat, board["pending"]
        legal = board["legal_commands"]
        assert legal, f"seat {seat} decides but has no legal command"
        first = rng.choice(legal)
        plan = [first]
        if whole_turn and first["type"] == "play_card":
            plan = plan_turn(board, first, self.card_info(), rng)
        self.send_plan(seat, board["version"], plan)

    def send_plan(self, seat: int, version: int, plan: list[Json]) -> None:
        player = self.seats[seat]
        while True:
            response = self.api.send(self.game_id, player, version, plan)
            if response.status_code == 200:
                self.batches += 1
                self.note(seat, response.json())
                return
            body = response.json()
            index = body.get("index")
            # A plan that went wrong part way: nothing was written; send the part before.
            if response.status_code in (403, 422) and isinstance(index, int) and index > 0:
                assert body["error"] in ("not_your_decision", "wrong_step") or body.get("rule")
                self.prefix_retries += 1
                plan = plan[:index]
                continue
            raise ApiFailure(f"seat {seat} sent {plan} at version {version}", response)

    def play_to_end(
        self,
        rng: random.Random,
        *,
        whole_turns: float = 0.0,
        between: Callable[[Table], None] | None = None,
        max_requests: int = 5000,
    ) -> Json:
        """Play until the game is over; `whole_turns` is the share of turns sent whole;
        `between` is called before every decision. Returns the final board (spectator)."""
        start = self.api.requests
        while self.pending is not None:
            assert self.api.requests - start < max_requests, "the game does not end"
            if between is not None:
                between(self)
            self.step(rng, rng.random() < whole_turns)
        final = self.api.board(self.game_id)
        assert final["phase"] == "over" and final["result"] is not None
        return final

"""Previews of a staged turn: a seat stages commands one by one, each preview showing the board
it would have after them (with the next step's legal commands), appending nothing. Over whole
seeded games of several kinds: every staged prefix's board is the board the seat gets once it
sends those commands, at the version the preview said; where the commands turn up a hidden
card or end the game the preview shows no board; and no preview ever holds a card secret to
the seat (the detector of tests/server/detector.py, once each game is over). A preview is
refused exactly as the same commands sent would be, and only the seat's own token previews."""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass, field

import httpx
import pytest
from litestar.testing import TestClient

from server.config.settings import Settings
from tests.server.client import Api, Json, Player, Table, command_id
from tests.server.detector import Secrets
from tests.server.live import build_app
from tests.workers.test_clocks import FakeClock

pytestmark = pytest.mark.timeout(300)

REVEALING = {"card_revealed", "architetto_revealed", "game_ended"}
"""The events after which a preview shows no board (a hidden card turned up, the end)."""


def preview(
    api: Api, table: Table, player: Player | None, version: int, staged: list[Json]
) -> httpx.Response:
    body = {"expected_version": version, "commands": staged}
    return api.request("POST", f"{table.path}/preview", player=player, json=body)


@dataclass
class Staging:
    """One game played by staging every batch command by command, each step previewed."""

    api: Api
    table: Table
    rng: random.Random
    shown: list[tuple[int, int, int, Json]] = field(default_factory=list)
    """Every board a preview showed: (seat, version previewed at, version after, view)."""
    compared: int = 0
    """Boards after a send found equal to their preview."""
    handed: int = 0
    """Of those, the boards where the decision had passed to another seat."""
    ended: int = 0
    """Batches whose preview showed no board, and whose events turned up a card or ended."""

    def stage(self, seat: int, board: Json) -> tuple[list[Json], list[Json]]:
        """Commands picked one at a time from the legal ones each preview offers, until one
        ends the batch or hands the decision to another seat; and the previews in order."""
        player, version = self.table.seats[seat], board["version"]
        staged: list[Json] = []
        answers: list[Json] = []
        legal = board["legal_commands"]
        while True:
            staged.append(self.rng.choice(legal))
            answer = self.api.ok(preview(self.api, self.table, player, version, staged))
            assert set(answer) == {"version", "view", "ends_batch"}
            assert self.api.board(self.table.game_id)["version"] == version, "nothing appended"
            answers.append(answer)
            view = answer["view"]
            assert (view is None) is answer["ends_batch"]
            if view is None:
                assert answer["version"] is None, "nothing of what follows a reveal is told"
                return staged, answers
            assert view["version"] == answer["version"]
            self.shown.append((seat, version, answer["version"], view))
            if view["pending"] is None or view["pending"]["seat"] != seat:
                return staged, answers
            legal = view["legal_commands"]

    def turn(self) -> None:
        """The seat to decide stages a batch, then sends it whole or command by command;
        after each send its board is what the preview of that prefix showed."""
        seat = self.table.pending
        assert seat is not None
        player = self.table.seats[seat]
        staged, answers = self.stage(seat, self.api.board(self.table.game_id, player))
        whole = self.rng.random() < 0.3
        sends = [len(staged)] if whole else list(range(1, len(staged) + 1))
        done = 0
        for upto in sends:
            commands = staged[done:upto]
            sent = self.api.ok(
                self.api.send(self.table.game_id, player, self.table.version, commands)
            )
            self.table.note(seat, sent)
            done, expected = upto, answers[upto - 1]
            if not expected["ends_batch"]:
                assert sent["version"] == expected["version"], "the version the preview said"
            types = {item["event"]["type"] for item in sent["events"]}
            assert bool(types & REVEALING) is expected["ends_batch"], (types, expected)
            if expected["view"] is None:
                self.ended += 1
            else:
                assert self.api.board(self.table.game_id, player) == expected["view"]
                self.compared += 1
                self.handed += expected["view"]["pending"]["seat"] != seat

    def play(self) -> Secrets:
        """To the end; what was secret to whom, from the complete record."""
        while self.table.pending is not None:
            self.turn()
        return Secrets(self.api.record(self.table.game_id))


GAMES = [
    (2, "classic", (), 1),
    (2, "towers", (), 6),  # the Architetto: what it does after a reveal hangs on hidden cards
    (3, "towers", ("trade_routes",), 2),
    (4, "towers", ("delegates",), 3),
    (5, "towers", ("trade_routes", "delegates"), 4),
    (3, "classic", (), 5),
]
"""Seeded games of several kinds (seats, edition, modules, seed)."""


@pytest.mark.parametrize(("seats", "edition", "modules", "seed"), GAMES)
def test_every_staged_prefix_previews_the_board_its_seat_gets_once_sent_and_no_secret(
    api: Api, seats: int, edition: str, modules: tuple[str, ...], seed: int
) -> None:
    rng = random.Random(seed)
    staging = Staging(api, api.new_table(seats, edition, modules, rng), rng)
    secrets = staging.play()
    assert staging.compared > 50 and staging.ended > 10, (staging.compared, staging.ended)
    for seat, served_at, version, view in staging.shown:
        assert view["viewer"] == seat
        secrets.check_view(view, seat, version)
        secrets.check_view(view, seat, served_at)  # nothing it had not seen when it asked


@dataclass
class Scene:
    api: Api
    table: Table
    own: Player
    board: Json

    def both(self, player: Player | None, version: int, staged: list[Json]) -> tuple[Json, Json]:
        """The refusal of a preview and of the same commands sent; the version unchanged."""
        before = self.api.board(self.table.game_id)["version"]
        previewed = preview(self.api, self.table, player, version, staged)
        body = {"expected_version": version, "command_id": command_id(), "commands": staged}
        headers = player.auth if player else {}
        sent = self.api.request("POST", f"{self.table.path}/commands", json=body, headers=headers)
        assert previewed.status_code == sent.status_code >= 400, (previewed.text, sent.text)
        assert self.api.board(self.table.game_id)["version"] == before
        return _refusal(previewed), _refusal(sent)


def _refusal(response: httpx.Response) -> Json:
    body = response.json()
    assert body.pop("request_id") == response.headers["x-request-id"]
    return body


@pytest.fixture
def scene(api: Api) -> Scene:
    table = api.new_table(2, "towers", ("trade_routes",), random.Random(8))
    rng = random.Random(8)
    for _ in range(4):
        table.step(rng, whole_turn=False)
    assert table.pending is not None
    own = table.seats[table.pending]
    return Scene(api, table, own, api.board(table.game_id, own))


def test_a_preview_is_refused_exactly_as_the_same_commands_sent(scene: Scene) -> None:
    """The same status, code, ruling, index and current version: a stale version, another
    seat's turn, a player with no seat, a bad command part way, one after a reveal."""
    own, board, version = scene.own, scene.board, scene.board["version"]
    other = next(p for p in scene.table.seats if p != own)
    first = board["legal_commands"][0]
    taken = _to_the_reveal(scene)
    cases: list[tuple[Player | None, int, list[Json]]] = [
        (own, version - 1, [first]),
        (own, version + 1, [first]),
        (other, version, [first]),
        (scene.api.create_player("Sam"), version, [first]),
        (own, version, [first, {"type": "take_card", "city": "Nowhere"}]),
        (own, version, [{"type": "skip"}]),
        (own, version, [*taken, {"type": "skip"}]),
    ]
    seen = set()
    for player, at, staged in cases:
        previewed, sent = scene.both(player, at, staged)
        assert previewed == sent
        seen.add(sent["error"])
    assert {"version_conflict", "not_your_decision", "not_seated", "sent_before_a_reveal"} <= seen


def _to_the_reveal(scene: Scene) -> list[Json]:
    """The own seat's commands up to the first that turns up a hidden card, by preview."""
    staged: list[Json] = []
    legal = scene.board["legal_commands"]
    while True:
        staged.append(legal[-1])
        answer = scene.api.ok(
            preview(scene.api, scene.table, scene.own, scene.board["version"], staged)
        )
        if answer["ends_batch"]:
            return staged
        assert answer["view"]["pending"]["seat"] == scene.board["viewer"], "no reveal this turn"
        legal = answer["view"]["legal_commands"]


def test_a_preview_needs_the_seats_own_token_and_a_game(scene: Scene) -> None:
    version, first = scene.board["version"], scene.board["legal_commands"][:1]
    anonymous, sent = scene.both(None, version, first)
    assert anonymous == sent and anonymous["error"] == "unauthorized"
    body = {"expected_version": version, "commands": first}
    wrong = scene.api.request(
        "POST", f"{scene.table.path}/preview", json=body, headers={"Authorization": "Bearer no"}
    )
    assert wrong.status_code == 401
    missing = scene.api.request("POST", "/api/games/gnone/preview", player=scene.own, json=body)
    assert missing.status_code == 404 and missing.json()["error"] == "game_not_found"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"expected_version": 1, "commands": []}, "commands"),
        ({"expected_version": "1", "commands": [{"type": "skip"}]}, "expected_version"),
        ({"expected_version": 1, "commands": [{"type": "fly"}]}, "commands[0].type"),
        ({"expected_version": 1, "command_id": "c", "commands": [{"type": "skip"}]}, "command_id"),
        ({"commands": [{"type": "skip"}]}, "expected_version"),
    ],
)
def test_a_malformed_preview_is_400_naming_the_field(scene: Scene, body: Json, field: str) -> None:
    answer = scene.api.request("POST", f"{scene.table.path}/preview", player=scene.own, json=body)
    assert answer.status_code == 400, answer.text
    assert answer.json()["error"] == "bad_request"
    assert field in (answer.json().get("field") or answer.json()["message"])


def test_a_preview_sent_as_a_form_is_415(scene: Scene) -> None:
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    answer = scene.api.request(
        "POST", f"{scene.table.path}/preview", player=scene.own, content=b"commands=1", headers=form
    )
    assert answer.status_code == 415


@pytest.fixture
def timed() -> Iterator[tuple[Api, FakeClock]]:
    clock = FakeClock()
    with TestClient(build_app(Settings(embedded_workers=False), clock=clock), timeout=30) as client:
        yield Api(client), clock


def test_a_preview_in_a_timed_game_shows_the_clocks_as_if_sent_now(
    timed: tuple[Api, FakeClock],
) -> None:
    """Every batch of the first turns staged an hour apart: each board previewed, clocks
    and all, is the board after the batch is sent at that moment."""
    api, clock = timed
    rng = random.Random(9)
    players = [api.create_player(name) for name in ("Ann", "Ben")]
    options = {"seats": 2, "clock": {"per_move_hours": 2, "bank_hours": 1, "max_bank_hours": 3}}
    options |= {"modules": ["trade_routes"]}  # a turn may end after its reveal (a signpost)
    created = api.ok(api.request("POST", "/api/games", player=players[0], json=options), 201)
    api.join(players[1], created["game_id"], created["invite_code"])
    table = api.table_of(created["game_id"], players)
    staging = Staging(api, table, rng)
    while staging.handed < 3:
        assert table.pending is not None, "the game ended first"
        clock.advance(rng.choice([600, 3600, 3 * 3600]))
        staging.turn()
    clocks = [view["clock"] for *_versions, view in staging.shown]
    assert all(clocks) and len({c["turn_started"] for c in clocks}) > 3

"""Rematch: a player of a finished game asks once, and a new table is set for the same
players with the same options and bots, the asker in its first place; the other players
find the offer, with the code that opens the table, on the old game's board, and nobody
else gets the code. Only a player of the game may ask, only once it is over; asked again, by
anyone, at once or after a creation cut short, it is the same table and never a second one.
"""

from __future__ import annotations

import asyncio
import random
import threading
import time
import uuid
from collections.abc import Iterator

import fakeredis
import pytest
from litestar.testing import TestClient

from domain.legal import legal_commands
from server.config.card_data import load_game_data
from server.config.settings import Settings
from server.schema import requests
from server.services.bundle import Services, build_services
from store.client import AsyncEventStore
from store.rematch import Rematch, claim_op
from tests.server.api.test_bad_input import check_error
from tests.server.client import Api, Json, Player
from tests.server.live import build_app

pytestmark = pytest.mark.timeout(120)


def _rematch(api: Api, game_id: str, player: Player | None) -> Json:
    return api.request("POST", f"/api/games/{game_id}/rematch", player=player)


def _play_out(api: Api, game_id: str, people: list[Player], rng: random.Random) -> Json:
    """Random legal moves of the people until the game is over (the workers play any bot);
    the final board as a spectator sees it."""
    deadline = time.monotonic() + 90
    while True:
        assert time.monotonic() < deadline, "the game did not end"
        boards = [api.board(game_id, person) for person in people]
        if boards[0]["phase"] == "over":
            return api.board(game_id)
        mine = [(p, b) for p, b in zip(people, boards, strict=True)
                if b["pending"] and b["pending"]["seat"] == b["viewer"]]  # fmt: skip
        if not mine:
            time.sleep(0.01)  # a bot's decision
            continue
        person, board = mine[0]
        api.send(game_id, person, board["version"], [rng.choice(board["legal_commands"])])


@pytest.fixture
def bots_api() -> Iterator[Api]:
    """The embedded server with its workers, which play the bots' seats."""
    with TestClient(build_app(Settings()), timeout=30) as client:
        yield Api(client)


def test_a_player_of_a_finished_game_sets_a_table_for_the_same_players_options_and_bots(
    bots_api: Api,
) -> None:
    api = bots_api
    ada, bea, cy = (api.create_player(name) for name in ("Ada", "Bea", "Cy"))
    clock = {"per_move_hours": 12, "bank_hours": 1, "max_bank_hours": 2, "on_timeout": "random",
             "hand_over_after": 2}  # fmt: skip
    options = {"seats": 4, "edition": "towers", "modules": ["trade_routes", "delegates"],
               "bots": [{"level": "greedy"}, {"level": "random"}], "clock": clock}  # fmt: skip
    old = api.ok(api.request("POST", "/api/games", player=ada, json=options), 201)
    api.join(bea, old["game_id"], old["invite_code"])
    final = _play_out(api, old["game_id"], [ada, bea], random.Random(1))
    assert final["rematch"] is None, "nobody asked yet"

    # Bea, who did not create the old game, asks: she creates the new one.
    asked = api.ok(_rematch(api, old["game_id"], bea), 201)
    said = (asked["rematch_of"], asked["by"], asked["name"])
    assert said == (old["game_id"], bea.player_id, "Bea")
    assert asked["repeated"] is False and asked["game_id"] != old["game_id"]
    new = api.board(asked["game_id"], bea)
    assert new["phase"] == "waiting" and new["joined"][0] == bea.player_id
    kind = (new["seats"], new["edition"], new["modules"])
    assert kind == (4, "towers", ["trade_routes", "delegates"])
    bot_names = sorted(name for name in final["names"] if name.endswith("bot"))
    assert bot_names == ["Greedy bot", "Random bot"]
    assert sorted(new["names"][1:]) == bot_names, "the bots are seated at once, at their levels"
    assert new["invite_code"] == asked["invite_code"]

    # Ada finds the offer, with the code, on the old game's board; Cy, no player of it, does not.
    offer = api.board(old["game_id"], ada)["rematch"]
    assert offer == {"game_id": asked["game_id"], "by": bea.player_id, "name": "Bea",
                     "invite_code": asked["invite_code"]}  # fmt: skip
    for outsider in (cy, None):
        assert api.board(old["game_id"], outsider)["rematch"] == {**offer, "invite_code": None}
    joined = api.join(ada, asked["game_id"], offer["invite_code"])
    assert joined["started"], "the table was full: the same players, the same bots"
    started = api.board(asked["game_id"], ada)
    bots = set(started["joined"]) - {ada.player_id, bea.player_id}
    assert len(started["joined"]) == 4 and len(bots) == 2
    assert not bots & set(final["joined"]), "bots of their own, of the same levels"
    assert sorted(p["name"] for p in started["players"]) == sorted(final["names"])
    kept = ("per_move_seconds", "max_bank_seconds", "hand_over_after")
    assert {k: started["clock"][k] for k in kept} == {k: final["clock"][k] for k in kept}
    assert {s["bank_seconds"] for s in started["clock"]["seats"]} == {3600.0}


def test_only_a_player_of_the_game_may_ask_and_only_its_players_get_the_code(api: Api) -> None:
    table = api.new_table(2, rng=random.Random(2))
    table.play_to_end(random.Random(3))
    outsider = api.create_player("Cy")
    check_error(_rematch(api, table.game_id, outsider), 403, "not_seated")
    check_error(_rematch(api, table.game_id, None), 401, "unauthorized")
    with_body = api.request("POST", f"{table.path}/rematch", player=table.seats[0], json={})
    assert check_error(with_body, 400, "bad_request")["field"] == "body", "it takes no body"
    assert api.board(table.game_id, outsider)["rematch"] is None, "nothing was made"
    asked = api.ok(_rematch(api, table.game_id, table.seats[1]), 201)
    for player in table.seats:
        assert api.board(table.game_id, player)["rematch"]["invite_code"] == asked["invite_code"]
    assert api.board(table.game_id, outsider)["rematch"]["invite_code"] is None
    assert api.board(table.game_id)["rematch"]["invite_code"] is None


def test_a_rematch_is_asked_for_once_the_game_is_over(api: Api) -> None:
    ada, bea = api.create_player("Ada"), api.create_player("Bea")
    waiting = api.create_game(ada, 3)
    check_error(_rematch(api, waiting["game_id"], ada), 409, "game_not_over")
    called = api.create_game(ada, 2)
    api.ok(api.request("POST", f"/api/games/{called['game_id']}/cancel", player=ada))
    body = check_error(_rematch(api, called["game_id"], ada), 409, "game_not_over")
    assert "called off" in body["message"]
    table = api.new_table(2, rng=random.Random(4))
    body = check_error(_rematch(api, table.game_id, table.seats[0]), 409, "game_not_over")
    assert "in play" in body["message"]
    check_error(_rematch(api, table.game_id, bea), 403, "not_seated")
    assert api.board(table.game_id, table.seats[0])["rematch"] is None
    for game_id in ("gnone", "no such game", "x" * 300, "%00"):
        check_error(_rematch(api, game_id, ada), (400, 404), None)
    lobby = {game["game_id"] for game in api.ok(api.request("GET", "/api/lobby"))}
    assert lobby == {waiting["game_id"]}, "no table was set by a refused rematch"


def test_asked_again_by_anyone_it_answers_the_same_table(api: Api) -> None:
    table = api.new_table(2, rng=random.Random(5))
    table.play_to_end(random.Random(6))
    ada, bea = table.seats
    first = api.ok(_rematch(api, table.game_id, ada), 201)
    again = api.ok(_rematch(api, table.game_id, ada), 201)
    other = api.ok(_rematch(api, table.game_id, bea), 201)
    assert first["repeated"] is False and again["repeated"] is True and other["repeated"] is True
    assert again == {**first, "repeated": True}, "its first answer again"
    assert other == again, "Bea is answered Ada's table, with its code: she joins it"
    assert other["by"] == ada.player_id
    lobby = [game["game_id"] for game in api.ok(api.request("GET", "/api/lobby"))]
    assert lobby == [first["game_id"]], "one table"
    mine = [g["game_id"] for g in api.ok(api.request("GET", "/api/me/games", player=ada))]
    assert sorted(mine) == sorted([table.game_id, first["game_id"]])
    api.join(bea, first["game_id"], other["invite_code"])
    assert api.ok(_rematch(api, table.game_id, bea), 201) == other, "still, once it started"
    assert api.ok(api.request("GET", "/api/lobby")) == [], "a started rematch stays out of it"


def test_two_players_asking_at_the_same_moment_get_one_table(api: Api) -> None:
    table = api.new_table(2, rng=random.Random(7))
    table.play_to_end(random.Random(8))
    answers: list[Json] = []
    start = threading.Barrier(2)

    def ask(player: Player) -> None:
        start.wait()
        answers.append(api.ok(_rematch(api, table.game_id, player), 201))

    threads = [threading.Thread(target=ask, args=(player,)) for player in table.seats]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len({answer["game_id"] for answer in answers}) == 1
    assert sorted(answer["repeated"] for answer in answers) == [False, True]
    lobby = [game["game_id"] for game in api.ok(api.request("GET", "/api/lobby"))]
    assert lobby == [answers[0]["game_id"]]


# --- in the service: a creation cut short, and two asks interleaved --------------------------


def _services() -> Services:
    store = AsyncEventStore(fakeredis.FakeAsyncRedis(), prefix="rematch")
    return build_services(store, load_game_data(), prefix="rematch")


async def _finished(services: Services) -> tuple[str, list[str]]:
    """A two-seat game of Ada's and Bea's played to its end; its id and its players."""
    ada = (await services.accounts.create_player("Ada")).player_id
    bea = (await services.accounts.create_player("Bea")).player_id
    created = await services.games.create(ada, requests.NewGame(seats=2))
    game_id = created.game_id
    await services.games.join(game_id, bea, requests.JoinGame(created.invite_code))
    rng = random.Random(9)
    while (state := await services.games.state(game_id)).pending is not None:
        seat = state.pending.seat
        player = state.players[state.seat_players[seat]]
        command = rng.choice(legal_commands(state, seat))
        sent = requests.SendCommands(state.version, uuid.uuid4().hex, [command])
        await services.games.execute(game_id, player, sent)
    assert state.phase == "over"
    return game_id, [ada, bea]


def test_a_rematch_whose_creation_was_cut_short_is_made_by_the_next_ask() -> None:
    """The claim landed and the process died before the game was made: the offer is not
    shown (there is no table yet); the next ask, whoever makes it, makes it as its first
    asker's."""

    async def scenario() -> None:
        services = _services()
        game_id, (ada, bea) = await _finished(services)
        claimed = Rematch("gcut0000000000000001", ada, "Ada")
        await services.games.run(claim_op("rematch", game_id, claimed))
        board = await services.games.board(game_id, bea)
        assert b'"rematch":null' in board.body
        answer = await services.rematch.rematch(game_id, bea)
        assert (answer.game_id, answer.by, answer.repeated) == (claimed.game_id, ada, True)
        made = await services.games.state(claimed.game_id)
        assert made.players == (ada,) and made.phase == "waiting"
        board = await services.games.board(game_id, bea)
        assert answer.invite_code.encode() in board.body

    asyncio.run(scenario())


def test_two_asks_interleaved_in_one_process_make_one_game() -> None:
    async def scenario() -> None:
        services = _services()
        game_id, (ada, bea) = await _finished(services)
        both = await asyncio.gather(
            services.rematch.rematch(game_id, ada), services.rematch.rematch(game_id, bea)
        )
        assert both[0].game_id == both[1].game_id and both[0].by == both[1].by
        assert sorted(answer.repeated for answer in both) == [False, True]
        lobby = await services.listings.lobby()
        assert [game.game_id for game in lobby] == [both[0].game_id]

    asyncio.run(scenario())

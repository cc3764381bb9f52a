"""Racing requests: eight clients sending the same seat's decision at the same version, with
threads and with asyncio, on a live server against the real Redis, across two live servers,
and in process. Exactly one wins each version; the others get 409 with the current version.
A command id sent again gets its first answer (`repeated: true`) however the game moved on;
the same id with other content is refused.
"""

from __future__ import annotations

import asyncio
import random
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from tests.server.client import Api, Json, Player, Table, command_id
from tests.server.live import LiveServer

pytestmark = pytest.mark.timeout(60)

RACERS = 8
ROUNDS = 6

Answer = tuple[int, Json]


def race_body(board: Json, rng: random.Random) -> Json:
    return {
        "expected_version": board["version"],
        "command_id": command_id(),
        "commands": [rng.choice(board["legal_commands"])],
    }


def threaded_race(
    urls: Sequence[str], path: str, player: Player, bodies: list[Json]
) -> list[Answer]:
    """Each body sent by its own thread and client, all released at once; the clients take
    the servers in turn."""
    barrier = threading.Barrier(len(bodies))
    clients = [httpx.Client(base_url=urls[i % len(urls)], timeout=30) for i in range(len(bodies))]
    try:
        for http in clients:  # connect first, so that the race is between requests
            http.get("/healthz")

        def send(i: int) -> Answer:
            barrier.wait(10)
            response = clients[i].post(path, json=bodies[i], headers=player.auth)
            return response.status_code, response.json()

        with ThreadPoolExecutor(len(bodies)) as pool:
            return list(pool.map(send, range(len(bodies))))
    finally:
        for http in clients:
            http.close()


def async_race(urls: Sequence[str], path: str, player: Player, bodies: list[Json]) -> list[Answer]:
    async def main() -> list[Answer]:
        clients = [
            httpx.AsyncClient(base_url=urls[i % len(urls)], timeout=30) for i in range(len(bodies))
        ]
        try:
            await asyncio.gather(*(http.get("/healthz") for http in clients))
            responses = await asyncio.gather(
                *(
                    http.post(path, json=body, headers=player.auth)
                    for http, body in zip(clients, bodies, strict=True)
                )
            )
            return [(r.status_code, r.json()) for r in responses]
        finally:
            await asyncio.gather(*(http.aclose() for http in clients))

    return asyncio.run(main())


Racer = Callable[[str, Player, list[Json]], list[Answer]]


def check_one_winner(answers: list[Answer], bodies: list[Json]) -> tuple[int, Json]:
    """Exactly one accepted; every other a 409 naming the version the winner reached."""
    won = [i for i, (status, _) in enumerate(answers) if status == 200]
    assert len(won) == 1, answers
    winner = answers[won[0]][1]
    assert winner["repeated"] is False
    assert winner["first_version"] == bodies[won[0]]["expected_version"] + 1
    for i, (status, body) in enumerate(answers):
        if i != won[0]:
            assert status == 409, body
            assert body["error"] == "version_conflict"
            assert body["current_version"] == winner["version"]
    return won[0], winner


def race_rounds(api: Api, table: Table, racer: Racer, seed: int) -> list[tuple[Json, Json]]:
    """ROUNDS decisions, each raced by RACERS clients; returns (winning body, answer)."""
    rng = random.Random(seed)
    won = []
    for _ in range(ROUNDS):
        assert table.pending is not None
        seat = table.pending
        player = table.seats[seat]
        board = api.board(table.game_id, player)
        bodies = [race_body(board, rng) for _ in range(RACERS)]
        answers = racer(f"{table.path}/commands", player, bodies)
        index, winner = check_one_winner(answers, bodies)
        table.note(seat, winner)
        assert api.board(table.game_id)["version"] == winner["version"]
        won.append((bodies[index], winner))
    # The record holds exactly the winners, under their command ids.
    record = api.record(table.game_id)
    recorded = {b["command_id"]: b for b in record["commands"] if b["kind"] == "commands"}
    assert len(recorded) == ROUNDS
    for body, answer in won:
        batch = recorded[body["command_id"]]
        assert batch["commands"] == body["commands"]
        assert batch["last_version"] == answer["version"]
    return won


@pytest.mark.redis
@pytest.mark.parametrize("racer", [threaded_race, async_race], ids=["threads", "asyncio"])
def test_eight_racers_on_a_live_server_one_wins_each_version_the_rest_get_409(
    live_server: LiveServer, live_api: Api, racer: Callable[..., list[Answer]]
) -> None:
    table = live_api.new_table(3, "towers", ("trade_routes",), random.Random(21))
    race_rounds(
        live_api, table, lambda path, p, bodies: racer([live_server.url], path, p, bodies), 21
    )


@pytest.mark.redis
@pytest.mark.slow
@pytest.mark.parametrize("racer", [threaded_race, async_race], ids=["threads", "asyncio"])
def test_eight_racers_across_two_live_servers_one_wins_each_version(
    two_live_servers: tuple[LiveServer, LiveServer], racer: Callable[..., list[Answer]]
) -> None:
    urls = [server.url for server in two_live_servers]
    with httpx.Client(base_url=urls[0], timeout=30) as http:
        api = Api(http)
        table = api.new_table(2, "towers", (), random.Random(22))
        race_rounds(api, table, lambda path, p, bodies: racer(urls, path, p, bodies), 22)


def test_eight_racers_in_process_through_the_async_test_client_one_wins(app: Litestar) -> None:
    async def main() -> None:
        async with AsyncTestClient(app, timeout=30) as client:
            made = [(await client.post("/api/players", json={"name": n})).json() for n in "ab"]
            players = [Player(m["player_id"], m["token"], "x") for m in made]
            created = (
                await client.post("/api/games", json={"seats": 2}, headers=players[0].auth)
            ).json()
            path = f"/api/games/{created['game_id']}"
            joined = await client.post(
                f"{path}/join",
                json={"invite_code": created["invite_code"]},
                headers=players[1].auth,
            )
            assert joined.status_code == 200
            rng = random.Random(23)
            for _ in range(ROUNDS):
                boards = [(await client.get(path, headers=p.auth)).json() for p in players]
                board, player = next(
                    (b, p) for b, p in zip(boards, players, strict=True) if b["legal_commands"]
                )
                bodies = [race_body(board, rng) for _ in range(RACERS)]
                responses = await asyncio.gather(
                    *(client.post(f"{path}/commands", json=b, headers=player.auth) for b in bodies)
                )
                check_one_winner([(r.status_code, r.json()) for r in responses], bodies)

    asyncio.run(asyncio.wait_for(main(), 60))


# --- command ids -----------------------------------------------------------------------------


@pytest.mark.redis
def test_a_retried_command_id_gets_its_first_answer_even_after_the_game_moved_on(
    live_api: Api,
) -> None:
    rng = random.Random(24)
    table = live_api.new_table(3, "classic", (), rng)
    seat = table.pending
    assert seat is not None
    player = table.seats[seat]
    board = live_api.board(table.game_id, player)
    body = race_body(board, rng)
    first = live_api.ok(
        live_api.request("POST", f"{table.path}/commands", player=player, json=body)
    )
    assert first["repeated"] is False
    table.note(seat, first)
    # Sent again at once, then after the game has moved on by several turns.
    for moves in (0, 12):
        for _ in range(moves):
            table.step(rng, whole_turn=False)
        again = live_api.ok(
            live_api.request("POST", f"{table.path}/commands", player=player, json=body)
        )
        assert again == first | {"repeated": True}
        assert live_api.board(table.game_id)["version"] == table.version, "nothing written"


@pytest.mark.redis
def test_the_same_command_id_with_other_content_is_refused_and_writes_nothing(
    live_api: Api,
) -> None:
    rng = random.Random(25)
    table = live_api.new_table(2, "towers", ("delegates",), rng)
    seat = table.pending
    assert seat is not None
    player = table.seats[seat]
    board = live_api.board(table.game_id, player)
    assert len(board["legal_commands"]) > 1
    body = race_body(board, rng) | {"commands": [board["legal_commands"][0]]}
    first = live_api.ok(
        live_api.request("POST", f"{table.path}/commands", player=player, json=body)
    )
    table.note(seat, first)
    now = live_api.board(table.game_id, table.seats[table.pending or 0])
    others: list[tuple[Player, Json]] = [
        # another command at the same version
        (player, body | {"commands": [board["legal_commands"][1]]}),
        # the same command at another version
        (player, body | {"expected_version": now["version"]}),
    ]
    if table.seats[now["viewer"]] == player:
        # a legal command now, under the old id
        others.append(
            (
                player,
                body | {"expected_version": now["version"], "commands": [now["legal_commands"][0]]},
            )
        )
    for sender, other in others:
        answer = live_api.request("POST", f"{table.path}/commands", player=sender, json=other)
        assert answer.status_code == 409, answer.text
        assert answer.json()["error"] == "command_id_reused"
        assert live_api.board(table.game_id)["version"] == first["version"], "nothing written"
    # Command ids are each player's own: the other seat's same id is its own, new command,
    # refused only because it names a stale version (checked before whose decision it is).
    answer = live_api.request(
        "POST", f"{table.path}/commands", player=table.seats[1 - seat], json=body
    )
    assert answer.status_code == 409, answer.text
    assert answer.json()["error"] == "version_conflict"
    assert live_api.board(table.game_id)["version"] == first["version"], "nothing written"


@pytest.mark.redis
def test_eight_racers_sending_one_command_id_all_get_the_one_first_answer(
    live_server: LiveServer, live_api: Api
) -> None:
    rng = random.Random(26)
    table = live_api.new_table(2, "classic", (), rng)
    seat = table.pending
    assert seat is not None
    body = race_body(live_api.board(table.game_id, table.seats[seat]), rng)
    answers = threaded_race(
        [live_server.url], f"{table.path}/commands", table.seats[seat], [body] * RACERS
    )
    assert all(status == 200 for status, _ in answers), answers
    assert sum(1 for _, a in answers if a["repeated"] is False) == 1
    firsts = {(a["version"], a["first_version"], str(a["events"])) for _, a in answers}
    assert len(firsts) == 1, "every racer got the one first answer"
    version = answers[0][1]["version"]
    assert live_api.board(table.game_id)["version"] == version, "written once"


@pytest.mark.redis
def test_a_losing_racers_command_id_stays_free_for_its_next_decision(
    live_server: LiveServer, live_api: Api
) -> None:
    rng = random.Random(27)
    table = live_api.new_table(2, "towers", (), rng)
    seat = table.pending
    assert seat is not None
    player = table.seats[seat]
    bodies = [race_body(live_api.board(table.game_id, player), rng) for _ in range(RACERS)]
    answers = threaded_race([live_server.url], f"{table.path}/commands", player, bodies)
    index, winner = check_one_winner(answers, bodies)
    table.note(seat, winner)
    loser = bodies[(index + 1) % RACERS]
    assert table.pending is not None
    now = live_api.board(table.game_id, table.seats[table.pending])
    retry = loser | {"expected_version": now["version"], "commands": [now["legal_commands"][0]]}
    answer = live_api.request(
        "POST", f"{table.path}/commands", player=table.seats[table.pending], json=retry
    )
    assert answer.status_code == 200 and answer.json()["repeated"] is False, answer.text

"""Whole games through real HTTP, every kind of game, checked against the engine.

Clients know only the API (tests/server/client.py): they create and join a game, read their
board, send one of their legal commands (or a whole turn) with the version they decided on.
At the end the complete record is verified like an offline verifier would (hash chain, seed,
deal, every command replayed through `domain.decide.play` byte for byte) and the result
recomputed from the refolded log must equal the API's. The same games run on the embedded
fakeredis and on the real Redis through Litestar's test clients, on a live `patrician serve`,
and on two live servers taking requests in turn.

Long on purpose: one short test per case, each named as a sentence, read like a table;
splitting the file would scatter cases of one ruling or one promise.
"""

from __future__ import annotations

import asyncio
import json
import random
import threading
import time
from collections.abc import Callable

import httpx
import msgspec
import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient, TestClient

from domain.errors import IllegalCommand
from domain.events import GameEnded
from domain.view import visible
from tests.server.client import EVERY_OPTION, Api, Json, Player, Table, command_id
from tests.server.live import LiveServer
from tests.server.records import as_json, record_events, verify_record
from tests.server.sse import Message, parse_sse, read_stream

pytestmark = pytest.mark.timeout(120)


def play_and_verify(
    api: Api, seats: int, edition: str, modules: tuple[str, ...], seed: int
) -> tuple[Table, Json]:
    """A random game played to its end; its record verified and its result compared with
    every place the API states it. Seats 1 and 3 send whole turns, the others one command
    per request."""
    rng = random.Random(seed)
    table = api.new_table(seats, edition, modules, rng)
    final = play_whole(table, rng)
    record = api.record(table.game_id)
    recomputed = verify_record(record)
    check_result(table, final, record, recomputed)
    sizes = [len(batch["commands"]) for batch in record["commands"]]
    assert max(sizes) > 1, "whole turns were sent in one request"
    return table, record


def play_whole(table: Table, rng: random.Random) -> Json:
    for _ in range(2000):  # a game takes about 150 decisions
        if table.pending is None:
            break
        seat = table.pending
        table.step(rng, whole_turn=seat in (1, 3))
    final = table.api.board(table.game_id)
    assert final["phase"] == "over"
    return final


def check_result(table: Table, final: Json, record: Json, recomputed: GameEnded) -> None:
    expected = as_json(recomputed)
    assert final["result"] == expected, "the board's result is the engine's"
    assert record["result"] == expected, "the record's result is the engine's"
    _, last_answer = table.answers[-1]
    ended = [e["event"] for e in last_answer["events"] if e["event"]["type"] == "game_ended"]
    assert ended == [expected], "the last command's answer carries the engine's result"
    for seat, player in enumerate(table.seats):
        mine = next(
            g
            for g in table.api.ok(table.api.request("GET", "/api/me/games", player=player))
            if g["game_id"] == table.game_id
        )
        assert mine["phase"] == "over" and mine["seat"] == seat
        assert mine["result"] == expected and mine["your_decision"] is False
    # Every accepted answer is one batch of the record, with the seat that sent it.
    batches = {
        (b["first_version"], b["last_version"]): b
        for b in record["commands"]
        if b["kind"] == "commands"
    }
    assert len(batches) == len(table.answers) == table.batches
    for seat, answer in table.answers:
        batch = batches[(answer["first_version"], answer["version"])]
        assert batch["seat"] == seat and batch["player_id"] == table.seats[seat].player_id
        assert answer["repeated"] is False
    # Everything is public once the game is over: the seed and the deal, for anyone.
    assert final["server_seed"] == record["fairness"]["server_seed"]
    assert final["hands"] is None or len(final["hands"]) == len(table.seats)


# --- in process: Litestar's TestClient on fakeredis and on the real Redis -----------------


@pytest.mark.parametrize(("seats", "edition", "modules"), EVERY_OPTION)
def test_a_random_game_through_the_test_client_ends_with_the_engines_result(
    api: Api, seats: int, edition: str, modules: tuple[str, ...]
) -> None:
    _, record = play_and_verify(api, seats, edition, modules, seed=seats * 100 + len(modules))
    assert record["seats"] == seats and record["edition"] == edition
    assert tuple(record["modules"]) == modules


@pytest.mark.redis
@pytest.mark.parametrize(("seats", "edition", "modules"), EVERY_OPTION)
def test_a_random_game_on_the_real_redis_ends_with_the_engines_result(
    redis_client_app: TestClient[Litestar], seats: int, edition: str, modules: tuple[str, ...]
) -> None:
    play_and_verify(Api(redis_client_app), seats, edition, modules, seed=7 + seats)


def test_seats_playing_at_once_through_the_async_test_client_finish_the_game(
    app: Litestar,
) -> None:
    """Each seat is its own asyncio task, polling its board and acting when it decides."""

    async def seat_task(
        client: AsyncTestClient[Litestar], game_id: str, player: Player, seed: int
    ) -> int:
        rng = random.Random(seed)
        sent = 0
        while True:
            board = (await client.get(f"/api/games/{game_id}", headers=player.auth)).json()
            if board["phase"] == "over":
                return sent
            if not board["legal_commands"]:
                await asyncio.sleep(0.001)
                continue
            body = {
                "expected_version": board["version"],
                "command_id": command_id(),
                "commands": [rng.choice(board["legal_commands"])],
            }
            answer = await client.post(
                f"/api/games/{game_id}/commands", json=body, headers=player.auth
            )
            assert answer.status_code == 200, answer.text
            sent += 1

    async def main() -> tuple[str, list[int]]:
        async with AsyncTestClient(app, timeout=30) as client:
            players = []
            for name in ("a", "b", "c", "d"):
                made = (await client.post("/api/players", json={"name": name})).json()
                players.append(Player(made["player_id"], made["token"], name))
            created = (
                await client.post(
                    "/api/games",
                    json={"seats": 4, "modules": ["trade_routes", "delegates"]},
                    headers=players[0].auth,
                )
            ).json()
            game_id = created["game_id"]
            for player in players[1:]:
                joined = await client.post(
                    f"/api/games/{game_id}/join",
                    json={"invite_code": created["invite_code"]},
                    headers=player.auth,
                )
                assert joined.status_code == 200
            sent = await asyncio.wait_for(
                asyncio.gather(*(seat_task(client, game_id, p, i) for i, p in enumerate(players))),
                60,
            )
            record = (await client.get(f"/api/games/{game_id}/record")).json()
            verify_record(record)
            return game_id, list(sent)

    _, sent = asyncio.run(main())
    assert all(count > 0 for count in sent), "every seat acted"


def test_the_record_verifier_refuses_a_tampered_record(api: Api) -> None:
    """verify_record would see a server that lies: a changed event, command or result."""
    rng = random.Random(3)
    table = api.new_table(2, "towers", ("delegates",), rng)
    play_whole(table, rng)
    record = api.record(table.game_id)
    verify_record(record)

    def tampered(change: Callable[[Json], None]) -> Json:
        copy = json.loads(json.dumps(record))
        change(copy)
        return copy

    def played_card(copy: Json) -> None:
        entry = next(e for e in copy["events"] if '"card_played"' in e["data"])
        event = json.loads(entry["data"])
        event["card"] = "ROM-1" if event["card"] != "ROM-1" else "ROM-2"
        entry["data"] = json.dumps(event, separators=(",", ":"))

    def command(copy: Json) -> None:
        batch = next(b for b in copy["commands"] if b["kind"] == "commands")
        batch["commands"] = [{"type": "skip"}]

    def result(copy: Json) -> None:
        copy["result"]["winners"] = [9]

    def seed(copy: Json) -> None:
        copy["fairness"]["server_seed"] = "00" * 32

    for change in (played_card, command, result, seed):
        with pytest.raises((AssertionError, IllegalCommand)):
            verify_record(tampered(change))


# --- a live `patrician serve` against the real Redis --------------------------------------


@pytest.mark.redis
@pytest.mark.slow
@pytest.mark.parametrize(("seats", "edition", "modules"), EVERY_OPTION)
def test_a_random_game_on_a_live_server_ends_with_the_engines_result(
    live_api: Api, seats: int, edition: str, modules: tuple[str, ...]
) -> None:
    play_and_verify(live_api, seats, edition, modules, seed=31 * seats + len(edition))


@pytest.mark.redis
@pytest.mark.slow
@pytest.mark.parametrize(
    ("seats", "edition", "modules"),
    [(2, "towers", ("trade_routes",)), (5, "classic", ()), (3, "towers", ("delegates",))],
)
def test_two_live_servers_taking_requests_in_turn_behave_as_one(
    two_live_servers: tuple[LiveServer, LiveServer],
    seats: int,
    edition: str,
    modules: tuple[str, ...],
) -> None:
    first, second = two_live_servers
    with (
        httpx.Client(base_url=first.url, timeout=30) as one,
        httpx.Client(base_url=second.url, timeout=30) as other,
    ):
        api = Api(one, other)
        table, record = play_and_verify(api, seats, edition, modules, seed=seats)
        # Each server reads what the other wrote, at once: the same board, version and log.
        for http in (one, other):
            # (the same key file: the same seal, to the byte)
            assert http.get(f"/api/games/{table.game_id}/record").json() == record
        # A command id accepted through either server is known to both: sent again to
        # each, the last command gets its first answer again.
        _, first = table.answers[-1]
        batch = record["commands"][-1]
        retry = {
            "expected_version": batch["first_version"] - 1,
            "command_id": batch["command_id"],
            "commands": batch["commands"],
        }
        player = table.seats[batch["seat"]]
        for http in (one, other):
            again = http.post(f"{table.path}/commands", json=retry, headers=player.auth)
            assert again.status_code == 200 and again.json() == first | {"repeated": True}


@pytest.mark.redis
def test_a_stream_on_one_live_server_follows_commands_sent_to_the_other(
    two_live_servers: tuple[LiveServer, LiveServer],
) -> None:
    first, second = two_live_servers
    rng = random.Random(17)
    with httpx.Client(base_url=first.url, timeout=30) as one:
        api = Api(one)
        table = api.new_table(2, "towers", (), rng)
        got: list[Message] = []
        errors: list[BaseException] = []
        opened = threading.Event()

        def follow() -> None:
            try:
                with httpx.Client(base_url=second.url, timeout=30) as other:
                    got.extend(follow_to_end(other, f"{table.path}/stream", {}, opened))
            except BaseException as error:  # reported by the main thread
                errors.append(error)

        thread = threading.Thread(target=follow, daemon=True)
        thread.start()
        assert opened.wait(10), "the stream opened during play"
        play_whole(table, rng)
        thread.join(30)
        assert not errors, errors
        assert as_pairs(got) == expected_stream(api.record(table.game_id), None)


# --- the stream on the live server -------------------------------------------------------


def expected_stream(
    record: Json, seat: int | None, after: int = 0
) -> list[tuple[int | None, Json]]:
    """The (version, event) a stream opened during play shows `seat`: its visible events
    until the game ends, then, right after `game_ended`, a `revealed` message (no version)
    with every earlier event it could not see, then the rest."""
    log = record_events(record)
    shown: list[tuple[int | None, Json]] = []
    for version, event in enumerate(log, 1):
        if version > after and visible(event, seat, False):
            shown.append((version, as_json(event)))
        if version > after and isinstance(event, GameEnded):
            hidden = [
                {"version": v, "event": as_json(e)}
                for v, e in enumerate(log[: version - 1], 1)
                if not visible(e, seat, False)
            ]
            shown.append((None, {"events": hidden}))
    return shown


def as_pairs(messages: list[Message]) -> list[tuple[int | None, Json]]:
    for message in messages:
        if message.id is None:
            assert message.event == "revealed"
        else:
            assert message.event == message.data["type"], "`event` is the event's type"
    return [(message.id, message.data) for message in messages]


@pytest.mark.redis
def test_the_live_stream_follows_a_game_as_it_is_played_for_each_viewer(
    live_server: LiveServer, live_api: Api
) -> None:
    rng = random.Random(5)
    table = live_api.new_table(3, "towers", ("trade_routes",), rng)
    got: dict[str, list[Message]] = {}
    errors: list[BaseException] = []
    viewers: dict[str, tuple[int | None, dict[str, str]]] = {
        "seat0": (0, table.seats[0].auth),
        "seat2": (2, table.seats[2].auth),
        "spectator": (None, {}),
    }
    opened = {name: threading.Event() for name in viewers}

    def follow(name: str, headers: dict[str, str]) -> None:
        try:
            with httpx.Client(base_url=live_server.url, timeout=30) as http:
                got[name] = follow_to_end(http, f"{table.path}/stream", headers, opened[name])
        except BaseException as error:  # reported by the main thread
            errors.append(error)

    threads = [
        threading.Thread(target=follow, args=(name, headers), daemon=True)
        for name, (_, headers) in viewers.items()
    ]
    for thread in threads:
        thread.start()
    for event in opened.values():
        assert event.wait(10), "every stream opened during play"
    play_whole(table, rng)
    for thread in threads:
        thread.join(30)
    assert not errors, errors
    record = live_api.record(table.game_id)
    for name, (seat, _) in viewers.items():
        assert as_pairs(got[name]) == expected_stream(record, seat), f"the stream of {name}"


def follow_to_end(
    http: httpx.Client, path: str, headers: dict[str, str], opened: threading.Event | None = None
) -> list[Message]:
    """Read a stream until the game's seed is revealed (its very last event); `opened` is set
    once the first message has come (the stream is being served)."""
    got: list[Message] = []
    with http.stream("GET", path, headers=headers, timeout=30) as response:
        assert response.status_code == 200, response.read()
        for message in parse_sse(response.iter_lines()):
            got.append(message)
            if opened is not None:
                opened.set()
            if message.event == "seed_revealed":
                break
    return got


@pytest.mark.redis
def test_the_live_stream_resumes_after_last_event_id_without_gap_or_repeat(
    live_server: LiveServer, live_api: Api, live_http: httpx.Client
) -> None:
    rng = random.Random(8)
    table = live_api.new_table(2, "towers", (), rng)
    for _ in range(12):
        table.step(rng, whole_turn=False)
    seat0 = table.seats[0].auth
    path = f"{table.path}/stream"
    first = read_stream(live_http, path, until=table.version, headers=seat0)
    assert first[-1].id == table.version
    cut = first[len(first) // 2].id
    assert cut is not None, "no revealed message during play"
    # The connection dropped after `cut`: reconnecting with Last-Event-ID resumes after it.
    for _ in range(6):
        table.step(rng, whole_turn=False)
    resumed = read_stream(
        live_http, path, until=table.version, headers={**seat0, "Last-Event-ID": str(cut)}
    )
    assert resumed[0].reaches(cut + 1)
    by_query = read_stream(live_http, f"{path}?after={cut}", until=table.version, headers=seat0)
    assert as_pairs(by_query) == as_pairs(resumed)
    # Last-Event-ID wins over ?after (the browser's reconnection sends the header).
    both = read_stream(
        live_http,
        f"{path}?after=1",
        until=table.version,
        headers={**seat0, "Last-Event-ID": str(cut)},
    )
    assert as_pairs(both) == as_pairs(resumed)
    whole = read_stream(live_http, path, until=table.version, headers=seat0)
    assert as_pairs([m for m in first if not m.reaches(cut + 1)] + resumed) == as_pairs(whole)
    events = live_api.events(table.game_id, table.seats[0])
    assert as_pairs(whole) == [(e["version"], e["event"]) for e in events["events"]]


@pytest.mark.redis
@pytest.mark.slow
def test_an_idle_live_stream_stays_open_and_brings_the_next_move(
    live_api: Api, live_http: httpx.Client
) -> None:
    """Games by correspondence wait minutes between moves: a stream must outlive a quiet
    spell. Here the game stays quiet for IDLE seconds (longer than the server's 5-second
    XREAD block), then one move is made: it must come on the same connection."""
    idle = 7.0
    rng = random.Random(19)
    table = live_api.new_table(2, "towers", (), rng)
    seat0 = table.seats[0].auth
    got: list[Message] = []
    with live_http.stream(
        "GET", f"{table.path}/stream", headers=seat0, timeout=httpx.Timeout(30, read=idle + 10)
    ) as response:
        assert response.status_code == 200
        messages = parse_sse(response.iter_lines())
        for message in messages:
            got.append(message)
            if message.reaches(table.version):
                break
        time.sleep(idle)
        table.step(rng, whole_turn=False)
        try:
            for message in messages:
                got.append(message)
                if message.reaches(table.version):
                    break
        except httpx.HTTPError as error:
            pytest.fail(f"the stream broke after {idle:.0f} idle seconds: {error!r}")
    assert got[-1].id == table.version


@pytest.mark.redis
def test_the_live_stream_of_a_finished_game_shows_everything_to_everyone(
    live_api: Api, live_http: httpx.Client
) -> None:
    rng = random.Random(13)
    table = live_api.new_table(2, "classic", (), rng)
    play_whole(table, rng)
    record = live_api.record(table.game_id)
    everything = [
        (entry["version"], msgspec.json.decode(entry["data"])) for entry in record["events"]
    ]
    for headers in ({}, table.seats[1].auth):
        got = read_stream(live_http, f"{table.path}/stream", until=table.version, headers=headers)
        assert as_pairs(got) == everything


@pytest.mark.redis
def test_the_live_stream_refuses_an_unknown_game_and_a_wrong_token_at_once(
    live_api: Api, live_http: httpx.Client
) -> None:
    table = live_api.new_table(2, "towers", (), random.Random(1))
    answer = live_http.get("/api/games/gnothere/stream", timeout=5)
    assert answer.status_code == 404 and answer.json()["error"] == "game_not_found"
    answer = live_http.get(
        f"{table.path}/stream", headers={"Authorization": "Bearer nobody"}, timeout=5
    )
    assert answer.status_code == 401 and answer.json()["error"] == "unauthorized"

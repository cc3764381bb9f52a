"""Play by notification: each seat is a separate client that acts only when its own webhook
receiver (a real HTTP server on loopback) gets `turn.started`, with the signature checked.
The game ends, each turn was announced once to the seat whose turn it was and to nobody else,
and every message tells only what its recipient may see."""

from __future__ import annotations

import json
import os
import random
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from litestar.testing import TestClient

from evidence.audit import audit
from outbound import targets
from server.config.settings import Settings
from tests.server.client import Api, Json, Player
from tests.server.live import (
    REDIS_URL,
    LiveServer,
    _patrician,
    build_app,
    delete_prefix,
    unique_prefix,
)
from tests.workers.sink import Sink
from workers import jobs


@pytest.fixture
def sink() -> Iterator[Sink]:
    with Sink() as receiver:
        yield receiver


PUBLIC = "https://play.example"
ALLOW = {"PATRICIAN_WEBHOOK_ALLOW": "127.0.0.1", "PATRICIAN_PUBLIC_URL": PUBLIC}


@pytest.fixture(params=["embedded", pytest.param("redis", marks=pytest.mark.redis)])
def api(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Api]:
    """The embedded server with its workers in its process, or `patrician serve` with two
    `patrician worker` processes on the real Redis."""
    if request.param == "embedded":
        app = build_app(Settings(webhook_allow="127.0.0.1", public_url=PUBLIC))
        with TestClient(app, timeout=30) as client:
            yield Api(client)
        return
    prefix = unique_prefix("webhooks")
    server = LiveServer(prefix, tmp_path, env=ALLOW)
    env = {**os.environ, **ALLOW, "PATRICIAN_PREFIX": prefix}
    command = [*_patrician(), "worker", "--redis-url", REDIS_URL]
    workers = []
    try:
        server.start()
        for n in range(2):
            with (tmp_path / f"worker{n}.log").open("wb") as out:
                workers.append(subprocess.Popen(command, env=env, stdout=out, stderr=out))
        with httpx.Client(base_url=server.url, timeout=30) as client:
            yield Api(client)
    finally:
        for worker in workers:
            worker.terminate()
            worker.wait(timeout=20)
        server.stop()
        delete_prefix(prefix, REDIS_URL)


def _subscribe(api: Api, sink: Sink, player: Player) -> None:
    path = f"/{player.name}"
    body = {"webhook": {"url": sink.url(path)}}
    answer = api.ok(api.request("PUT", "/api/me/notifications", player=player, json=body))
    assert answer["webhook"]["enabled"] and answer["webhook"]["secret"].startswith("whsec_")
    sink.secrets[path] = answer["webhook"]["secret"]
    again = api.ok(api.request("GET", "/api/me/notifications", player=player))
    assert again["webhook"]["secret"] is None, "the secret is shown once"


def _subscribed_game(
    api: Api, sink: Sink, names: tuple[str, ...], entropy: dict[str, str] | None = None
) -> tuple[list[Player], str]:
    """Players of these names, each subscribed to its own path of `sink`, at a game the first
    created and the others joined (each with its `entropy`, if given): the players and the
    game's id."""
    entropy = entropy or {}
    players = [api.create_player(name) for name in names]
    for player in players:
        _subscribe(api, sink, player)
    created = api.create_game(players[0], len(names), entropy=entropy.get(names[0], ""))
    for player in players[1:]:
        api.join(
            player, created["game_id"], created["invite_code"], entropy=entropy.get(player.name, "")
        )
    return players, created["game_id"]


def _play_turn(api: Api, game_id: str, player: Player, rng: random.Random) -> int:
    """Play the whole turn of `player` (every decision while it is theirs); how many."""
    decisions = 0
    board = api.board(game_id, player)
    while board["phase"] == "playing" and board["pending"]["seat"] == board["viewer"]:
        api.ok(api.send(game_id, player, board["version"], [rng.choice(board["legal_commands"])]))
        decisions += 1
        board = api.board(game_id, player)
    return decisions


def test_three_seats_play_a_game_to_the_end_each_acting_only_on_its_own_webhook(
    api: Api, sink: Sink
) -> None:
    rng = random.Random(5)
    players, game_id = _subscribed_game(
        api, sink, ("Ada", "Bea", "Cy"), {"Ada": "a", "Bea": "Bea", "Cy": "Cy"}
    )
    handled = dict.fromkeys((f"/{p.name}" for p in players), 0)
    by_path = {f"/{p.name}": p for p in players}
    ended: set[str] = set()
    turns = 0
    deadline = time.monotonic() + 120
    while len(ended) < 3:
        assert time.monotonic() < deadline, "the game did not end by notification"
        # a delivery signed wrong, or under another id than its notification's, fails here
        # at its first arrival, saying so (not as a game that never ends)
        sink.until(lambda: any(len(sink.received[p]) > n for p, n in handled.items()))
        for path, done in list(handled.items()):
            for message in sink.received[path][done:]:
                handled[path] += 1
                if message["type"] == "turn.started":
                    assert message["asked"]["seat"] == message["seat"]
                    assert _play_turn(api, game_id, by_path[path], rng) >= 1, "it was my turn"
                    turns += 1
                elif message["type"] == "game.ended":
                    ended.add(path)
    assert sink.bad_signatures == 0
    record = api.record(game_id)
    assert all(check.ok for check in audit(json.dumps(record).encode()))
    _check_messages(sink, record, players, turns)
    # Each message carries the receipt of its append, signed by a key the server lists: kept,
    # they all hold up against the record (docs/record.md, "Receipts").
    keys = api.ok(api.request("GET", "/api/keys"))
    receipts = [
        (f"{path}:{k}", json.dumps(message["receipt"]).encode())
        for path, messages in sink.received.items()
        for k, message in enumerate(messages)
    ]
    assert receipts and all(json.loads(raw)["version"] for _n, raw in receipts)
    checks = audit(json.dumps(record).encode(), receipts, json.dumps(keys).encode())
    assert all(check.ok for check in checks), checks[-1]
    assert f"{len(receipts)} receipts" in checks[-2].detail


def _check_messages(sink: Sink, record: Json, players: list[Player], turns: int) -> None:
    """One message per turn, to the seat whose turn began; ids never repeated; a receipt of
    the chain as it stood; and nothing its recipient could not see then."""
    hashes = {event["version"]: event["hash"] for event in record["events"]}
    seats = {p["player_id"]: p["seat"] for p in record["players"]}
    started = 0
    for player in players:
        path = f"/{player.name}"
        messages = sink.received[path]
        assert len(set(sink.ids[path])) == len(messages), "one webhook-id per notification"
        kinds = [m["type"] for m in messages]
        assert kinds[0] == "game.started" and kinds[-1] == "game.ended"
        started += kinds.count("turn.started")
        for message in messages:
            assert message["player_id"] == player.player_id
            assert message["seat"] == seats[player.player_id]
            assert message["head_hash"] == hashes[message["version"]]
            assert message["play_url"] == f"{PUBLIC}/games/{record['game_id']}"
            if message["type"] == "game.ended":
                continue
            kinds_seen = {e["event"]["type"] for e in message["events"]}
            assert not kinds_seen & {"seed_revealed", "draw_pile_stacked", "seed_sealed"}
            dealt = [e for e in message["events"] if e["event"]["type"] == "hand_dealt"]
            assert all(e["event"]["seat"] == message["seat"] for e in dealt), "my hand only"
    assert started == turns, "each turn announced once"


def test_a_notification_whose_jobs_run_twice_is_sent_once(sink: Sink) -> None:
    """As when a follower handles a notice again after a crash: the append's follow-up runs
    a second time (here as the `game_moved` job, which runs the same follow-up), and so does
    a delivery job under the notification's id; nothing more is sent."""
    from workers.context import current
    from workers.job_ids import job_id

    app = build_app(Settings(webhook_allow="127.0.0.1", public_url=PUBLIC))
    with TestClient(app, timeout=30) as client:
        api = Api(client)
        players, _game_id = _subscribed_game(api, sink, ("Ada", "Bea"))
        sink.wait("/Ada", 1)
        sink.wait("/Bea", 1)
        time.sleep(0.5)
        total = sum(len(m) for m in sink.received.values())
        queue = current().queue
        sent = sink.received["/Ada"][0]
        game_id, version = sent["game_id"], sent["version"]
        again = [
            queue.enqueue(
                "workers.jobs.game_moved", game_id, 1, version,
                job_id=job_id(game_id, version) + "-again",
            ),
            queue.enqueue(
                "workers.webhooks.deliver", players[0].player_id, game_id, version,
                sent["type"], sent["seat"], job_id=sink.ids["/Ada"][0],
            ),
        ]  # fmt: skip
        deadline = time.monotonic() + 10
        while any(job.get_status(refresh=True) != "finished" for job in again):
            assert time.monotonic() < deadline, [job.get_status() for job in again]
            time.sleep(0.05)
        assert again[1].return_value() == "sent already"
        assert sum(len(m) for m in sink.received.values()) == total, "nothing sent twice"


def test_a_player_who_resigns_hands_the_seat_to_a_bot_and_the_other_is_told(
    sink: Sink,
) -> None:
    app = build_app(Settings(webhook_allow="127.0.0.1", public_url=PUBLIC))
    with TestClient(app, timeout=30) as client:
        api = Api(client)
        ada, bea, cy = (api.create_player(name) for name in ("Ada", "Bea", "Cy"))
        for player in (ada, bea):
            _subscribe(api, sink, player)
        created = api.create_game(ada, 2)
        game_id = created["game_id"]
        waiting = api.request("POST", f"/api/games/{game_id}/resign", player=ada)
        assert waiting.status_code == 409 and waiting.json()["error"] == "game_not_playing"
        api.join(bea, game_id, created["invite_code"])
        outsider = api.request("POST", f"/api/games/{game_id}/resign", player=cy)
        assert outsider.status_code == 403
        resigned = api.ok(api.request("POST", f"/api/games/{game_id}/resign", player=bea))
        again = api.ok(api.request("POST", f"/api/games/{game_id}/resign", player=bea))
        assert again["seat"] == resigned["seat"] and again["level"] == "greedy"
        _assert_refused_to_act(api, game_id, bea, ada)
        rng, handled, deadline = random.Random(3), 0, time.monotonic() + 120
        told = False
        while True:
            assert time.monotonic() < deadline, "the game did not end"
            messages = sink.wait("/Ada", handled + 1)
            message = messages[handled]
            handled += 1
            if message["type"] == "seat.resigned":
                assert message["about_seat"] == resigned["seat"]
                told = True
            elif message["type"] == "turn.started":
                _play_turn(api, game_id, ada, rng)
            elif message["type"] == "game.ended":
                break
        assert told, "Ada was told that Bea's seat is a bot's now"
        record = api.record(game_id)
        assert all(check.ok for check in audit(json.dumps(record).encode()))
        mine = [c for c in record["commands"] if c["kind"] == "commands"]
        assert {c["by"] for c in mine if c["seat"] == resigned["seat"]} == {"bot:greedy"}
        assert {c["by"] for c in mine if c["seat"] != resigned["seat"]} == {""}


def _assert_refused_to_act(api: Api, game_id: str, player: Player, other: Player) -> None:
    """The player handed their seat over: whatever they send is refused (a command of the
    right shape, one the other player may send, at the version they saw)."""
    for _attempt in range(50):  # the bot may move between the look and the command
        legal = api.board(game_id, other)["legal_commands"]
        seen = api.board(game_id, player)
        if not legal:
            time.sleep(0.05)
            continue
        answer = api.send(game_id, player, seen["version"], [legal[0]])
        if answer.status_code == 409 and answer.json()["error"] == "version_conflict":
            continue
        assert answer.status_code == 403, answer.text
        assert answer.json()["error"] == "seat_handed_over"
        return
    raise AssertionError("the game never stood still long enough")


def _two_seats_subscribed(api: Api, sink: Sink) -> tuple[str, Json, Player, Player]:
    """A started 2-seat game of Ada and Bea, each with a webhook to the sink: the game, its
    board, the player to move and the other."""
    ada, bea = api.create_player("Ada"), api.create_player("Bea")
    for player in (ada, bea):
        _subscribe(api, sink, player)
    created = api.create_game(ada, 2)
    game_id = created["game_id"]
    api.join(bea, game_id, created["invite_code"])
    board = api.board(game_id)
    seats = {api.board(game_id, p)["viewer"]: p for p in (ada, bea)}
    pending = board["pending"]["seat"]
    return game_id, board, seats[pending], seats[1 - pending]


def test_no_turn_is_announced_to_a_player_who_watches_the_game_live(sink: Sink) -> None:
    """An open stream of the game says its player is at the table: their `turn.started` is
    dropped, and their delivery log says so."""
    from tests.server.sse import asgi_stream

    app = build_app(Settings(webhook_allow="127.0.0.1", public_url=PUBLIC))
    with TestClient(app, timeout=30) as client:
        api = Api(client)
        game_id, board, mover, watcher = _two_seats_subscribed(api, sink)
        sink.wait(f"/{watcher.name}", 1)  # game.started
        until = board["version"] + 1
        path = f"/api/games/{game_id}/stream?after={board['version']}"
        headers = watcher.auth
        watching = client.blocking_portal.start_task_soon(asgi_stream, app, path, until, headers)
        time.sleep(0.5)  # the stream is open
        played = _play_turn(api, game_id, mover, random.Random(1))
        assert played >= 1
        streamed = watching.result(timeout=20)
        assert streamed.status == 200
        turn = api.board(game_id)["version"]
        deadline = time.monotonic() + 20
        while True:
            log = api.ok(api.request("GET", "/api/me/deliveries", player=watcher))
            if any(d["status"] == "dropped" and d["version"] == turn for d in log):
                break
            assert time.monotonic() < deadline, f"the turn was not dropped: {log}"
            time.sleep(0.05)
        kinds = [(m["type"], m["version"]) for m in sink.received[f"/{watcher.name}"]]
        assert ("turn.started", turn) not in kinds, "no announcement while watching"


def test_the_table_talk_since_a_players_last_turn_comes_with_their_next_notification(
    sink: Sink,
) -> None:
    app = build_app(Settings(webhook_allow="127.0.0.1", public_url=PUBLIC))
    with TestClient(app, timeout=30) as client:
        api = Api(client)
        game_id, _board, mover, other = _two_seats_subscribed(api, sink)
        talk = f"/api/games/{game_id}/talk"
        api.ok(api.request("POST", talk, player=mover, json={"text": "<i>your move</i>"}), 201)
        _play_turn(api, game_id, mover, random.Random(2))
        turn = next(m for m in sink.wait(f"/{other.name}", 2) if m["type"] == "turn.started")
        assert [(m["name"], m["text"]) for m in turn["talk"]] == [(mover.name, "<i>your move</i>")]


def _retries_within_seconds(monkeypatch: pytest.MonkeyPatch) -> None:
    """A failed delivery is tried again after a second, not after the production intervals."""
    from rq import Retry

    from workers import webhooks

    monkeypatch.setattr(webhooks, "DELIVERY_RETRY", Retry(max=6, interval=[1] * 6))
    monkeypatch.setattr(webhooks, "LATER_RETRY", Retry(max=5, interval=[1] * 5))


NAMED_HOST = "hooks.example"


def _named_host(monkeypatch: pytest.MonkeyPatch, failing: list[bool]) -> None:
    """NAMED_HOST resolves to the loopback sink, but fails once (EAI_AGAIN) while
    `failing[0]` is set; every other name as the system resolves it."""
    looked_up = socket.getaddrinfo

    def name_servers(host: str, port: Any, *args: Any, **kwargs: Any) -> Any:
        if host != NAMED_HOST:
            return looked_up(host, port, *args, **kwargs)
        if failing[0]:
            failing[0] = False
            raise socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", port))]

    monkeypatch.setattr(socket, "getaddrinfo", name_servers)


def _subscribe_by_name(api: Api, sink: Sink, player: Player) -> None:
    """`player`'s webhook: their path of `sink`, reached by NAMED_HOST."""
    url = sink.url(f"/{player.name}").replace("127.0.0.1", NAMED_HOST)
    answer = api.request(
        "PUT", "/api/me/notifications", player=player, json={"webhook": {"url": url}}
    )
    sink.secrets[f"/{player.name}"] = api.ok(answer)["webhook"]["secret"]


def _failed_then_delivered(api: Api, player: Player) -> tuple[list[Json], list[Json], str]:
    """Wait until the notice of `player`'s first failed attempt is delivered (within 20 s):
    the delivery log, its failed attempts and that notice's webhook id."""
    deadline = time.monotonic() + 20
    while True:
        log = api.ok(api.request("GET", "/api/me/deliveries", player=player))
        failed = [d for d in log if d["status"] == "failed"]
        late = str(failed[0]["webhook_id"]) if failed else ""
        if any(d["webhook_id"] == late and d["status"] == "delivered" for d in log):
            return log, failed, late
        assert time.monotonic() < deadline, log
        time.sleep(0.1)


def test_a_failed_first_attempt_is_tried_again_later_under_the_same_webhook_id(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The append's job makes the first attempt itself; the one that fails becomes a delivery
    job that tries again after the first interval, as attempt 2, with the same `webhook-id`."""
    _retries_within_seconds(monkeypatch)
    app = build_app(Settings(webhook_allow="127.0.0.1", public_url=PUBLIC))
    with Sink(status=503) as sink, TestClient(app, timeout=30) as client:
        api = Api(client)
        ada, bea = (api.create_player(name) for name in ("Ada", "Bea"))
        _subscribe(api, sink, ada)
        created = api.create_game(ada, 2)
        api.join(bea, created["game_id"], created["invite_code"])
        failed = sink.wait("/Ada", 1)[0]
        first_id = sink.ids["/Ada"][0]
        sink.status = 200
        deadline = time.monotonic() + 20
        while sink.ids["/Ada"].count(first_id) < 2:
            assert time.monotonic() < deadline, sink.ids["/Ada"]
            time.sleep(0.1)
        again = sink.received["/Ada"][sink.ids["/Ada"].index(first_id, 1)]
        assert again == failed, "the same notification, sent again"
        while True:
            log = api.ok(api.request("GET", "/api/me/deliveries", player=ada))
            mine = [d for d in log if d["webhook_id"] == first_id]
            if any(d["status"] == "delivered" for d in mine):
                break
            assert time.monotonic() < deadline, log
            time.sleep(0.1)
        assert sorted((d["attempt"], d["status"]) for d in mine) == [
            (1, "failed"),
            (2, "delivered"),
        ]


def test_a_temporary_failure_of_the_name_servers_makes_a_notification_late_never_lost(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A webhook host whose name cannot be looked up for a moment (EAI_AGAIN) is not refused
    for good: the attempt fails, says why, and the same notification arrives on the next."""
    _retries_within_seconds(monkeypatch)
    failing = [False]
    _named_host(monkeypatch, failing)
    app = build_app(Settings(webhook_allow="127.0.0.1", public_url=PUBLIC))
    with Sink() as sink, TestClient(app, timeout=30) as client:
        api = Api(client)
        ada, bea = (api.create_player(name) for name in ("Ada", "Bea"))
        _subscribe_by_name(api, sink, ada)
        failing[0] = True  # the name servers fail once, at the first attempt
        created = api.create_game(ada, 2)
        api.join(bea, created["game_id"], created["invite_code"])
        # the notice whose lookup failed (game.started or turn.started) arrives
        log, failed, late = _failed_then_delivered(api, ada)
        attempts = sorted((d["attempt"], d["status"]) for d in log if d["webhook_id"] == late)
        assert attempts == [(1, "failed"), (2, "delivered")]
        assert len(failed) == 1 and sink.ids["/Ada"].count(late) == 1
        assert "hooks.example" in failed[0]["detail"]
        assert "try again later" in failed[0]["detail"]
        assert api.ok(api.request("GET", "/api/me/notifications", player=ada))["webhook"]["enabled"]


def test_a_lookup_that_found_no_free_thread_never_counts_toward_turning_a_webhook_off(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """When every lookup thread of the server is taken (by other players' names that never
    answer), a delivery fails and is tried again, but it is the server's state, not the
    receiver's failing: even with one failure enough to turn a webhook off, it stays on."""
    from outbound import lookups
    from workers import webhooks

    _retries_within_seconds(monkeypatch)
    monkeypatch.setattr(webhooks, "DISABLE_AFTER", 1)
    busy = [False]

    def lookup(resolve: Any, host: str, port: int) -> Any:
        if busy[0]:
            busy[0] = False
            raise lookups.Busy
        return lookups.lookup(resolve, host, port)

    monkeypatch.setattr(targets, "lookup", lookup)
    _named_host(monkeypatch, [False])
    app = build_app(Settings(webhook_allow="127.0.0.1", public_url=PUBLIC))
    with Sink() as sink, TestClient(app, timeout=30) as client:
        api = Api(client)
        ada, bea = (api.create_player(name) for name in ("Ada", "Bea"))
        _subscribe_by_name(api, sink, ada)
        busy[0] = True  # the first attempt finds no lookup thread free
        created = api.create_game(ada, 2)
        api.join(bea, created["game_id"], created["invite_code"])
        _log, failed, _late = _failed_then_delivered(api, ada)
        assert "too many look-ups under way" in failed[0]["detail"]
        settings = api.ok(api.request("GET", "/api/me/notifications", player=ada))
        assert settings["webhook"]["enabled"], settings


def test_a_job_that_runs_after_its_game_moved_on_tells_nobody_anything_again(sink: Sink) -> None:
    """A follow-up job run late (a worker behind, a retry): the game has moved on from its
    append, so it announces no turn that is over and sends no notification a second time,
    whether its append was a move or the join that started the game (R7's bots aside)."""
    rng = random.Random(8)
    app = build_app(Settings(webhook_allow="127.0.0.1", public_url=PUBLIC))
    with TestClient(app, timeout=30) as client:
        api = Api(client)
        players, game_id = _subscribed_game(api, sink, ("Dee", "Eli"), {"Dee": "d", "Eli": "e"})
        for _ in range(2):  # a few turns, each seat playing its own
            for player in players:
                _play_turn(api, game_id, player, rng)
        _quiet(sink)
        before = {path: list(messages) for path, messages in sink.received.items()}
        appends = api.record(game_id)["commands"]
        start = next(a for a in appends if a["kind"] == "join")
        move = next(a for a in appends if a["kind"] == "commands")
        for late in (start, move):
            outcome = jobs.game_moved(game_id, late["first_version"], late["last_version"])
            assert outcome == "moved on"
        _quiet(sink)  # what a late job would have sent has arrived
        assert {path: list(messages) for path, messages in sink.received.items()} == before


def _quiet(sink: Sink, seconds: float = 0.5) -> None:
    """Wait until no message has arrived for `seconds` (at most 30 s)."""
    deadline, count = time.monotonic() + 30, -1
    while count != (count := sum(len(m) for m in sink.received.values())):
        assert time.monotonic() < deadline, "the notifications never stopped"
        time.sleep(seconds)


def _posted(sink: Sink, path: str, document: Json, sent_as: str, signed_for: str) -> int:
    """POST `document` to the sink as a webhook sent under `sent_as`, its signature made for
    `signed_for` with the path's secret; the HTTP status of the answer."""
    from datetime import UTC, datetime

    from standardwebhooks.webhooks import Webhook

    body = json.dumps(document)
    now = datetime.now(UTC)
    headers = {
        "content-type": "application/json",
        "webhook-id": sent_as,
        "webhook-timestamp": str(int(now.timestamp())),
        "webhook-signature": Webhook(sink.secrets[path]).sign(signed_for, now, body),
    }
    return httpx.post(sink.url(path), content=body, headers=headers, timeout=10).status_code


SECRET = "whsec_" + "A" * 32
TURN = {"type": "turn.started", "game_id": "g_1.x", "version": 7, "seat": 1}
TURN_ID = "turn-started-7-g__1_dx-1-webhook"


@pytest.mark.parametrize(
    ("sent_as", "signed_for", "said"),
    [
        (TURN_ID, TURN_ID + "-q", f"sent as webhook-id '{TURN_ID}' but signed for the id "
                                  f"'{TURN_ID}-q'"),
        (TURN_ID + "-q", TURN_ID, f"sent as webhook-id '{TURN_ID}-q' but signed for the id "
                                  f"'{TURN_ID}'"),
        (TURN_ID + "-q", TURN_ID + "-q", f"signed as webhook-id '{TURN_ID}-q', which is not "
                                         f"the notification's id '{TURN_ID}'"),
        ("turn-started-7-g__1_dx-0-webhook", "turn-started-7-g__1_dx-0-webhook",
         "not the notification's id"),
        ("turn-started-7-g_1.x-1-webhook", "turn-started-7-g_1.x-1-webhook",
         "not the notification's id"),
    ],
)  # fmt: skip
def test_a_webhook_signed_or_sent_under_another_id_than_its_notices_fails_at_its_first_arrival(
    sent_as: str, signed_for: str, said: str
) -> None:
    """The receiver of these tests fails the test at once, saying which ids it got, rather
    than leaving the game to wait for a message it would never count; the sender is answered
    400."""
    with Sink() as sink:
        sink.secrets["/Ada"] = SECRET
        assert _posted(sink, "/Ada", TURN, sent_as, signed_for) == 400
        with pytest.raises(AssertionError, match="signed") as failed:
            sink.wait("/Ada", 1, timeout=600)  # fails at once, not after the time-out
    assert said in str(failed.value) and "/Ada" in str(failed.value), failed.value
    assert "of 1 came" not in str(failed.value)


def test_a_webhook_signed_as_its_notice_is_kept_a_reminder_with_its_minutes() -> None:
    reminder = {**TURN, "type": "turn.reminder"}
    with Sink() as sink:
        sink.secrets["/Ada"] = SECRET
        assert _posted(sink, "/Ada", TURN, TURN_ID, TURN_ID) == 200
        reminded = "turn-reminder-7-g__1_dx-1-60m-webhook"
        assert _posted(sink, "/Ada", reminder, reminded, reminded) == 200
        assert sink.wait("/Ada", 2) == [TURN, reminder]
        assert sink.ids["/Ada"] == [TURN_ID, reminded] and sink.bad_signatures == 0

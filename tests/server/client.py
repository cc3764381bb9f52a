"""What the server tests share: an API client that plays whole random games over HTTP, a
verifier of complete game records against the engine, and a detector of secrets (R42).

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

import asyncio
import hashlib
import json
import random
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx
import msgspec

from domain.commands import Command, command_decoder
from domain.decide import decide
from domain.events import (
    Event,
    GameEnded,
    GameStarted,
    HandDealt,
    SeatJoined,
    encoder,
    event_decoder,
)
from domain.evolve import evolve, fold
from domain.gamedata import GameData
from domain.scoring import final_scores
from domain.setup import create_game, deal, join_game, leave_game
from domain.shuffle import commitment
from domain.state import NEW_GAME, State

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

SERVER_ONLY_EVENTS = {"seed_sealed", "draw_pile_stacked", "architetto_cards_set_aside"}


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


def plan_turn(board: Json, first: Json, cards: dict[str, Json], rng: random.Random) -> list[Json]:
    """A whole turn after playing `first`, as a player plans it from the board: a floor per
    crest while floors and room last, the card to take, and `skip` for the optional steps the
    card may open. It may be wrong (a step that does not come); the server says where."""
    card = cards[first["card"]]
    city = next(c for c in board["cities"] if c["name"] == card["city"])
    me = board["players"][board["viewer"]]
    sites = [len(city["sites"][0]), len(city["sites"][1])]
    floors, capacity, supply = city["floors"], city["capacity"], me["supply"]
    plan = [first]
    for _ in range(card["crests"]):
        if supply == 0 or floors >= capacity:
            break
        choices = [0, 1]
        if floors + 1 == capacity and 0 in sites:
            choices = [sites.index(0)]
        site = rng.choice(choices)
        plan.append({"type": "place_floor", "site": site})
        sites[site] += 1
        floors += 1
        supply -= 1
    face_up = {c["name"]: c["face_up"] for c in board["cities"] if c["face_up"] is not None}
    take: list[Json] = []
    if face_up:
        if card["action"] != "take_any_faceup_card" and card["city"] in face_up:
            take = [{"type": "take_card", "city": card["city"]}]
        else:
            take = [{"type": "take_card", "city": rng.choice(sorted(face_up))}]
    move: list[Json] = [{"type": "skip"}] if card["action"] == "move_top_floor" else []
    if board["edition"] == "classic":
        plan += move + take
    else:
        plan += take + move
        if card["star"] and "trade_routes" in board["modules"]:
            plan.append({"type": "skip"})
    return plan


# --- complete records against the engine ------------------------------------------------


def as_json(value: Any) -> Json:
    """A struct as the API sends it (tuples become lists)."""
    return msgspec.json.decode(msgspec.json.encode(value))


def to_command(command: Json) -> Command:
    return command_decoder.decode(json.dumps(command))


def game_data_of(record: Json) -> GameData:
    return msgspec.convert(record["game_data"], GameData)


def record_events(record: Json) -> list[Event]:
    return [event_decoder.decode(entry["data"]) for entry in record["events"]]


def verify_record(record: Json) -> GameEnded:
    """Check a complete record the way docs/record.md tells a verifier to, with the engine:
    the hash chain, the seed and the deal, every command replayed through `domain.decide.play`
    giving the stored events byte for byte, and the result recomputed from the refolded log.
    Returns the recomputed result."""
    assert record["format"] == "patrician-record/1"
    assert record["complete"] is True
    entries = record["events"]
    # 1. The hash chain, versions 1, 2, 3... without a gap.
    previous = bytes(32)
    for version, entry in enumerate(entries, 1):
        assert entry["version"] == version, f"a gap at version {version}"
        previous = hashlib.sha256(
            previous + version.to_bytes(8, "big") + entry["data"].encode()
        ).digest()
        assert entry["hash"] == previous.hex(), f"the chain breaks at version {version}"
    assert record["head"] == {"version": len(entries), "hash": previous.hex()}
    datas = [entry["data"].encode() for entry in entries]
    log = [event_decoder.decode(data) for data in datas]
    # 2. The seed and its commitment; the deal re-derived from it and the entropies.
    fairness = record["fairness"]
    seed = bytes.fromhex(fairness["server_seed"])
    assert commitment(seed) == fairness["seed_commitment"]
    start = next(i for i, event in enumerate(log) if isinstance(event, GameStarted))
    dealt = deal(fold(log[:start]))
    assert log[start : start + len(dealt)] == dealt, "the deal does not follow from the seed"
    # 3. Every append replayed from the setup: create, joins, then each seat's commands.
    data = game_data_of(record)
    state = NEW_GAME
    for batch in record["commands"]:
        first, last = batch["first_version"], batch["last_version"]
        assert first == state.version + 1, f"batch {batch['command_id']} does not follow on"
        if batch["kind"] in ("create", "join"):
            joined = log[first + 1 if batch["kind"] == "create" else first - 1]
            assert isinstance(joined, SeatJoined) and joined.player == batch["player_id"]
        if batch["kind"] == "create":
            decided = create_game(
                edition=record["edition"],
                seats=record["seats"],
                modules=record["modules"],
                game_data=data,
                server_seed=seed,
                player=batch["player_id"],
                entropy=joined.entropy,
                name=joined.name,
            )
        elif batch["kind"] == "join":
            decided = join_game(state, batch["player_id"], joined.entropy, joined.name)
        elif batch["kind"] == "leave":
            decided = leave_game(state, batch["player_id"])
        else:
            decided = []
            replayed = state
            for command in batch["commands"]:
                events, replayed = decide(replayed, batch["seat"], to_command(command))
                decided += events
        encoded = [encoder.encode(event) for event in decided]
        assert encoded == datas[first - 1 : last], (
            f"batch {batch['command_id']} ({batch['kind']}) does not replay to its events"
        )
        for event in log[first - 1 : last]:
            state = evolve(state, event)
    assert state.version == len(log), "events that no command explains"
    # 4. The result, recomputed from the refolded log.
    refolded = fold(log)
    assert refolded == state
    assert refolded.phase == "over"
    assert [(p["player_id"], p["name"]) for p in record["players"]] == list(
        zip(refolded.players, refolded.names, strict=True)
    )
    result = final_scores(refolded)
    assert record["result"] == as_json(result)
    return result


# --- secrets (R42) -----------------------------------------------------------------------


class Secrets:
    """A finished game seen whole (from its complete record): what was secret to whom after
    each version. Secret to a seat (R42, as tests/domain/invariants.py): the draw pile, the
    Architetto's hidden cards, the dealt cards still in another seat's hand, and the seed."""

    def __init__(self, record: Json) -> None:
        self.log = record_events(record)
        self.seed: str = record["fairness"]["server_seed"]
        self.end = next(v for v, e in enumerate(self.log, 1) if isinstance(e, GameEnded))
        self._states: list[State] = []
        self._dealt: list[dict[int, frozenset[str]]] = []
        state, dealt = NEW_GAME, dict[int, frozenset[str]]()
        for event in self.log:
            state = evolve(state, event)
            if isinstance(event, HandDealt):
                dealt = {**dealt, event.seat: frozenset(event.cards)}
            self._states.append(state)
            self._dealt.append(dealt)
        self._cache: dict[tuple[int, int | None], frozenset[str]] = {}

    def cards(self, version: int, seat: int | None) -> frozenset[str]:
        """The cards secret to `seat` (None: a spectator) right after event `version`."""
        key = (version, seat)
        found = self._cache.get(key)
        if found is None:
            if version >= self.end:
                found = frozenset()
            else:
                state, dealt = self._states[version - 1], self._dealt[version - 1]
                secret = set(state.draw) | set(state.hidden)
                for other, hand in enumerate(state.hands):
                    if other != seat:
                        secret.update(c for c in hand if c in dealt.get(other, frozenset()))
                found = frozenset(secret)
            self._cache[key] = found
        return found

    def leaks(self, document: Json, version: int, seat: int | None) -> set[str]:
        """What of `document`, served right after `version`, was secret to `seat`: the
        secret cards named as a JSON string in it (a `game_data` must have been taken out:
        it lists every card) and the seed anywhere in its text."""
        if version >= self.end:
            return set()
        text = msgspec.json.encode(document)
        found = {card for card in self.cards(version, seat) if b'"%s"' % card.encode() in text}
        if self.seed.encode() in text:
            found.add("<the server seed>")
        return found

    def check_events(self, items: Iterable[Json], seat: int | None, served_at: int) -> None:
        """A list of `{version, event}` served at `served_at`: each event checked against
        what was secret after its own version and after the serving one."""
        for item in items:
            version, event = item["version"], item["event"]
            where = f"event {version} ({event['type']}) for seat {seat}"
            if event["type"] == "game_created":  # the card file: every card, no places
                event = {key: value for key, value in event.items() if key != "game_data"}
            assert not self.leaks(event, version, seat), where
            assert not self.leaks(event, served_at, seat), where
            if served_at < self.end:
                assert event["type"] not in SERVER_ONLY_EVENTS, where
                assert event["type"] != "hand_dealt" or event["seat"] == seat, where

    def check_view(self, view: Json, seat: int | None, version: int) -> None:
        where = f"the view of seat {seat} at version {version}"
        assert not self.leaks(view, version, seat), where
        if version < self.end:
            assert view["server_seed"] is None, where
            assert view["hands"] is None and view["draw"] is None, where
            assert view["hidden"] is None, where
            if seat is None:
                assert view["hand"] == [], where

    def check_record(self, record: Json, seat: int | None, served_at: int) -> None:
        where = f"the record for seat {seat} at version {served_at}"
        if served_at < self.end:
            assert record["complete"] is False, where
            assert record["deal"] is None and record["fairness"]["server_seed"] is None, where
        events = [
            {"version": entry["version"], "event": json.loads(entry["data"])}
            for entry in record["events"]
        ]
        self.check_events(events, seat, served_at)
        rest = {key: value for key, value in record.items() if key not in ("events", "game_data")}
        assert not self.leaks(rest, served_at, seat), where

    def check_replay(self, replay: Json, seat: int | None, served_at: int) -> None:
        assert replay["over"] is (served_at >= self.end)
        for step in replay["steps"]:
            self.check_events([step], seat, served_at)
            self.check_view(step["view"], seat, step["version"])


# --- server-sent events ------------------------------------------------------------------


@dataclass(frozen=True)
class Message:
    id: int | None
    """The event's version; None for a `revealed` message, which names no version."""
    event: str
    data: Json

    def reaches(self, version: int) -> bool:
        return self.id is not None and self.id >= version


def parse_sse(lines: Iterable[str]) -> Iterator[Message]:
    """Server-sent messages from the lines of a stream (comments and retries ignored)."""
    fields: dict[str, str] = {}
    for line in lines:
        if line == "":
            if "data" in fields:
                number = int(fields["id"]) if "id" in fields else None
                yield Message(number, fields.get("event", ""), json.loads(fields["data"]))
            fields = {}
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        fields[name] = fields[name] + "\n" + value if name == "data" and name in fields else value


def read_stream(
    client: httpx.Client,
    path: str,
    *,
    until: int,
    headers: dict[str, str] | None = None,
    timeout: float = 10.0,
) -> list[Message]:
    """Read a live server's stream until the message with id `until` (then hang up)."""
    got: list[Message] = []
    with client.stream("GET", path, headers=headers, timeout=timeout) as response:
        if response.status_code != 200:
            response.read()
            raise ApiFailure("the stream was refused", response)
        assert response.headers["content-type"].startswith("text/event-stream")
        for message in parse_sse(response.iter_lines()):
            got.append(message)
            if message.reaches(until):
                break
    return got


@dataclass
class Streamed:
    status: int
    headers: dict[str, str]
    body: bytes
    messages: list[Message]

    def json(self) -> Json:
        return json.loads(self.body)


async def asgi_stream(
    app: Any, path: str, until: int, headers: dict[str, str] | None = None, timeout: float = 10
) -> Streamed:
    """Read an in-process app's stream until the message with id `until`, then disconnect
    (the test clients wait for a whole body, which a stream never ends). Runs on the loop
    that serves the app: `TestClient.blocking_portal.call(asgi_stream, app, path, until)`.
    A refusal (a whole JSON body) comes back as it is."""
    raw_path, _, query = path.partition("?")
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": raw_path,
        "raw_path": raw_path.encode(),
        "root_path": "",
        "query_string": query.encode(),
        "headers": [(b"host", b"testserver")]
        + [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()],
        "client": ("127.0.0.1", 50000),
        "server": ("testserver", 80),
        "state": {},
    }
    done = asyncio.Event()
    got = Streamed(0, {}, b"", [])
    pending = b""
    sent_request = False

    async def receive() -> dict[str, Any]:
        nonlocal sent_request
        if not sent_request:
            sent_request = True
            return {"type": "http.request", "body": b"", "more_body": False}
        await done.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        nonlocal pending
        if message["type"] == "http.response.start":
            got.status = message["status"]
            got.headers = {k.decode().lower(): v.decode() for k, v in message.get("headers", [])}
        elif message["type"] == "http.response.body":
            chunk = message.get("body", b"")
            got.body += chunk
            if got.headers.get("content-type", "").startswith("text/event-stream"):
                pending += chunk.replace(b"\r\n", b"\n")
                *complete, pending = pending.split(b"\n\n")
                for block in complete:
                    got.messages.extend(parse_sse([*block.decode().split("\n"), ""]))
            if not message.get("more_body", False) or (
                got.messages and got.messages[-1].reaches(until)
            ):
                done.set()

    task = asyncio.ensure_future(app(scope, receive, send))
    try:
        await asyncio.wait_for(done.wait(), timeout)
    finally:
        done.set()
        try:
            await asyncio.wait_for(task, 5)
        except (TimeoutError, asyncio.CancelledError):
            task.cancel()
    return got

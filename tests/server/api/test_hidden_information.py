"""Hidden information (R42) across 200 generated games: nothing served before the end shows a
caller a card that is secret to it, nor the server seed.

Secret to a seat: the draw pile, the Architetto's hidden cards, the dealt cards still in
another seat's hand, and the seed (tests/server/client.py `Secrets`, after
tests/domain/invariants.py). The public card file (`game_data`) lists every card and is left
out of the search; everything else is searched for every secret card as a JSON string (the
record's event texts decoded first). Each event is judged against what was secret right after
its own version and after the version it was served at; each view of a replay or `/at/`
against its own version.

Sampling (to keep 200 games near a minute on two workers): the games are played on the
embedded fakeredis through the TestClient, nine turns in ten sent whole. Before the first
decision, and before any later decision with probability 1/SAMPLE_EVERY (mid-turn moments
included; about 2.8 points per game in all), every viewer (each seat, a spectator without a
token, and a player not seated in the game) reads the board and the events after a random
version; two viewers drawn at random read the record and the view at a random version, one
the whole replay and one the stream (up to its last visible event, compared with its event
list). Every answer to every command is judged too. Once a game is over its complete record
is read and every sample judged. Over the 200 games that is about 3,000 boards, 3,000 event
lists, 1,100 records, 1,100 views at a version, 560 replays, 560 streams and 11,700 command
answers, spread over every kind of viewer and game.
"""

from __future__ import annotations

import functools
import random
from dataclasses import dataclass, field

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from tests.server.client import EVERY_OPTION, Api, Json, Player, Table
from tests.server.detector import Secrets
from tests.server.sse import Streamed, asgi_stream

pytestmark = pytest.mark.timeout(180)

GAMES = 200
CHUNKS = 20
SAMPLE_EVERY = 40


@dataclass
class Sample:
    kind: str
    seat: int | None
    served_at: int
    body: Json


@dataclass
class Watch:
    """The answers one game served before its end, to judge once it is over."""

    client: TestClient[Litestar]
    app: Litestar
    outsider: Player
    rng: random.Random
    samples: list[Sample] = field(default_factory=list)
    points: int = 0

    def viewers(self, table: Table) -> list[tuple[int | None, Player | None]]:
        seated: list[tuple[int | None, Player | None]] = list(enumerate(table.seats))
        return [*seated, (None, None), (None, self.outsider)]

    def sample(self, table: Table) -> None:
        if self.points and self.rng.randrange(SAMPLE_EVERY):
            return
        self.points += 1
        api, path, version = table.api, table.path, table.version
        viewers = self.viewers(table)
        for seat, player in viewers:
            board = api.board(table.game_id, player)
            assert board["version"] == version and board["viewer"] == seat
            self.samples.append(Sample("board", seat, version, board))
            events = api.events(table.game_id, player, self.rng.randrange(version + 1))
            self.samples.append(Sample("events", seat, version, events["events"]))
        for seat, player in self.rng.sample(viewers, 2):
            self.samples.append(Sample("record", seat, version, api.record(table.game_id, player)))
            at = self.rng.randrange(1, version + 1)
            view = api.ok(api.request("GET", f"{path}/at/{at}", player=player))
            self.samples.append(Sample("at", seat, at, view))
        seat, player = self.rng.choice(viewers)
        replay = api.ok(api.request("GET", f"{path}/replay", player=player))
        self.samples.append(Sample("replay", seat, version, replay))
        seat, player = self.rng.choice(viewers)
        visible = api.events(table.game_id, player)["events"]
        streamed: Streamed = self.client.blocking_portal.call(
            functools.partial(
                asgi_stream,
                self.app,
                f"{path}/stream",
                visible[-1]["version"],
                player.auth if player else {},
            )
        )
        assert streamed.status == 200
        got = [{"version": m.id, "event": m.data} for m in streamed.messages]
        listed = [{"version": item["version"], "event": item["event"]} for item in visible]
        assert got == listed, "the stream shows what the event list shows (less its words)"
        self.samples.append(Sample("stream", seat, version, got))

    def judge(self, secrets: Secrets, table: Table) -> int:
        for seat, answer in table.answers:
            secrets.check_events(answer["events"], seat, answer["version"])
        for sample in self.samples:
            seat, at = sample.seat, sample.served_at
            match sample.kind:
                case "board" | "at":
                    secrets.check_view(sample.body, seat, at)
                case "events" | "stream":
                    secrets.check_events(sample.body, seat, at)
                case "record":
                    secrets.check_record(sample.body, seat, at)
                case "replay":
                    secrets.check_replay(sample.body, seat, at)
        return len(self.samples)


@pytest.mark.slow
@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_no_answer_before_the_end_shows_a_caller_a_secret_card_or_the_seed(
    client: TestClient[Litestar], app: Litestar, chunk: int
) -> None:
    api = Api(client)
    rng = random.Random(1000 + chunk)
    outsider = api.create_player("outsider")
    judged = 0
    for game in range(GAMES // CHUNKS):
        seats, edition, modules = EVERY_OPTION[(chunk + game) % len(EVERY_OPTION)]
        table = api.new_table(seats, edition, modules, rng)
        watch = Watch(client, app, outsider, rng)
        table.play_to_end(rng, whole_turns=0.9, between=watch.sample)
        record = api.record(table.game_id)
        secrets = Secrets(record)
        assert secrets.end < len(secrets.log), "the seed is revealed after the result"
        judged += watch.judge(secrets, table)
        assert watch.points >= 1
        # After the end the seed is shown to everyone (the searches above could find it).
        assert api.board(table.game_id, outsider)["server_seed"] == secrets.seed
    assert judged > 0


def test_the_detector_finds_a_hidden_card_a_foreign_hand_and_the_seed(api: Api) -> None:
    """The searches above would see a leak: the steps of a finished game's replay show every
    hand and the draw pile; judged as if served during play, each is caught."""
    rng = random.Random(77)
    table = api.new_table(3, "towers", ("trade_routes",), rng)
    table.play_to_end(rng, whole_turns=1.0)
    record = api.record(table.game_id)
    secrets = Secrets(record)
    replay = api.ok(api.request("GET", f"{table.path}/replay"))
    assert replay["over"] is True
    dealt = next(s for s in replay["steps"] if s["event"]["type"] == "hand_dealt")
    with pytest.raises(AssertionError):
        secrets.check_events([dealt], (dealt["event"]["seat"] + 1) % 3, dealt["version"])
    middle = replay["steps"][len(replay["steps"]) // 2]
    assert secrets.leaks(middle["view"], middle["version"], None), "the draw pile is seen"
    with pytest.raises(AssertionError):
        secrets.check_view(middle["view"], 0, middle["version"])
    assert secrets.leaks({"x": record["fairness"]["server_seed"]}, 20, 0) == {"<the server seed>"}
    # Once over, nothing is secret any more.
    assert not secrets.leaks(middle["view"], secrets.end, None)

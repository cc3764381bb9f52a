"""Every append the server accepts is answered with a receipt signed by its key, which a
player keeps: it verifies offline against `GET /api/keys`, names the head of the chain the
finished record must still hold, and is told the same again on a retry (docs/record.md,
"Receipts"). The finished record is sealed by the same key, and what a seat saw at any
version can be asked of a finished game by anyone (`at/{v}?as=S`), never of one in play."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

import msgspec
import pytest
from click.testing import CliRunner
from litestar.testing import TestClient

from evidence.audit import EXIT_CODES, audit, exit_code
from evidence.signatures import receipt_message, verifies
from server.cli.main import main
from server.config.settings import Settings
from tests.server.client import Api, Json, Table
from tests.server.live import build_app
from tests.server.sealing import KEY_FILE, SIGNER, resealed


class Game:
    """A finished two-seat game with every receipt the players were given, in order."""

    def __init__(self, api: Api, rng: random.Random) -> None:
        creator, joiner = api.create_player("Mary"), api.create_player("John")
        created = api.create_game(creator, 2, entropy="m")
        joined = api.join(joiner, created["game_id"], created["invite_code"], "j")
        self.receipts: list[Json] = [created["receipt"], joined["receipt"]]
        self.table: Table = api.table_of(created["game_id"], [creator, joiner])
        self.seen: dict[tuple[int, int], Json] = {}  # (seat, version): that seat's live board
        self.table.play_to_end(rng, whole_turns=0.5, between=self._look)
        self.receipts += [body["receipt"] for _seat, body in self.table.answers]
        self.record = api.record(self.table.game_id)
        self.keys = api.ok(api.request("GET", "/api/keys"))

    def _look(self, table: Table) -> None:
        if table.version % 7 == 0:
            for seat, player in enumerate(table.seats):
                self.seen[seat, table.version] = table.api.board(table.game_id, player)


@pytest.fixture(scope="module")
def client() -> Any:
    with TestClient(build_app(Settings(signing_key_file=str(KEY_FILE))), timeout=30) as client:
        yield client


@pytest.fixture(scope="module")
def game(client: TestClient[Any]) -> Game:
    return Game(Api(client), random.Random(11))


def _verifies(receipt: Json, public_hex: str) -> bool:
    message = receipt_message(
        receipt["game_id"], receipt["version"], receipt["head_hash"], receipt["time"],
        receipt["key_id"],
    )  # fmt: skip
    return verifies(public_hex, receipt["signature"], message)


def _files(tmp_path: Path, game: Game, receipts: list[Json]) -> list[str]:
    (tmp_path / "game.json").write_text(json.dumps(game.record))
    (tmp_path / "keys.json").write_text(json.dumps(game.keys))
    arguments = ["audit", str(tmp_path / "game.json"), "--keys", str(tmp_path / "keys.json")]
    for k, receipt in enumerate(receipts):
        (tmp_path / f"receipt-{k}.json").write_text(json.dumps(receipt))
        arguments += ["--receipt", str(tmp_path / f"receipt-{k}.json")]
    return arguments


def test_every_accepted_append_is_answered_with_a_receipt_of_the_head_the_record_holds(
    game: Game,
) -> None:
    (key,) = game.keys["keys"]
    assert key["key_id"] == SIGNER.key_id and key["retired"] is None
    events = game.record["events"]
    ends = {c["last_version"]: c["time"] for c in game.record["commands"]}
    assert len(game.receipts) == len(game.record["commands"])
    for receipt in game.receipts:
        assert set(receipt) == {"game_id", "version", "head_hash", "time", "key_id", "signature"}
        assert _verifies(receipt, key["public_key"])
        assert receipt["game_id"] == game.record["game_id"]
        assert events[receipt["version"] - 1]["hash"] == receipt["head_hash"]
        assert ends[receipt["version"]] == receipt["time"]
    forged = {**game.receipts[3], "version": game.receipts[3]["version"] + 1}
    assert not _verifies(forged, key["public_key"])


def test_a_command_sent_again_is_answered_with_the_same_receipt(client: TestClient[Any]) -> None:
    api = Api(client)
    table = api.new_table(2, rng=random.Random(2))
    seat = table.pending
    assert seat is not None
    player = table.seats[seat]
    board = api.board(table.game_id, player)
    command = board["legal_commands"][0]
    first = api.ok(api.send(table.game_id, player, board["version"], [command], cid="once"))
    again = api.ok(api.send(table.game_id, player, board["version"], [command], cid="once"))
    assert again["repeated"] is True and again["receipt"] == first["receipt"]


def test_the_finished_record_is_sealed_by_the_servers_key_and_holds_up_with_every_receipt(
    game: Game, tmp_path: Path
) -> None:
    seal = game.record["signature"]
    assert seal["key_id"] == SIGNER.key_id and seal["public_key"] == SIGNER.public.hex()
    outcome = CliRunner().invoke(main, _files(tmp_path, game, game.receipts))
    assert outcome.exit_code == 0, outcome.output
    assert f"ok   receipts: {len(game.receipts)} receipts" in outcome.output
    assert "ok   signature: signed at" in outcome.output and "(the server's)" in outcome.output


def test_a_record_missing_the_head_a_receipt_acknowledged_was_rewritten_and_is_refused(
    game: Game,
) -> None:
    """The server itself (its key) rewrites the last event: every check of the log holds
    up but the receipt of that version, which names it."""
    record = copy.deepcopy(game.record)
    last = game.receipts[-1]
    record["events"][-1]["hash"] = "00" * 32
    record["head"]["hash"] = "00" * 32
    as_document = json.dumps(resealed(record)).encode()
    raw_receipts = [("receipt.json", json.dumps(last).encode())]
    checks = audit(as_document, raw_receipts, json.dumps(game.keys).encode())
    assert not checks[-1].ok and checks[-1].name == "hash chain"  # the chain itself breaks
    cut = copy.deepcopy(game.record)
    cut["events"] = cut["events"][:-2]  # a log cut short, sealed again
    checks = audit(json.dumps(resealed(cut)).encode(), raw_receipts)
    assert not checks[-1].ok


def test_a_receipt_for_another_game_or_with_its_time_changed_is_refused(game: Game) -> None:
    document = json.dumps(game.record).encode()
    keys = json.dumps(game.keys).encode()
    receipt = game.receipts[5]
    moved = {**receipt, "time": "2020-01-01T00:00:00.000Z"}
    checks = audit(document, [("moved.json", json.dumps(moved).encode())], keys)
    assert checks[-1].name == "receipts" and "not the signature" in checks[-1].detail
    resigned = SIGNER.receipt(
        "g-elsewhere", receipt["version"], receipt["head_hash"], receipt["time"]
    )
    elsewhere = json.dumps(msgspec.to_builtins(resigned)).encode()
    checks = audit(document, [("elsewhere.json", elsewhere)], keys)
    assert checks[-1].name == "receipts" and "g-elsewhere" in checks[-1].detail
    assert not checks[-1].ok
    for broken in (b"{}", b"not json", b'{"game_id": 1}'):
        checks = audit(document, [("broken.json", broken)], keys)
        assert checks[-1].name == "receipts" and checks[-1].detail.startswith("broken.json: ")


def test_a_record_signed_by_a_key_the_server_never_used_is_refused_given_its_keys(
    game: Game,
) -> None:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from evidence.signatures import Signer

    other = Signer(Ed25519PrivateKey.generate())
    document = {k: v for k, v in game.record.items() if k != "signature"}
    sealed = {
        **document,
        "signature": msgspec.to_builtins(other.seal(document, document["commands"][-1]["time"])),
    }
    raw = json.dumps(sealed).encode()
    alone = audit(raw)  # without the server's keys: unchanged since signed, not whose
    assert all(c.ok for c in alone) and "give --keys" in alone[1].detail
    checks = audit(raw, keys=json.dumps(game.keys).encode())
    assert checks[-1].name == "signature" and "not one of the server's keys" in checks[-1].detail
    assert [c.name for c in audit(json.dumps(document).encode()) if not c.ok] == ["signature"]


def test_what_a_seat_saw_at_any_version_of_a_finished_game_is_served_to_anyone(
    client: TestClient[Any], game: Game, tmp_path: Path
) -> None:
    assert game.seen
    path = f"/api/games/{game.table.game_id}/at"
    for (seat, version), live in sorted(game.seen.items())[:6]:
        answer = client.get(f"{path}/{version}", params={"as": seat})
        assert answer.status_code == 200
        then = answer.json()
        assert then["hand"] == live["hand"] and then["viewer"] == seat
        assert then["version"] == version
        printed = CliRunner().invoke(
            main, [*_files(tmp_path, game, []), "--as-seat", str(seat), "--at", str(version)]
        )
        assert printed.exit_code == 0, printed.output
        assert json.loads(printed.output.splitlines()[-1])["hand"] == live["hand"]


def test_another_seats_view_of_a_game_in_play_is_refused(client: TestClient[Any]) -> None:
    api = Api(client)
    table = api.new_table(3, rng=random.Random(5))
    path = f"/api/games/{table.game_id}/at/{table.version}"
    refused = client.get(path, params={"as": 1}, headers=table.seats[0].auth)
    assert refused.status_code == 403 and refused.json()["error"] == "seat_view_secret"
    assert client.get(path, params={"as": 1}).status_code == 403
    own = client.get(path, params={"as": 1}, headers=table.seats[1].auth)
    assert own.status_code == 200 and own.json()["hand"]
    assert client.get(path, params={"as": 3}).status_code == 404
    assert client.get(path, params={"as": "x"}).status_code == 400


def test_the_notation_of_a_game_is_served_and_printed_the_same(
    client: TestClient[Any], game: Game, tmp_path: Path
) -> None:
    served = client.get(f"/api/games/{game.table.game_id}/notation")
    assert served.status_code == 200 and served.headers["content-type"].startswith("text/plain")
    (tmp_path / "game.json").write_text(json.dumps(game.record))
    printed = CliRunner().invoke(main, ["notation", str(tmp_path / "game.json")])
    assert printed.exit_code == 0 and printed.output == served.text
    assert served.text.splitlines()[-1].split(".")[0].isdigit()


def test_keygen_writes_a_key_only_its_owner_reads_and_never_over_another(tmp_path: Path) -> None:
    path = tmp_path / "key.pem"
    made = CliRunner().invoke(main, ["keygen", str(path)])
    assert made.exit_code == 0 and "wrote key" in made.output
    assert path.stat().st_mode & 0o777 == 0o600
    again = CliRunner().invoke(main, ["keygen", str(path)])
    assert again.exit_code == 2 and "never written over" in again.output


def test_each_kind_of_failure_has_its_own_exit_code() -> None:
    assert EXIT_CODES["signature"] == 10 and EXIT_CODES["receipts"] == 11
    assert EXIT_CODES["deal"] == 12 and EXIT_CODES["players"] == 7 and EXIT_CODES["keys"] == 13
    assert len(set(EXIT_CODES.values())) == len(EXIT_CODES)
    assert 0 not in EXIT_CODES.values() and 1 not in EXIT_CODES.values()


@pytest.mark.parametrize("name", ["architetto", "five-seats", "classic", "rules-2", "cancelled"])
def test_a_receipt_never_names_the_hash_of_an_event_hidden_from_anyone(name: str) -> None:
    """R42: a receipt is served (to a player, in a webhook) while the game is on, so the head
    it signs must be the hash of an event everyone may see, like every hash served during
    play (docs/record.md, "Secrets and hashes"): every append ends on a public event."""
    from domain.events import event_decoder
    from domain.view import visible

    fixtures = Path(__file__).parents[2] / "fixtures" / "records"
    record = json.loads((fixtures / f"{name}.json").read_text())
    receipts = json.loads((fixtures / f"{name}.receipts.json").read_text())
    assert len(receipts) == len(record["commands"])
    for receipt in receipts:
        event = event_decoder.decode(record["events"][receipt["version"] - 1]["data"])
        assert visible(event, None, over=False), (receipt["version"], type(event).__name__)


def test_the_command_exits_with_the_code_of_a_refused_receipt_or_key_list(tmp_path: Path) -> None:
    fixtures = Path(__file__).parents[2] / "fixtures" / "records"
    record, keys = str(fixtures / "architetto.json"), str(fixtures / "keys.json")
    receipt = json.loads((fixtures / "architetto.receipts.json").read_text())[9]
    receipt["head_hash"] = "00" * 32
    (tmp_path / "receipt.json").write_text(json.dumps(receipt))
    runner = CliRunner()
    refused = runner.invoke(
        main, ["audit", record, "--keys", keys, "--receipt", str(tmp_path / "receipt.json")]
    )
    assert refused.exit_code == EXIT_CODES["receipts"], refused.output
    assert "FAIL receipts: " in refused.output and "Traceback" not in refused.output
    (tmp_path / "keys.json").write_text("[1, 2")
    broken = runner.invoke(main, ["audit", record, "--keys", str(tmp_path / "keys.json")])
    assert broken.exit_code == EXIT_CODES["keys"] and "FAIL keys: --keys" in broken.output
    missing = runner.invoke(main, ["audit", record, "--receipt", str(tmp_path / "nothing.json")])
    assert missing.exit_code == 1 and "nothing.json" in missing.output


def _fixture(name: str) -> tuple[Json, list[Json], bytes]:
    fixtures = Path(__file__).parents[2] / "fixtures" / "records"
    record = json.loads((fixtures / f"{name}.json").read_text())
    receipts = json.loads((fixtures / f"{name}.receipts.json").read_text())
    return record, receipts, (fixtures / "keys.json").read_bytes()


def test_a_record_every_reader_would_not_read_alike_is_refused_as_malformed() -> None:
    record, _receipts, keys = _fixture("cancelled")
    text = json.dumps(record)
    doubled = '{"game_id": "g-shown-first", ' + text[1:]
    checks = audit(doubled.encode(), keys=keys)
    assert checks[-1].name == "shape" and "'game_id' twice" in checks[-1].detail
    huge = copy.deepcopy(record)
    huge["commands"][1]["first_version"] = 2**60
    checks = audit(json.dumps(huge).encode(), keys=keys)
    assert checks[-1].name == "shape" and "2^53" in checks[-1].detail


def test_a_signature_spelled_otherwise_than_the_server_writes_it_is_refused() -> None:
    record, receipts, keys = _fixture("cancelled")
    shouted = copy.deepcopy(record)
    shouted["signature"]["signature"] = shouted["signature"]["signature"].upper()
    assert audit(json.dumps(shouted).encode(), keys=keys)[-1].name == "signature"
    spaced = {**receipts[0], "signature": " " + receipts[0]["signature"]}
    checks = audit(json.dumps(record).encode(), [("r", json.dumps(spaced).encode())], keys)
    assert checks[-1].name == "receipts" and not checks[-1].ok


def test_a_seal_dated_before_the_games_end_is_refused() -> None:
    """A retired key could otherwise seal a game that ended after it was retired by dating
    the seal earlier."""
    record, _receipts, keys = _fixture("architetto")
    document = {k: v for k, v in record.items() if k != "signature"}
    early = SIGNER.seal(document, "2026-01-01T00:00:00.000Z")
    sealed = {**document, "signature": msgspec.to_builtins(early)}
    checks = audit(json.dumps(sealed).encode(), keys=keys)
    assert checks[-1].name == "signature" and "before the game's last append" in checks[-1].detail


def test_a_list_of_keys_that_cannot_be_right_is_refused_with_its_own_code() -> None:
    record, _receipts, keys = _fixture("cancelled")
    listed = json.loads(keys)["keys"][0]
    raw = json.dumps(record).encode()
    for broken, says in (
        ({"keys": [listed, listed]}, "listed twice"),
        ({"keys": [{**listed, "retired": "2026-01-01"}]}, "retired"),
        ({"keys": [{**listed, "algorithm": "RSA"}]}, "algorithm"),
        ({"keys": [{**listed, "key_id": "0" * 16}]}, "key_id"),
        ({"keys": [{**listed, "revoked": True}]}, "revoked"),
    ):
        checks = audit(raw, keys=json.dumps(broken).encode())
        assert checks[-1].name == "keys" and says in checks[-1].detail, checks[-1]
        assert exit_code(checks) == EXIT_CODES["keys"]


def test_what_a_record_says_is_printed_never_obeyed_by_the_terminal(tmp_path: Path) -> None:
    record, _receipts, keys = _fixture("cancelled")
    record["signature"]["key_id"] = "\r\x1b[2Kok   signature: fine\nthe record holds up\x1b[8m"
    (tmp_path / "game.json").write_text(json.dumps(record))
    (tmp_path / "keys.json").write_bytes(keys)
    printed = CliRunner().invoke(
        main, ["audit", str(tmp_path / "game.json"), "--keys", str(tmp_path / "keys.json")]
    )
    assert printed.exit_code == EXIT_CODES["signature"]
    assert "\x1b" not in printed.output and "\r" not in printed.output
    assert printed.output.splitlines()[-1] == "the record does not hold up"
    assert len(printed.output.splitlines()) == 3  # shape, signature, the verdict


def test_a_creation_with_bots_sent_again_is_answered_as_the_first_time(
    client: TestClient[Any],
) -> None:
    api = Api(client)
    creator = api.create_player("Mary")
    body = {"seats": 3, "bots": [{"level": "random"}, {"level": "random"}], "command_id": "b1"}
    first = api.ok(api.request("POST", "/api/games", player=creator, json=body), 201)
    again = api.ok(api.request("POST", "/api/games", player=creator, json=body), 201)
    assert again["repeated"] is True
    assert (again["version"], again["receipt"]) == (first["version"], first["receipt"])

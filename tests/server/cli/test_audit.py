"""`patrician audit` refuses every record that was changed, names what it refused, and never
falls over on a malformed one (docs/record.md).

Every field of a record is either checked against the log or named, in the audit's output,
as metadata the log does not hold (`UNVERIFIED`). The tests change fields one by one (each
mutation the issue found approved, then every leaf of a record in turn) and feed the audit
generated malformed documents: the answer is always a list of checks ending in a named
failure, a distinct exit code, and never a traceback.
"""

from __future__ import annotations

import copy
import json
import random
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from litestar.testing import TestClient

from evidence.audit import EXIT_CODES, UNVERIFIED, audit, exit_code
from server.cli.main import main
from server.config.settings import Settings
from tests.server.client import Api, Json
from tests.server.live import build_app
from tests.server.sealing import KEY_FILE, KEYS, resealed


@pytest.fixture(scope="module")
def records() -> dict[str, Json]:
    """Finished records made by the server: the Architetto's game, a three-seat game with
    trade routes whose table lost a player before it filled, and a cancelled table."""
    with TestClient(build_app(Settings(signing_key_file=str(KEY_FILE))), timeout=30) as client:
        api = Api(client)
        rng = random.Random(4)
        found: dict[str, Json] = {}
        table = api.new_table(2, "towers", (), rng)
        table.play_to_end(rng, whole_turns=0.7)
        found["architetto"] = api.record(table.game_id)
        anna, bert, carl, dora = (api.create_player(n) for n in ("Anna", "Bert", "Carl", "Dora"))
        game = api.create_game(anna, 3, "towers", ("trade_routes",), "a")
        api.join(bert, game["game_id"], game["invite_code"], "b")
        api.ok(client.post(f"/api/games/{game['game_id']}/leave", headers=bert.auth))
        api.join(carl, game["game_id"], game["invite_code"], "c")
        api.join(dora, game["game_id"], game["invite_code"], "d")
        table = api.table_of(game["game_id"], [anna, carl, dora])
        table.play_to_end(rng, whole_turns=0.7)
        found["left"] = api.record(table.game_id)
        game = api.create_game(anna, 4)
        api.join(bert, game["game_id"], game["invite_code"])
        api.ok(client.post(f"/api/games/{game['game_id']}/cancel", headers=anna.auth))
        found["cancelled"] = api.record(game["game_id"])
    return found


def run(record: Json) -> list[Any]:
    """The audit of the record sealed again by the server's key: the checks below the
    signature, as they would meet a record the server itself forged."""
    return audit(json.dumps(resealed(record)).encode(), keys=KEYS)


def failed(record: Json) -> str:
    checks = run(record)
    assert not checks[-1].ok, "the changed record was approved"
    assert all(check.ok for check in checks[:-1])
    return f"{checks[-1].name}: {checks[-1].detail}"


def test_a_record_as_the_server_made_it_holds_up_and_says_what_it_did_not_check(
    records: dict[str, Json],
) -> None:
    for name, record in records.items():
        checks = run(record)
        assert all(check.ok for check in checks), (name, checks)
        assert [c.name for c in checks] == [
            "shape", "signature", "hash chain", "options", "seed", "commands", "players", "deal",
            "result", "receipts", "metadata",
        ]  # fmt: skip
        assert exit_code(checks) == 0
        assert all(field in checks[-1].detail for field in UNVERIFIED)
    assert records["cancelled"]["result"] is None and records["cancelled"]["deal"] is None


Mutation = Callable[[Json], None]


def _swap_a_dealt_card(r: Json) -> None:
    hand = r["deal"]["hands"][0]
    hand[0] = r["deal"]["draw_pile"][-1]


def _swap_seats(r: Json) -> None:
    first, second = r["players"][0], r["players"][1]
    first["seat"], second["seat"] = second["seat"], first["seat"]


def _another_players_id(r: Json) -> None:
    batch = next(b for b in r["commands"] if b["kind"] == "commands")
    batch["player_id"] = next(p["player_id"] for p in r["players"] if p["seat"] != batch["seat"])


MUTATIONS: dict[str, tuple[Mutation, str]] = {
    "a card swapped in deal.hands": (_swap_a_dealt_card, "deal: deal"),
    "deal.architetto_hidden reversed": (
        lambda r: r["deal"]["architetto_hidden"].reverse(),
        "deal: deal",
    ),
    "two players' seats swapped": (_swap_seats, "players: players"),
    "a player renamed": (lambda r: r["players"][1].update(name="Mallory"), "players: players"),
    "a command's player_id set to another player's": (
        _another_players_id,
        "commands: commands[",
    ),
    "the edition changed": (lambda r: r.update(edition="classic"), "options: edition"),
    "the seat count changed": (lambda r: r.update(seats=3), "options: seats"),
    "the modules changed": (lambda r: r.update(modules=["delegates"]), "options: modules"),
    "an entropy changed": (
        lambda r: r["fairness"]["entropies"].__setitem__(0, "x"),
        "players: fairness.entropies",
    ),
    "the result changed": (
        lambda r: r["result"]["winners"].__setitem__(0, 1 - r["result"]["winners"][0]),
        "result: result",
    ),
    "a command's kind changed to create": (
        lambda r: r["commands"][1].update(kind="create"),
        "commands: commands[1].kind",
    ),
    "a command's versions shifted": (
        lambda r: r["commands"][4].update(
            first_version=r["commands"][4]["first_version"] + 1,
            last_version=r["commands"][4]["last_version"] + 1,
        ),
        "commands: commands[4]: versions",
    ),
    "a join given a seat": (
        lambda r: r["commands"][1].update(seat=0),
        "commands: commands[1].seat",
    ),
    "a non-hex seed": (
        lambda r: r["fairness"].update(server_seed="zz" * 32),
        "seed: fairness.server_seed: not a hex",
    ),
    "the head moved": (lambda r: r["head"].update(version=1), "hash chain: head"),
    "an event left out": (lambda r: r["events"].pop(5), "hash chain: events"),
    "an unknown field": (lambda r: r.update(notes="x"), "shape: "),
    "a redacted record": (lambda r: r.update(complete=False), "shape: complete"),
    "no events": (lambda r: r.update(events=[]), "shape: events"),
}


@pytest.mark.parametrize("change", sorted(MUTATIONS))
def test_a_changed_record_is_refused_naming_what_was_changed(
    records: dict[str, Json], change: str
) -> None:
    mutate, named = MUTATIONS[change]
    record = copy.deepcopy(records["architetto"])
    mutate(record)
    assert failed(record).startswith(named), failed(record)
    assert exit_code(run(record)) == EXIT_CODES[named.split(":")[0]]


def test_a_changed_time_command_id_or_game_id_is_caught_by_the_signature_alone(
    records: dict[str, Json],
) -> None:
    record = copy.deepcopy(records["left"])
    record["game_id"] = "g-forged"
    record["commands"][3]["time"] = "1999-01-01T00:00:00.000Z"
    record["commands"][3]["command_id"] = "another"
    unsealed = audit(json.dumps(record).encode(), keys=KEYS)
    assert [c.name for c in unsealed if not c.ok] == ["signature"], unsealed
    assert exit_code(unsealed) == EXIT_CODES["signature"]
    checks = run(record)  # sealed again: the log cannot tell, the metadata check says so
    assert all(check.ok for check in checks)
    assert checks[-1].name == "metadata"
    assert "game_id" in checks[-1].detail and "commands[].time" in checks[-1].detail


def test_a_command_the_rules_refuse_is_told_in_words_with_its_version_and_ruling(
    records: dict[str, Json],
) -> None:
    record = copy.deepcopy(records["architetto"])
    batch = next(
        b for b in record["commands"] if any(c["type"] == "take_card" for c in b["commands"])
    )
    command = next(c for c in batch["commands"] if c["type"] == "take_card")
    cities = [c["name"] for c in record["game_data"]["cities"] if not c["five_player_only"]]
    command["city"] = next(city for city in cities if city != command["city"])
    told = failed(record)
    assert re.match(
        r"commands: version \d+ \(commands\[\d+\], command \d+\): the record says", told
    )
    assert "took the card on" in told and "rules refuse it" in told and "(R1" in told, told


def test_an_event_the_rules_would_not_give_is_told_as_the_record_and_the_rules_tell_it(
    records: dict[str, Json],
) -> None:
    """A log whose chain was recomputed after a card of the deal was changed: the chain
    holds, but re-deciding the deal from the seed gives other cards."""
    record = copy.deepcopy(records["architetto"])
    for entry in record["events"]:
        event = json.loads(entry["data"])
        if event["type"] == "face_up_dealt":
            event["cards"].reverse()
            entry["data"] = json.dumps(event, separators=(",", ":"))
    _rechain(record)
    record["deal"]["face_up"].reverse()
    told = failed(record)
    assert told.startswith("commands: version ") and 'the record says "Face up:' in told, told


def _rechain(record: Json) -> None:
    import hashlib

    previous = bytes(32)
    for entry in record["events"]:
        previous = hashlib.sha256(
            previous + entry["version"].to_bytes(8, "big") + entry["data"].encode()
        ).digest()
        entry["hash"] = previous.hex()
    record["head"]["hash"] = previous.hex()


def _leaves(value: Json, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _leaves(item, (*path, key))
    elif isinstance(value, list) and value:
        for index, item in enumerate(value):
            yield from _leaves(item, (*path, index))
    else:
        yield path


def _changed(value: Any) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, str):
        return value + "x" if value else "x"
    if value is None:
        return 0
    return ["x"]


def _unverified(path: tuple[Any, ...]) -> bool:
    shape = ".".join("[]" if isinstance(p, int) else str(p) for p in path).replace(".[]", "[]")
    return shape in UNVERIFIED


@pytest.mark.parametrize("name", ["architetto", "left", "cancelled"])
def test_every_field_is_checked_or_named_unchecked(records: dict[str, Json], name: str) -> None:
    """Each leaf of the record changed in turn (a sample of the long event and card lists):
    left unsealed, the signature refuses every change; sealed again (the server forging), the
    audit still refuses every change but those to the fields it names as unchecked."""
    original = records[name]
    rng = random.Random(name)
    paths = list(_leaves(original))
    bulky = [p for p in paths if p[0] in ("events", "game_data", "commands")]
    paths = [p for p in paths if p not in bulky] + rng.sample(bulky, min(150, len(bulky)))
    assert len(paths) > 100
    for path in paths:
        record = copy.deepcopy(original)
        where = record
        for key in path[:-1]:
            where = where[key]
        where[path[-1]] = _changed(where[path[-1]])
        unsealed = audit(json.dumps(record).encode(), keys=KEYS)
        assert unsealed[-1].name in ("signature", "shape") and not unsealed[-1].ok, path
        if path[0] == "signature":
            continue
        checks = run(record)
        holds = all(check.ok for check in checks)
        assert holds == _unverified(path), (path, checks[-1])


def test_the_cli_prints_the_checks_and_exits_with_the_failures_code(
    records: dict[str, Json], tmp_path: Any
) -> None:
    path = tmp_path / "game.json"
    path.write_text(json.dumps(records["architetto"]))
    runner = CliRunner()
    held = runner.invoke(main, ["audit", str(path)])
    assert held.exit_code == 0 and held.output.rstrip().endswith("the record holds up")
    as_json = json.loads(runner.invoke(main, ["audit", "--json", str(path)]).output)
    assert as_json["ok"] is True and len(as_json["checks"]) == 11
    path.write_text(json.dumps(resealed({**records["architetto"], "seats": 3})))
    broken = runner.invoke(main, ["audit", str(path)])
    assert broken.exit_code == EXIT_CODES["options"]
    assert "FAIL options: seats" in broken.output and "Traceback" not in broken.output


def _json_values() -> st.SearchStrategy[Any]:
    scalars = st.none() | st.booleans() | st.integers(-3, 2**70) | st.text(max_size=8)
    return st.recursive(
        scalars,
        lambda inner: (
            st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
        ),
        max_leaves=12,
    )


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_a_malformed_record_gets_a_named_reason_and_never_a_traceback(
    records: dict[str, Json], data: st.DataObject
) -> None:
    record = copy.deepcopy(records[data.draw(st.sampled_from(sorted(records)))])
    paths = list(_leaves(record))
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from(paths))
        where = record
        for key in path[:-1]:
            where = where[key] if isinstance(where, (dict, list)) else where
        if isinstance(where, dict | list):
            action = data.draw(st.sampled_from(["replace", "delete"]))
            if action == "delete" and isinstance(where, dict):
                where.pop(path[-1], None)
            elif isinstance(where, dict) or (isinstance(path[-1], int) and path[-1] < len(where)):
                where[path[-1]] = data.draw(_json_values())
    raw = data.draw(st.sampled_from(["json", "truncated", "garbage"]))
    text = json.dumps(record).encode()
    if raw == "truncated":
        text = text[: data.draw(st.integers(0, len(text)))]
    elif raw == "garbage":
        text = data.draw(st.binary(max_size=64))
    checks = audit(text)  # never raises
    assert checks and all(check.detail for check in checks)
    if not checks[-1].ok:
        assert exit_code(checks) != 0


def test_the_audit_runs_where_redis_is_not_installed(
    records: dict[str, Json], tmp_path: Any
) -> None:
    """A verifier needs the rules and the record, not the server's database client."""
    path = tmp_path / "game.json"
    path.write_text(json.dumps(records["left"]))
    program = (
        "import sys; sys.modules['redis'] = None; sys.modules['fakeredis'] = None\n"
        "from evidence.audit import audit, exit_code\n"
        f"checks = audit(open({str(path)!r}, 'rb').read())\n"
        "assert 'redis' not in {m.split('.')[0] for m in sys.modules if sys.modules[m]}\n"
        "raise SystemExit(exit_code(checks))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", program], check=False, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr

"""The tamper corpus: over a thousand single changes of real records (the fixtures under
`tests/fixtures/records/`, as the server served them, with every receipt their players were
given), of every kind of field, and every one is refused with a reason that names what was
changed (docs/record.md, "Verifying a complete record").

Each change is audited twice. As it is, unsealed: the server's signature refuses it and names
the member of the record that changed. Sealed again by the server's key (the server itself
forging), with every receipt: the checks of the log refuse it and name the part (the version,
the command, the field), and what the log does not hold (the time of an append, the game's
id) is refused by the receipts. Only the command ids and `by` are the server's word alone,
checked by the signature (the first audit). Then whole forged games: a game played on from
its middle with other legal commands, chained and sealed anew, audits clean without receipts
and is refused by the receipt of the first version it rewrote.
"""

# ruff: noqa: B023  (each change is made at once, inside its loop: no late binding)
from __future__ import annotations

import copy
import hashlib
import json
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec
import pytest

from domain.decide import decide
from domain.events import event_decoder
from domain.evolve import fold
from domain.legal import legal_commands
from domain.playout import pick
from domain.shapes import stored_bytes
from evidence.audit import audit
from evidence.record import LoggedEvent, RecordCommand, build_record
from store.chain import extend
from tests.server.sealing import resealed

FIXTURES = Path(__file__).parent.parent / "fixtures" / "records"
NAMES = ("architetto", "five-seats", "classic", "rules-2", "cancelled")
KEYS = (FIXTURES / "keys.json").read_bytes()
Json = Any


@dataclass(frozen=True)
class Fixture:
    name: str
    raw: bytes
    record: Json
    receipts: list[Json]

    def given(self, receipts: list[Json] | None = None) -> list[tuple[str, bytes]]:
        return [
            (f"{self.name}.receipt[{k}]", json.dumps(receipt).encode())
            for k, receipt in enumerate(self.receipts if receipts is None else receipts)
        ]


def _fixture(name: str) -> Fixture:
    raw = (FIXTURES / f"{name}.json").read_bytes()
    receipts = json.loads((FIXTURES / f"{name}.receipts.json").read_text())
    return Fixture(name, raw, json.loads(raw), receipts)


FIXTURE = {name: _fixture(name) for name in NAMES}


@dataclass(frozen=True)
class Change:
    """One change of a record: what it is, the record changed, the check that must refuse
    it once sealed again ("*": the first check the change breaks, which depends on what it
    broke) and a text its reason must hold (`check` None: the signature alone can tell, the
    log does not hold it); `receipts` changes the receipts instead."""

    what: str
    record: Json
    check: str | None
    names: str | tuple[str, ...]
    """What the reason must say (any of them, for a tuple)."""
    receipts: list[Json] | None = None


def test_every_fixture_record_verifies_with_its_receipts_as_it_was_served() -> None:
    for fixture in FIXTURE.values():
        checks = audit(fixture.raw, fixture.given(), KEYS)
        assert all(check.ok for check in checks), (fixture.name, checks[-1])
        assert checks[1].name == "signature" and "(the server's)" in checks[1].detail


def _rechain(record: Json, start: int = 0) -> None:
    """Recompute the chain from event `start` on (and the head), as a forger would."""
    events = record["events"]
    previous = bytes(32) if start == 0 else bytes.fromhex(events[start - 1]["hash"])
    for version, entry in enumerate(events[start:], start + 1):
        entry["version"] = version
        previous = hashlib.sha256(
            previous + version.to_bytes(8, "big") + entry["data"].encode()
        ).digest()
        entry["hash"] = previous.hex()
    record["head"] = {"version": len(events), "hash": events[-1]["hash"] if events else ""}


def _flip(text: str, rng: random.Random) -> str:
    """One hex digit of `text` changed."""
    i = rng.randrange(len(text))
    return text[:i] + ("0" if text[i] != "0" else "1") + text[i + 1 :]


def _changes(fixture: Fixture, rng: random.Random) -> Iterator[Change]:
    r = fixture.record
    events, commands = r["events"], r["commands"]
    played = [j for j, c in enumerate(commands) if c["kind"] == "commands"]

    def changed(mutate: Callable[..., object]) -> Json:
        copied = copy.deepcopy(r)
        mutate(copied)
        return copied

    # The log: each event's hash, its bytes (with and without the chain made again), the
    # head; events dropped, duplicated and swapped.
    for i in rng.sample(range(len(events)), min(25, len(events))):
        yield Change(
            f"events[{i}].hash",
            changed(lambda c, i=i: c["events"][i].update(hash=_flip(c["events"][i]["hash"], rng))),
            "hash chain",
            f"version {i + 1}",
        )
        data = events[i]["data"]
        k = rng.randrange(len(data))
        yield Change(
            f"events[{i}].data, one byte",
            changed(lambda c, i=i, k=k: c["events"][i].update(data=data[:k] + "~" + data[k + 1 :])),
            "hash chain",
            f"version {i + 1}",
        )

        def reworded(c: Json, i: int = i) -> None:
            event = json.loads(c["events"][i]["data"])
            key = rng.choice(sorted(k for k in event if k != "type") or ["type"])
            event[key] = _other(event[key])
            c["events"][i]["data"] = json.dumps(event, separators=(",", ":"))
            _rechain(c, i)

        yield Change(f"events[{i}], a field, chain made again", changed(reworded), "*", _at(i))
    for i in rng.sample(range(1, len(events)), min(6, len(events) - 1)):
        yield Change(
            f"events[{i}] dropped",
            changed(lambda c, i=i: c["events"].pop(i)),
            "hash chain",
            f"version {i + 1}",
        )

        def dropped(c: Json, i: int = i) -> None:
            c["events"].pop(i)
            _rechain(c)

        yield Change(f"events[{i}] dropped, chain made again", changed(dropped), "*", _at(i))

        def doubled(c: Json, i: int = i) -> None:
            c["events"].insert(i, copy.deepcopy(c["events"][i]))
            _rechain(c)

        yield Change(f"events[{i}] twice, chain made again", changed(doubled), "*", _at(i + 1))
        if i + 1 < len(events) and events[i]["data"] != events[i + 1]["data"]:

            def swapped(c: Json, i: int = i) -> None:
                c["events"][i], c["events"][i + 1] = c["events"][i + 1], c["events"][i]
                _rechain(c)

            yield Change(f"events[{i}] and [{i + 1}] swapped", changed(swapped), "*", _at(i))
    yield Change(
        "head.version", changed(lambda c: c["head"].update(version=1)), "hash chain", "head"
    )
    # The commands: a command's content, its seat, player, versions, kind and time; commands
    # dropped, duplicated and swapped; the metadata only the signature holds.
    for j in rng.sample(played, min(20, len(played))):
        batch = commands[j]
        for k, command in enumerate(batch["commands"][:3]):
            for key in sorted(set(command) - {"type"}):
                yield Change(
                    f"commands[{j}].commands[{k}].{key}",
                    changed(
                        lambda c, j=j, k=k, key=key: c["commands"][j]["commands"][k].update(
                            {key: _other_command_value(key, command[key])}
                        )
                    ),
                    "commands",
                    "",
                )
        yield Change(
            f"commands[{j}].seat",
            changed(lambda c, j=j: c["commands"][j].update(seat=(batch["seat"] + 1) % r["seats"])),
            "commands",
            f"commands[{j}]",
        )
        yield Change(
            f"commands[{j}].time",
            changed(lambda c, j=j: c["commands"][j].update(time="2020-02-02T02:02:02.000Z")),
            "receipts",
            f"version {batch['last_version']}",
        )
        yield Change(
            f"commands[{j}].last_version",
            changed(lambda c, j=j: c["commands"][j].update(last_version=batch["last_version"] - 1)),
            "commands",
            "commands[",
        )
        yield Change(
            f"commands[{j}] dropped",
            changed(lambda c, j=j: c["commands"].pop(j)),
            "commands",
            "commands[",
        )
        yield Change(
            f"commands[{j}] twice",
            changed(lambda c, j=j: c["commands"].insert(j, copy.deepcopy(c["commands"][j]))),
            "commands",
            "commands[",
        )
        if j + 1 < len(commands):

            def swapped_commands(c: Json, j: int = j) -> None:
                c["commands"][j], c["commands"][j + 1] = c["commands"][j + 1], c["commands"][j]

            yield Change(
                f"commands[{j}] and [{j + 1}] swapped",
                changed(swapped_commands),
                "commands",
                "commands[",
            )
        for key in ("command_id", "by"):
            yield Change(
                f"commands[{j}].{key}",
                changed(lambda c, j=j, key=key: c["commands"][j].update({key: "forged"})),
                None,
                "commands",
            )
    for j, batch in enumerate(commands):
        others = [p["player_id"] for p in r["players"] if p["player_id"] != batch["player_id"]]
        if others:
            yield Change(
                f"commands[{j}].player_id",
                changed(lambda c, j=j, o=others[0]: c["commands"][j].update(player_id=o)),
                "commands",
                f"commands[{j}]",
            )
        yield Change(
            f"commands[{j}].kind",
            changed(
                lambda c, j=j: c["commands"][j].update(
                    kind="leave" if batch["kind"] != "leave" else "join"
                )
            ),
            "commands",
            f"commands[{j}]",
        )
    # The game, its players and its fairness data, the deal and the result.
    yield Change("game_id", changed(lambda c: c.update(game_id="g-forged")), "receipts", "g-forged")
    for field, value in (("edition", "classic" if r["edition"] == "towers" else "towers"),
                         ("seats", r["seats"] % 5 + 2), ("rules_version", 1)):  # fmt: skip
        yield Change(field, changed(lambda c, f=field, v=value: c.update({f: v})), "options", field)
    yield Change(
        "game_data.cities[0].floors",
        changed(lambda c: c["game_data"]["cities"][0].update(floors=11)),
        "options",
        "game_data",
    )
    fairness = r["fairness"]
    yield Change(
        "fairness.seed_commitment",
        changed(
            lambda c: c["fairness"].update(seed_commitment=_flip(fairness["seed_commitment"], rng))
        ),
        "options",
        "fairness.seed_commitment",
    )
    for _ in range(5):
        yield Change(
            "fairness.server_seed",
            changed(
                lambda c: c["fairness"].update(server_seed=_flip(fairness["server_seed"], rng))
            ),
            "seed",
            "fairness.server_seed",
        )
    for e in range(len(fairness["entropies"])):
        yield Change(
            f"fairness.entropies[{e}]",
            changed(lambda c, e=e: c["fairness"]["entropies"].__setitem__(e, "forged")),
            "players",
            "fairness.entropies",
        )
    for p in range(len(r["players"])):
        yield Change(
            f"players[{p}].name",
            changed(lambda c, p=p: c["players"][p].update(name="Mallory")),
            "players",
            "players",
        )
    if r["deal"] is not None:
        deal = r["deal"]
        for part in ("draw_pile", "face_up", "hands", "architetto_hidden"):
            cards = deal[part] if part != "hands" else deal["hands"][0]
            for k in rng.sample(range(len(cards)), min(4, len(cards))):

                def dealt(c: Json, part: str = part, k: int = k) -> None:
                    where = c["deal"][part] if part != "hands" else c["deal"]["hands"][0]
                    where[k] = "BOL-1" if where[k] != "BOL-1" else "FIR-1"

                yield Change(f"deal.{part}[{k}]", changed(dealt), "deal", "deal.")
    if r["result"] is not None:
        for s, score in enumerate(r["result"]["scores"]):
            for key in ("tokens", "portraits", "total", "floors_on_board"):
                yield Change(
                    f"result.scores[{s}].{key}",
                    changed(
                        lambda c, s=s, key=key: c["result"]["scores"][s].update(
                            {key: score[key] + 1}
                        )
                    ),
                    "result",
                    "result.scores",
                )
        yield Change(
            "result.winners",
            changed(
                lambda c: c["result"].update(winners=[(r["result"]["winners"][0] + 1) % r["seats"]])
            ),
            "result",
            "result.winners",
        )
    # The signature itself: only the unsealed audit sees it.
    for key in ("key_id", "public_key", "time", "document_sha256", "signature"):
        yield Change(
            f"signature.{key}",
            changed(
                lambda c, key=key: c["signature"].update({key: _flip(c["signature"][key], rng)})
            ),
            None,
            "signature",
        )
    # The receipts a player kept, changed: each refused, naming the receipt.
    for k in rng.sample(range(len(fixture.receipts)), min(6, len(fixture.receipts))):
        for key in ("version", "head_hash", "time", "signature", "key_id"):
            receipts = copy.deepcopy(fixture.receipts)
            value = receipts[k][key]
            receipts[k][key] = value + 1 if isinstance(value, int) else _flip(value, rng)
            yield Change(f"receipt[{k}].{key}", r, "receipts", f"receipt[{k}]", receipts)


def _at(i: int) -> tuple[str, ...]:
    """What a reason names for a change at event `i` (index) with the chain made again: the
    version where the log first differs, the event, or the append or player it belongs to
    (a change of a `seat_joined` is told as the player it names)."""
    return (f"version {i + 1} ", f"version {i + 1}:", f"events[{i}]", "commands[", "players[")


def _other(value: Any) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, str):
        return value + "x"
    if isinstance(value, list):
        return [*value, value[0]] if value else [1]
    return "x"


def _other_command_value(key: str, value: Any) -> Any:
    if key in ("site", "from_site"):
        return 1 - value
    if key == "side":
        return "bandit" if value == "trader" else "trader"
    if key == "cities":
        return list(reversed(value))
    return (
        {"FIR-3": "SIE-3"}.get(value, "FIR-3")
        if key == "card"
        else ("Siena" if value != "Siena" else "Firenze")
    )


CORPUS = [
    (name, change) for name in NAMES for change in _changes(FIXTURE[name], random.Random(name))
]


def test_the_corpus_holds_over_a_thousand_changes_of_every_kind() -> None:
    assert len(CORPUS) >= 1000, len(CORPUS)
    kinds = {_member(change) for _name, change in CORPUS}
    assert {"events", "commands", "deal", "fairness", "result", "signature", "receipt",
            "players", "game_id", "head", "game_data", "edition"} <= kinds  # fmt: skip


def _member(change: Change) -> str:
    """The member of the record a change is in (`events` for `events[3].data`)."""
    return change.what.split("[")[0].split(".")[0].split(",")[0].split(" ")[0]


@pytest.mark.parametrize("chunk", range(8))
def test_every_change_is_refused_naming_what_was_changed(chunk: int) -> None:
    for name, change in CORPUS[chunk::8]:
        fixture = FIXTURE[name]
        if change.receipts is None:  # as it is: the signature names the member changed
            refused = audit(json.dumps(change.record).encode(), fixture.given(), KEYS)[-1]
            assert not refused.ok and refused.name == "signature", (name, change.what, refused)
            assert _member(change) in refused.detail, (name, change.what, refused)
        if change.check is None:  # the server's word alone: the signature was its check
            continue
        sealed = json.dumps(resealed(change.record)).encode()
        refused = audit(sealed, fixture.given(change.receipts), KEYS)[-1]
        assert not refused.ok, (name, change.what, "approved")
        if change.check != "*":
            assert refused.name == change.check, (name, change.what, refused)
        names = (change.names,) if isinstance(change.names, str) else change.names
        assert any(text in refused.detail for text in names), (name, change.what, refused)


def _played_on(fixture: Fixture, rng: random.Random) -> tuple[Json, int]:
    """The game of the fixture as a forger with the published seed would rewrite it: the same
    up to an append in its middle, then other legal commands, one per append, to the end;
    chained and given a result, as the server would have. Returns the forged record (not
    sealed) and the first version it rewrote."""
    record = fixture.record
    played = [j for j, c in enumerate(record["commands"]) if c["kind"] == "commands"]
    j = played[len(played) // 2]
    first = record["commands"][j]["first_version"]
    kept = record["events"][: first - 1]
    state = fold(event_decoder.decode(entry["data"]) for entry in kept)
    logged = [
        LoggedEvent(e["version"], event_decoder.decode(e["data"]), e["data"].encode(), e["hash"])
        for e in kept
    ]
    appends = [msgspec.convert(c, RecordCommand) for c in record["commands"][:j]]
    seat_of = {p["seat"]: p["player_id"] for p in record["players"]}
    while (pending := state.pending) is not None:
        command = pick(legal_commands(state, pending.seat), rng)
        events, state = decide(state, pending.seat, command)
        datas = [stored_bytes(event, record["rules_version"]) for event in events]
        start = len(logged) + 1
        hashes = extend(logged[-1].hash, start, datas)
        logged += [
            LoggedEvent(start + k, event, data, link)
            for k, (event, data, link) in enumerate(zip(events, datas, hashes, strict=True))
        ]
        appends.append(
            RecordCommand(
                f"forged-{len(appends)}", "commands", seat_of[pending.seat], pending.seat,
                record["commands"][j]["time"], (command,), start, len(logged),
            )
        )  # fmt: skip
    forged = build_record(record["game_id"], state, logged, appends, None)
    return msgspec.to_builtins(forged), first


@pytest.mark.parametrize("name", ["architetto", "five-seats", "rules-2"])
def test_a_whole_game_rewritten_from_its_middle_holds_up_alone_but_not_against_a_receipt(
    name: str,
) -> None:
    """The attack of docs/record.md, "What a verified record proves": the server (its key)
    replays a finished game from its middle with other legal commands. The rewritten game is
    self-consistent, so it audits clean; the first receipt of a rewritten version refuses it,
    naming that version."""
    fixture = FIXTURE[name]
    forged, first = _played_on(fixture, random.Random(name))
    assert forged["head"] != fixture.record["head"]
    sealed = json.dumps(resealed(forged)).encode()
    alone = audit(sealed, keys=KEYS)
    assert all(check.ok for check in alone), alone[-1]
    kept = [r for r in fixture.receipts if r["version"] < first]
    assert all(check.ok for check in audit(sealed, fixture.given(kept), KEYS))
    checks = audit(sealed, fixture.given(), KEYS)
    refused = checks[-1]
    assert refused.name == "receipts" and not refused.ok
    hashes = {e["version"]: e["hash"] for e in forged["events"]}
    rewritten = min(
        r["version"] for r in fixture.receipts if hashes.get(r["version"]) != r["head_hash"]
    )
    assert rewritten >= first
    assert f"version {rewritten}" in refused.detail and "rewritten" in refused.detail, refused
    unsealed = audit(json.dumps(forged).encode(), fixture.given(), KEYS)
    assert unsealed[-1].name == "signature" and not unsealed[-1].ok

"""Complete game records checked against the engine, the way docs/record.md tells a verifier
to: a second reading of the format, independent of `evidence.audit`."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import msgspec

from domain.commands import Command, command_decoder
from domain.decide import decide
from domain.events import (
    CityScored,
    Event,
    GameEnded,
    GameStarted,
    SeatJoined,
    encoder,
    event_decoder,
)
from domain.evolve import evolve, fold
from domain.gamedata import GameData
from domain.scoring import final_scores
from domain.setup import create_game, deal, join_game, leave_game
from domain.shuffle import commitment
from domain.state import NEW_GAME
from tests.server.client import Json


def as_json(value: Any) -> Json:
    """A struct as the API sends it (tuples become lists)."""
    return msgspec.json.decode(msgspec.json.encode(value))


def to_command(command: Json) -> Command:
    return command_decoder.decode(json.dumps(command))


def game_data_of(record: Json) -> GameData:
    return msgspec.convert(record["game_data"], GameData)


def record_events(record: Json) -> list[Event]:
    return [event_decoder.decode(entry["data"]) for entry in record["events"]]


def stored(event: Event, rules_version: int) -> bytes:
    """The stored text of a decided event, as docs/rules-versions.md tells a verifier: the
    current encoding, but in a version-2 game `city_scored` spells `trade_bonus` `bonus`
    (the same place, last)."""
    text = encoder.encode(event)
    if rules_version == 2 and isinstance(event, CityScored):
        return text.replace(b'"trade_bonus":', b'"bonus":')
    return text


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
                rules_version=record["rules_version"],
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
        encoded = [stored(event, record["rules_version"]) for event in decided]
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

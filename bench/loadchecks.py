"""What the load benchmark (bench/load.py) checks of each game once the load is over, from
its record alone: that it finished, that it audits (`evidence.audit`, with every receipt
its players were given), that every command the server acknowledged is in it as it was sent,
and how many notifications its human players were owed.

A module of its own because these are the benchmark's verdicts, apart from the clients that
played the games (bench/loadclients.py, which call them once the load is over) and the
script that prints the figures; the games and the API they read are bench/loadapi.py's.
"""

from __future__ import annotations

import itertools
from collections import Counter
from pathlib import Path
from typing import Any

import msgspec

from bench.loadapi import Api, Game, Refused
from evidence.audit import audit, exit_code

SAMPLES = 2
"""How many games' records and receipts are written out for the real `patrician audit`."""


async def check_games(
    api: Api, games: list[Game], sample_dir: str
) -> tuple[list[str], Counter[str], Counter[str], int]:
    """Every problem found in words; of the finished games, the notifications owed and those
    delivered, by type; and how many receipts the records that audit were checked against."""
    problems: list[str] = []
    expected: Counter[str] = Counter()
    delivered: Counter[str] = Counter()
    keys: bytes = await api.call("GET", "/api/keys", None, raw=True)
    samples = receipts = 0
    Path(sample_dir).mkdir(parents=True, exist_ok=True)
    for game in games:
        if not game.game_id:
            continue
        try:
            raw = await api.call("GET", f"/api/games/{game.game_id}/record", None, raw=True)
        except Refused as refused:
            problems.append(f"{game.game_id}: no record: {refused}")
            continue
        record = msgspec.json.decode(raw)
        found = check_record(game, record, raw, keys)
        problems += found
        if found:  # kept for a look with the run's logs
            (Path(sample_dir) / f"problem-{game.game_id}.json").write_bytes(raw)
        if not found and record.get("complete"):
            receipts += len(game.receipts)
            due = owed(game, record)
            expected += Counter(kind for kind, _, _ in due)
            delivered += Counter(kind for kind, _, _ in game.told)
            told = [f"{game.game_id}: {n} owed, not delivered" for n in due - game.told]
            told += [f"{game.game_id}: {n} delivered, not owed" for n in game.told - due]
            if told:
                (Path(sample_dir) / f"problem-{game.game_id}.json").write_bytes(raw)
            problems += told
            if samples < SAMPLES:
                write_sample(Path(sample_dir), samples, raw, keys, game.receipts)
                samples += 1
    return problems, expected, delivered, receipts


def check_record(game: Game, record: Any, raw: bytes, keys: bytes) -> list[str]:
    name = game.game_id
    if not record.get("complete") or record.get("result") is None:
        return [f"{name}: not finished"]
    receipts = [(f"receipt {number}", r) for number, r in enumerate(game.receipts)]
    checks = audit(raw, receipts, keys)
    if exit_code(checks) != 0:
        failed = next(check for check in checks if not check.ok)
        return [f"{name}: the audit fails at {failed.name}: {failed.detail}"]
    problems = []
    logged = {entry["command_id"]: entry["commands"] for entry in record["commands"]}
    for command_id, commands in game.acknowledged.items():
        if logged.get(command_id) != commands:
            problems.append(f"{name}: acknowledged command {command_id} is not in the record")
    return problems


def owed(game: Game, record: Any) -> set[tuple[str, int, str]]:
    """The notifications the record says the humans were owed (docs/notifications.md), as
    (type, version, player id): a `game.started` and a `game.ended` each, and a
    `turn.started` each time the decision passed to a human's seat from another seat or the
    game began with it (the version of the append that did is the notification's)."""
    humans = {player.player_id for player in game.humans}
    entries = record["commands"]
    first = next(n for n, entry in enumerate(entries) if entry["kind"] == "commands")
    started = entries[first - 1]["last_version"]
    owed = set()
    for previous, entry in itertools.pairwise(entries):
        player = entry["player_id"]
        passed = previous["kind"] != "commands" or player != previous["player_id"]
        if entry["kind"] == "commands" and player in humans and passed:
            owed.add(("turn.started", previous["last_version"], player))
    end = record["head"]["version"]
    for player in humans:
        owed |= {("game.started", started, player), ("game.ended", end, player)}
    return owed


def write_sample(
    directory: Path, number: int, raw: bytes, keys: bytes, receipts: list[bytes]
) -> None:
    """A game's record, the keys and its receipts as files, for `patrician audit`."""
    folder = directory / f"game{number}"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "record.json").write_bytes(raw)
    (folder / "keys.json").write_bytes(keys)
    for index, receipt in enumerate(receipts):
        (folder / f"receipt-{index}.json").write_bytes(receipt)

"""The `patrician` commands about records, keys and the formats others build on: `audit`,
`keygen`, `retire-key`, `notation`, `check-rules` and `schemas`. Apart from `check-rules` and
`retire-key` (which read a Redis) they work offline on files, so that anyone holding a record
can settle a dispute without the server."""

from __future__ import annotations

import unicodedata
from pathlib import Path
from typing import BinaryIO, NoReturn

import click
import msgspec

from domain.schemas import schema_documents
from evidence.audit import audit_result
from server.cli.options import new_key_file


@click.command(name="audit")
@click.argument("record", type=click.Path(path_type=Path))
@click.option(
    "--receipt",
    "receipts",
    multiple=True,
    type=click.Path(path_type=Path),
    help="A receipt the server gave you (a file of its JSON); again for more.",
)
@click.option(
    "--keys",
    type=click.Path(path_type=Path),
    help="The server's keys, as GET /api/keys gives them: the signatures must be theirs.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the checks as JSON, for tools.")
@click.option("--as-seat", type=int, help="With --at: print what this seat saw then.")
@click.option("--at", "at_version", type=int, help="The version of --as-seat.")
def audit_command(
    record: Path,
    receipts: tuple[Path, ...],
    keys: Path | None,
    as_json: bool,
    as_seat: int | None,
    at_version: int | None,
) -> None:
    """Verify a game record offline: its shape, the server's signature, the hash chain, the
    options, the seed, every command re-decided by the game's rules version, the players and
    the deal, the result, and each receipt given.

    With --as-seat S --at N (once the record holds up): the board seat S saw right after
    version N, as JSON, after the checks.

    Exit codes: 0 the record holds up; 2 malformed; 3 hash chain; 4 options; 5 seed;
    6 commands; 7 players; 8 result; 9 a record it could not read to the end;
    10 signature; 11 receipts; 12 deal; 13 a list of keys that cannot be used;
    1 a file that cannot be read, or an --as-seat/--at the game does not have."""
    if (as_seat is None) != (at_version is None):
        _stop("--as-seat and --at go together")
    raw = _read(record, "RECORD")
    given = [(str(path), _read(path, "--receipt")) for path in receipts]
    key_list = _read(keys, "--keys") if keys is not None else None
    result = audit_result(raw, given, key_list)
    if as_json:
        click.echo(msgspec.json.encode(result).decode())
    else:
        for check in result.checks:
            click.echo(printable(f"{'ok  ' if check.ok else 'FAIL'} {check.name}: {check.detail}"))
        click.echo("the record holds up" if result.ok else "the record does not hold up")
    if result.ok and as_seat is not None and at_version is not None:
        _show_seat(raw, as_seat, at_version)
    raise SystemExit(result.exit_code)


def printable(text: str) -> str:
    """`text` with every control or format character written as its escape: what a record
    says is printed, never obeyed by the terminal (no line, colour or erasure of its own)."""
    return "".join(
        char.encode("unicode_escape").decode() if unicodedata.category(char)[0] == "C" else char
        for char in text
    )


def _show_seat(raw: bytes, seat: int, version: int) -> None:
    """What `seat` saw right after `version`, as the server answers `at/{v}?as=S` of a
    finished game (a seat of a game whose seats were drawn, a version it has)."""
    from domain.events import event_decoder
    from domain.evolve import fold
    from evidence.audit import record_decoder
    from projections.replay import seen_at

    record = record_decoder.decode(raw)
    log = [event_decoder.decode(entry.data) for entry in record.events]
    if not fold(log).seat_players or not 0 <= seat < record.seats:
        _stop(f"--as-seat {seat}: not a seat of this game (its seats are drawn at the start)")
    if not 1 <= version <= len(log):
        _stop(f"--at {version}: this game has versions 1-{len(log)}")
    click.echo(msgspec.json.encode(seen_at(log, version, seat)).decode())


def _stop(message: str) -> NoReturn:
    click.echo(f"Error: {message}", err=True)
    raise SystemExit(1)


def _read(path: Path, option: str) -> bytes:
    try:
        return path.read_bytes()
    except OSError as error:
        _stop(f"{option} {path}: {error.strerror or error}")


@click.command(name="keygen")
@click.argument("path", type=click.Path(dir_okay=False, path_type=Path))
def keygen_command(path: Path) -> None:
    """Write a new Ed25519 signing key to PATH (readable by its owner only; never over an
    existing file). Start the server with PATRICIAN_SIGNING_KEY_FILE=PATH: from then on it
    signs with it, and the keys before it are listed as retired (GET /api/keys)."""
    from evidence.signing_keys import write_key_file

    signer = new_key_file(path, write_key_file)
    click.echo(f"wrote key {signer.key_id} to {path} (public key {signer.public.hex()})")


@click.command(name="retire-key")
@click.argument("key_id")
@click.option("--redis-url", envvar="REDIS_URL", required=True, help="The store (or REDIS_URL).")
def retire_key_command(key_id: str, redis_url: str) -> None:
    """Retire the signing key KEY_ID from now on (GET /api/keys says when): after a new key
    file was given to every API process and worker, and the old processes have stopped.
    Records and receipts it signed before stay valid; anything it signs later is refused,
    and a process started with it refuses to start."""
    from evidence.signing_keys import retire_op
    from server.config.redis_clients import store_client
    from server.config.settings import Settings
    from store.client import EventStore
    from store.clock import iso, system_clock

    settings = Settings.from_environment()
    client = store_client(redis_url, cluster=settings.redis_cluster)
    store = EventStore(client, prefix=settings.prefix)
    key = store.run(retire_op(settings.prefix, key_id, iso(system_clock())))
    if key is None:
        raise click.UsageError(f"no key {key_id} is listed")
    click.echo(f"key {key_id} retired at {key.retired}")


@click.command(name="notation")
@click.argument("record", type=click.File("rb"))
def notation_command(record: BinaryIO) -> None:
    """Print a game record's notation, one line per turn (docs/notation.md)."""
    from evidence.audit import record_decoder
    from evidence.notation import write_notation

    try:
        decoded = record_decoder.decode(record.read())
    except (msgspec.DecodeError, RecursionError) as error:
        click.echo(f"not a game record: {error}", err=True)
        raise SystemExit(2) from None
    click.echo(write_notation(decoded), nl=False)


@click.command(name="check-rules")
@click.option("--redis-url", envvar="REDIS_URL", required=True, help="The store (or REDIS_URL).")
@click.option(
    "--sample", type=click.IntRange(min=1), help="Check this many games, drawn at random."
)
@click.option("--seed", default=0, show_default=True, help="The draw of --sample.")
def check_rules_command(redis_url: str, sample: int | None, seed: int) -> None:
    """Before deploying: decide every stored game (or --sample of them) again with this code,
    by each game's own rules version, and report any game whose log it no longer explains
    (a broken chain, an append that no longer gives its stored events byte for byte, a
    snapshot that is not its log). Reads only. Exit code 0: every game checked holds up;
    1: some do not (each is named, with why)."""
    from evidence.rules_check import check_games, chosen
    from server.config.card_data import load_game_data
    from server.config.redis_clients import store_client
    from server.config.settings import Settings
    from store.client import EventStore
    from store.command_path import CommandPath

    settings = Settings.from_environment()
    client = store_client(redis_url, cluster=settings.redis_cluster)
    store = EventStore(
        client, prefix=settings.prefix, shards=settings.shards, archive_dir=settings.archive_dir
    )
    path = CommandPath(store.context, load_game_data(None))
    games = chosen(store, sample, seed)
    found = 0
    for finding in check_games(store, path, games):
        found += 1
        click.echo(f"{finding.game_id}: {finding.reason}")
    click.echo(f"checked {len(games)} games: {found or 'none'} the code no longer explains")
    raise SystemExit(1 if found else 0)


@click.command(name="schemas")
@click.argument(
    "directory", type=click.Path(file_okay=False, path_type=Path), default="docs/schemas"
)
def schemas_command(directory: Path) -> None:
    """Write the JSON Schemas of commands, events, views and card files to DIRECTORY."""
    directory.mkdir(parents=True, exist_ok=True)
    for name, content in schema_documents().items():
        (directory / name).write_bytes(content)
        click.echo(f"wrote {directory / name}")


RECORD_COMMANDS: list[click.Command] = [
    schemas_command,
    audit_command,
    keygen_command,
    notation_command,
    check_rules_command,
    retire_key_command,
]
"""The commands `server.cli.main` adds to `patrician`."""

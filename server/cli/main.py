"""The `patrician` command: simulate games now; serve and audit as they arrive."""

from __future__ import annotations

import random
import sys
from pathlib import Path
from typing import Any

import click

from bots.levels import LEVELS, make
from bots.match import Choice, play_match
from domain.board import EDITIONS, MODULES
from domain.errors import InvalidOptions
from domain.events import StepStarted
from domain.evolve import fold
from domain.gamedata import GameData, GameDataError
from domain.narrate import narrate
from domain.schemas import schema_documents
from domain.setup import check_options
from server.cli.records import RECORD_COMMANDS
from server.cli.simulation import (
    bot_games,
    random_game,
    simulate,
    summarize,
    summarize_levels,
    wilson,
)
from server.config.card_data import load_game_data
from server.transport.serving import SERVERS, serve

_redis_url = click.option(
    "--redis-url",
    envvar="REDIS_URL",
    required=True,
    help="The Redis the games are kept in (or REDIS_URL).",
)
_queue_url = click.option(
    "--queue-url",
    envvar="PATRICIAN_QUEUE_URL",
    default=None,
    help="The plain Redis of the jobs' queue (or PATRICIAN_QUEUE_URL; default: the store's). "
    "Required with a Redis Cluster (redis+cluster://, or PATRICIAN_REDIS_CLUSTER=1).",
)
_card_file = click.option(
    "--card-file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Play with this card file instead of the shipped one.",
)


@click.group()
def main() -> None:
    """Patrician: an event-sourced server for Michael Schacht's tower-building card game."""


for _command in RECORD_COMMANDS:  # audit, keygen, notation, check-rules
    main.add_command(_command)


@main.command(name="simulate")
@click.option("--games", default=100, show_default=True, type=click.IntRange(min=1))
@click.option("--seats", default=4, show_default=True, type=click.IntRange(2, 5))
@click.option("--edition", default="towers", show_default=True, type=click.Choice(EDITIONS))
@click.option("--module", "modules", multiple=True, type=click.Choice(MODULES))
@click.option("--seed", default=None, type=int, help="Seed of the random choices and deals.")
@click.option("--show", is_flag=True, help="Print one game turn by turn.")
@click.option(
    "--bots",
    default=None,
    help="One level per seat, comma-separated (random, greedy, ismcts): games between bots.",
)
@click.option(
    "--ismcts-ms",
    default=None,
    type=click.FloatRange(min=1),
    help="The search's budget per decision in milliseconds (default: 200 iterations).",
)
@_card_file
def simulate_command(
    games: int,
    seats: int,
    edition: str,
    modules: tuple[str, ...],
    seed: int | None,
    show: bool,
    bots: str | None,
    ismcts_ms: float | None,
    card_file: Path | None,
) -> None:
    """Play random legal games, or games between bots, and summarize them (or --show one)."""
    levels = _levels(bots, seats) if bots is not None else None
    if levels is not None:
        seats = len(levels)
    try:
        data = load_game_data(card_file)
        check_options(edition, seats, modules, data)
    except GameDataError as error:
        raise click.ClickException(f"card file refused: {error}") from None
    except InvalidOptions as error:
        option = {"modules": "module"}.get(error.field, error.field)
        raise click.BadParameter(error.message, param_hint=f"--{option}") from None
    if seed is None:
        seed = random.SystemRandom().getrandbits(32)
    if levels is not None:
        options = {"ismcts": _search_budget(ismcts_ms)}
        if show:
            _show_bots(levels, data, edition, modules, seed, options)
        else:
            _bot_summary(levels, data, games, edition, modules, seed, options)
        return
    if show:
        _, log = random_game(random.Random(seed), data, seats, edition, modules)
        board = fold(log[:1]).board
        for event in log:
            line = narrate(board, event)
            if line is not None:
                click.echo(line)
        return
    results = simulate(data, games=games, seats=seats, edition=edition, modules=modules, seed=seed)
    if sys.stderr.isatty():  # progress for a person watching, never in piped output
        with click.progressbar(results, length=games, label="Playing", file=sys.stderr) as bar:
            summary = summarize(iter(bar))
    else:
        summary = summarize(results)
    label = f"{edition}, {seats} seats" + (f", {' + '.join(modules)}" if modules else "")
    plural = "" if summary.games == 1 else "s"
    click.echo(f"{summary.games} random game{plural} ({label}), seed {seed}")
    click.echo(f"  games per second: {summary.games / summary.seconds:,.0f}")
    click.echo(
        f"  length: {summary.turns / summary.games:.1f} turns, "
        f"{summary.events / summary.games:.1f} events per game"
    )
    builders = sorted(summary.totals)
    for builder in builders:
        name = "Architetto" if builder == seats else f"seat {builder}"
        click.echo(
            f"  {name:>10}: mean score {summary.totals[builder] / summary.games:5.1f}, "
            f"wins {summary.wins[builder]}"
        )
    click.echo(f"  shared wins: {summary.shared}")


def _levels(bots: str, seats: int) -> list[str]:
    levels = [level.strip() for level in bots.split(",") if level.strip()]
    unknown = [level for level in levels if level not in LEVELS]
    if unknown:
        raise click.BadParameter(
            f"{unknown[0]!r} is not a level; choose among {', '.join(LEVELS)}", param_hint="--bots"
        )
    if len(levels) == 1:  # one level for every seat
        levels = levels * seats
    if not 2 <= len(levels) <= 5:
        raise click.BadParameter("a game has 2 to 5 seats: name 2 to 5 levels", param_hint="--bots")
    return levels


def _search_budget(milliseconds: float | None) -> dict[str, object]:
    if milliseconds is None:
        return {"iterations": 200}
    import time

    return {"milliseconds": milliseconds, "clock": time.perf_counter}


def _bot_summary(
    levels: list[str],
    data: GameData,
    games: int,
    edition: str,
    modules: tuple[str, ...],
    seed: int,
    options: dict[str, dict[str, object]],
) -> None:
    results = bot_games(
        levels, data, games=games, edition=edition, modules=modules, seed=seed,
        bot_options=options,
    )  # fmt: skip
    if sys.stderr.isatty():
        with click.progressbar(results, length=games, label="Playing", file=sys.stderr) as bar:
            summary = summarize_levels(iter(bar))
    else:
        summary = summarize_levels(results)
    label = f"{edition}, {len(levels)} seats" + (f", {' + '.join(modules)}" if modules else "")
    plural = "" if games == 1 else "s"
    click.echo(f"{games} game{plural} between {', '.join(levels)} ({label}), seed {seed}")
    for level, mine in summary.items():
        low, high = wilson(mine.wins, mine.seats)
        click.echo(
            f"  {level:>10}: wins {mine.wins / mine.seats:6.1%} of its seats "
            f"(95 % interval {low:.1%}-{high:.1%}), mean score {mine.points / mine.seats:5.1f}"
        )


def _show_bots(
    levels: list[str],
    data: GameData,
    edition: str,
    modules: tuple[str, ...],
    seed: int,
    options: dict[str, dict[str, object]],
) -> None:
    """One game, told event by event, each decision under the level that made it."""
    choices: dict[int, Choice] = {}
    bots = [make(level, **options.get(level, {})) for level in levels]
    _, log = play_match(
        bots, data, seed=seed, edition=edition, modules=modules,
        watch=lambda choice: choices.__setitem__(choice.version + 1, choice),
    )  # fmt: skip
    board = fold(log[:1]).board
    for version, event in enumerate(log, 1):
        line = narrate(board, event)
        if line is None:
            continue
        made = choices.get(version)
        if made is not None and isinstance(event, StepStarted) is False:
            line = f"{line}  [{made.level}]"
        elif isinstance(event, StepStarted) and event.step == "play_card":
            line = f"{line[:-3]} ({levels[event.seat]}) --"
        click.echo(line)


@main.command(name="schemas")
@click.argument(
    "directory", type=click.Path(file_okay=False, path_type=Path), default="docs/schemas"
)
def schemas_command(directory: Path) -> None:
    """Write the JSON Schemas of commands, events, views and card files to DIRECTORY."""
    directory.mkdir(parents=True, exist_ok=True)
    for name, content in schema_documents().items():
        (directory / name).write_bytes(content)
        click.echo(f"wrote {directory / name}")


@main.command(name="serve")
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8000, show_default=True, type=int)
@click.option(
    "--redis-url",
    envvar="REDIS_URL",
    default=None,
    help="Redis to keep games in (or REDIS_URL). Without it: an embedded in-process fakeredis.",
)
@click.option("--workers", default=1, show_default=True, type=click.IntRange(min=1))
@click.option(
    "--server",
    envvar="PATRICIAN_SERVER",
    default="uvicorn",
    show_default=True,
    type=click.Choice(SERVERS),
    help="The ASGI server the app runs under (or PATRICIAN_SERVER); bench/http.py compares them.",
)
@_queue_url
@_card_file
def serve_command(
    host: str,
    port: int,
    redis_url: str | None,
    workers: int,
    server: str,
    queue_url: str | None,
    card_file: Path | None,
) -> None:
    """Run the game server (HTTP API, OpenAPI at /schema)."""
    import os

    if redis_url is None and workers > 1:
        raise click.BadParameter(
            "several workers need a shared Redis: an embedded fakeredis lives in one process",
            param_hint="--workers",
        )
    _redis_environment(redis_url, queue_url)
    if card_file is not None:
        load_game_data(card_file)  # refuse a broken card file before starting
        os.environ["PATRICIAN_CARD_FILE"] = str(card_file)
    _settings(queue=True)  # refuse settings that cannot be used (an SMTP URL, say) before starting
    serve(server, host=host, port=port, workers=workers)


@main.command(name="worker")
@_redis_url
@click.option(
    "--claim-idle-seconds",
    envvar="PATRICIAN_CLAIM_IDLE_SECONDS",
    default=30.0,
    show_default=True,
    type=click.FloatRange(min=0.1),
    help="How long a notice read by a dispatcher that died stays pending before this one "
    "takes it over (or PATRICIAN_CLAIM_IDLE_SECONDS).",
)
@click.option(
    "--role",
    envvar="PATRICIAN_WORKER_ROLE",
    default="all",
    show_default=True,
    help="What this process runs: all, jobs (all but the dispatcher) or dispatcher (it "
    "alone); or PATRICIAN_WORKER_ROLE.",
)
@_queue_url
@_card_file
def worker_command(
    redis_url: str,
    claim_idle_seconds: float,
    role: str,
    queue_url: str | None,
    card_file: Path | None,
) -> None:
    """Run the workers against a Redis: the outbox dispatcher, the timers and an RQ worker
    (bot seats, clocks, webhooks, e-mail; the PATRICIAN_ settings of docs/workers.md).
    Any number of them behave as one. (`patrician serve` without a Redis runs its own.)
    A worker started before its Redis waits for it (30 s at most)."""
    import redis

    from server.config.redis_clients import node_url
    from workers.runner import ROLES, run_worker, wait_for_redis
    from workers.smtp import without_password

    if role not in ROLES:
        raise click.BadParameter(f"choose among {', '.join(ROLES)}", param_hint="--role")
    _redis_environment(redis_url, queue_url)
    _settings(queue=True)  # refuse settings that cannot be used before waiting for Redis
    _archive_after()
    client = redis.Redis.from_url(node_url(redis_url))  # a cluster: the node it names
    try:
        wait_for_redis(client)
    except redis.exceptions.RedisError as error:
        url = without_password(redis_url)
        raise click.ClickException(f"the Redis at {url} does not answer: {error}") from None
    finally:
        client.close()
    context = _workers(redis_url, card_file, queue_url)
    run_worker(context, claim_idle_seconds=claim_idle_seconds, role=role)


@main.command(name="rebuild-projections")
@_redis_url
@_queue_url
@_card_file
def rebuild_projections_command(
    redis_url: str, queue_url: str | None, card_file: Path | None
) -> None:
    """Make the projections the workers keep (every player's inbox, `/api/me/games`) again
    from the games' event streams. Safe while the workers run: an append's follow-up writes
    over a rebuilt entry only with a newer version."""
    from workers.inboxes import rebuild_inboxes

    games, players = rebuild_inboxes(_workers(redis_url, card_file, queue_url))
    click.echo(f"rebuilt the inboxes of {players} players from {games} games")


@main.command(name="move-handovers")
@_redis_url
def move_handovers_command(redis_url: str) -> None:
    """Copy the hand-overs kept where the versions before this one kept them into their games'
    slots, then mark the store, so that on a Redis Cluster a player's command asks them no
    more before its append (docs/operations.md, "Upgrading"). Run it once every API line and
    worker runs this version, with the deployment's PATRICIAN_PREFIX and PATRICIAN_SHARDS;
    safe to run again, and while the server runs. Exit code 1, the store not marked, if a
    key could not be moved (each is named)."""
    from server.config.redis_clients import store_client
    from store.client import EventStore
    from store.handovers import move_earlier

    settings = _settings()
    client = store_client(redis_url, cluster=settings.redis_cluster)
    store = EventStore(client, prefix=settings.prefix, shards=settings.shards)
    click.echo(f"prefix {settings.prefix!r}, {settings.shards} shards")
    moved = move_earlier(store.client, store.run, store.keys)
    click.echo(
        f"moved into their games' slots: {moved.handovers} hand-over(s) of {moved.games} game(s)"
    )
    if moved.problems:
        for problem in moved.problems:
            click.echo(problem, err=True)
        click.echo(
            f"{len(moved.problems)} key(s) not moved: the store is not marked, so commands on a "
            "cluster still ask the old place; mend them and run this again",
            err=True,
        )
        raise SystemExit(1)


@main.command(name="archive")
@_redis_url
@click.option(
    "--older-than",
    "older_than",
    type=click.FloatRange(min=0),
    default=None,
    help="Archive the games finished more than this many seconds ago (default: "
    "PATRICIAN_ARCHIVE_AFTER_SECONDS, else 7 days; 0: every finished game).",
)
def archive_command(redis_url: str, older_than: float | None) -> None:
    """Archive finished games now, as the workers do every hour (docs/workers.md,
    "Archiving"): each is packed into one compressed value, verified against its live keys,
    and its live keys removed. Safe while the server and the workers run. Exit code 1 if a
    game could not be archived (each is logged, with why)."""
    from server.config.redis_clients import store_client
    from store.client import EventStore
    from workers.archiving import archive_finished

    settings = _settings()
    older_than = _archive_after() if older_than is None else older_than
    client = store_client(redis_url, cluster=settings.redis_cluster)
    store = EventStore(
        client, prefix=settings.prefix, shards=settings.shards, archive_dir=settings.archive_dir
    )
    done = archive_finished(store, older_than)
    click.echo(f"archived {done['archived']} finished games ({dict(done) or 'none to do'})")
    if done["failed"]:
        raise SystemExit(1)


def _archive_after() -> float:
    """`PATRICIAN_ARCHIVE_AFTER_SECONDS`, or the line that says why it cannot be used."""
    from workers.archiving import archive_after_seconds

    try:
        return archive_after_seconds()
    except ValueError as error:
        raise click.UsageError(str(error)) from None


def _settings(*, queue: bool = False) -> Any:
    """The settings of the environment (`server.app.Settings`); one that cannot be used stops
    the command with a line that says which and why (never a traceback, never a password).
    `queue`: the command needs the jobs' queue (a cluster without a queue URL is refused)."""
    from evidence.signing_keys import KeyFileError, load_signer
    from server.config.redis_clients import RedisSettingsError, check_queue
    from server.config.settings import Settings
    from server.transport.rate_limits import LimitSettingError
    from workers.smtp import SmtpUrlError

    try:
        settings = Settings.from_environment()
        if queue:
            check_queue(settings.redis_cluster, settings.queue_url)
        if settings.signing_key_file:  # a key that cannot be used stops the start, not a request
            load_signer(settings.signing_key_file)
    except (SmtpUrlError, KeyFileError, RedisSettingsError, LimitSettingError) as error:
        raise click.UsageError(str(error)) from None
    return settings


def _redis_environment(redis_url: str | None, queue_url: str | None) -> None:
    """Hand the options' URLs to the settings (`Settings.from_environment`, which the server's
    processes read too)."""
    import os

    if redis_url:
        os.environ["REDIS_URL"] = redis_url
    if queue_url:
        os.environ["PATRICIAN_QUEUE_URL"] = queue_url


def _workers(redis_url: str, card_file: Path | None, queue_url: str | None) -> Any:
    """The workers' context (`workers.context.WorkerContext`) on that Redis (and the queue's,
    if it has one of its own), from the environment's settings."""
    from server.config.redis_clients import worker_clients
    from workers.runner import context_for

    _redis_environment(redis_url, queue_url)
    settings = _settings(queue=True)
    store, queue = worker_clients(
        redis_url, cluster=settings.redis_cluster, queue_url=settings.queue_url
    )
    return context_for(store, load_game_data(card_file), settings.workers(), queue_client=queue)

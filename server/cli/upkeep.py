"""The `patrician` commands that look after a store while it serves: the inboxes made again
from the event streams, the hand-overs of before moved into their games' slots, finished
games archived now; and the Web Push key every process of a deployment shares."""

from __future__ import annotations

from pathlib import Path

import click

from server.cli.options import (
    archive_after,
    card_file_option,
    environment_settings,
    new_key_file,
    queue_url_option,
    redis_url_option,
    worker_context,
)


@click.command(name="rebuild-projections")
@redis_url_option
@queue_url_option
@card_file_option
def rebuild_projections_command(
    redis_url: str, queue_url: str | None, card_file: Path | None
) -> None:
    """Make the projections the workers keep (every player's inbox, `/api/me/games`, the
    ratings and the finished games' turns) again from the games' event streams. Safe while
    the workers run: an append's follow-up writes over a rebuilt entry only with a newer
    version, and rates a game once."""
    from workers.inboxes import rebuild_inboxes
    from workers.ratings import rebuild_ratings
    from workers.reliability import rebuild_game_turns

    context = worker_context(redis_url, card_file, queue_url)
    games, players = rebuild_inboxes(context)
    click.echo(f"rebuilt the inboxes of {players} players from {games} games")
    click.echo(f"rebuilt the ratings from {rebuild_ratings(context)} rated games")
    click.echo(f"rebuilt the turns of {rebuild_game_turns(context)} finished games")


@click.command(name="move-handovers")
@redis_url_option
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

    settings = environment_settings()
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


@click.command(name="archive")
@redis_url_option
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

    settings = environment_settings()
    older_than = archive_after() if older_than is None else older_than
    client = store_client(redis_url, cluster=settings.redis_cluster)
    store = EventStore(
        client, prefix=settings.prefix, shards=settings.shards, archive_dir=settings.archive_dir
    )
    done = archive_finished(store, older_than)
    click.echo(f"archived {done['archived']} finished games ({dict(done) or 'none to do'})")
    if done["failed"]:
        raise SystemExit(1)


@click.command(name="push-keygen")
@click.argument("path", type=click.Path(dir_okay=False, path_type=Path))
def push_keygen_command(path: Path) -> None:
    """Write a new Web Push (VAPID, P-256) key to PATH (readable by its owner only; never over
    an existing file). Give it to every API process and worker as PATRICIAN_PUSH_KEY_FILE=PATH:
    push is on from then on. A new key makes the devices subscribed with the old one get
    nothing until their page is opened again (it subscribes anew)."""
    from outbound.web_push import write_push_key_file

    key = new_key_file(path, write_push_key_file)
    click.echo(f"wrote a push key to {path} (public key {key.public_key})")

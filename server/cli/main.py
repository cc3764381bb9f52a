"""The `patrician` command: every subcommand, gathered from the modules that hold them (run
the server, look after a store, records and keys, simulations)."""

from __future__ import annotations

import click

from server.cli.records import RECORD_COMMANDS
from server.cli.running import serve_command, worker_command
from server.cli.simulate import simulate_command
from server.cli.upkeep import (
    archive_command,
    move_handovers_command,
    push_keygen_command,
    rebuild_projections_command,
)


@click.group()
def main() -> None:
    """Patrician: an event-sourced server for Michael Schacht's tower-building card game."""


for _command in (
    simulate_command,
    serve_command,
    worker_command,
    rebuild_projections_command,
    move_handovers_command,
    archive_command,
    push_keygen_command,
    *RECORD_COMMANDS,  # audit, keygen, notation, check-rules, retire-key, schemas
):
    main.add_command(_command)

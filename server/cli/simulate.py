"""`patrician simulate`: random legal games, or games between levels of bots, played to the
end at scale and summarized, or one of them told turn by turn (the games themselves are
`server.cli.simulation`'s)."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import click

from bots.levels import LEVELS, make
from bots.match import Choice, play_match
from domain.board import EDITIONS, MODULES
from domain.errors import InvalidOptions
from domain.events import StepStarted
from domain.evolve import fold
from domain.gamedata import GameData, GameDataError
from domain.narrate import narrate
from domain.setup import check_options
from server.cli.options import card_file_option
from server.cli.simulation import (
    bot_games,
    random_game,
    simulate,
    summarize,
    summarize_levels,
    wilson,
)
from server.config.card_data import load_game_data


@click.command(name="simulate")
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
@card_file_option
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
    _random_summary(data, games, seats, edition, modules, seed)


def _random_summary(
    data: GameData, games: int, seats: int, edition: str, modules: tuple[str, ...], seed: int
) -> None:
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

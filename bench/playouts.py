"""How fast the rules engine plays and folds, beside baselines measured in the same run.

    .venv/bin/python bench/playouts.py [--games N] [--logs N]

Prints complete random games per second (creation, deal, `legal_commands` at every decision,
`decide` and `evolve` of every event) for plain 4-seat towers, 2 seats with the Architetto and
4 seats with both modules; then fold events per second over recorded logs beside a trivial
fold (one `msgspec.structs.replace` per event). One process, one core.

Targets: >= 500 plain 4-seat games/s; the two others >= 70 % of it; fold >= 20 % of trivial.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable, Sequence

from msgspec.structs import replace

from domain.commands import Command
from domain.events import Event
from domain.evolve import evolve, fold
from domain.gamedata import GameData
from domain.playout import play_out
from domain.setup import new_game
from domain.state import NEW_GAME, State
from server.carddata import load_game_data


def play_games(
    data: GameData, games: int, seats: int, modules: Sequence[str], seed: int
) -> tuple[float, list[list[Event]]]:
    """Play `games` random games; return the seconds taken and the logs."""
    rng = random.Random(seed)
    seeds = [rng.randbytes(32) for _ in range(games)]

    def choose(_: State, legal: Sequence[Command]) -> Command:
        return legal[rng.randrange(len(legal))]

    logs = []
    start = time.perf_counter()
    for server_seed in seeds:
        opening = new_game(
            edition="towers",
            seats=seats,
            modules=modules,
            game_data=data,
            server_seed=server_seed,
        )
        _, rest = play_out(fold(opening), choose)
        logs.append(opening + rest)
    return time.perf_counter() - start, logs


def best_of(runs: int, measure: Callable[[], float]) -> float:
    """The fastest of several runs: the least disturbed by the rest of the machine."""
    return min(measure() for _ in range(runs))


def trivial_fold(log: list[Event]) -> State:
    state = NEW_GAME
    for _ in log:
        state = replace(state, version=state.version + 1)
    return state


def real_fold(log: list[Event]) -> State:
    state = NEW_GAME
    for event in log:
        state = evolve(state, event)
    return state


def fold_rate(logs: list[list[Event]], fold_one: Callable[[list[Event]], State]) -> float:
    events = sum(len(log) for log in logs)

    def once() -> float:
        start = time.perf_counter()
        for log in logs:
            fold_one(log)
        return time.perf_counter() - start

    return events / best_of(5, once)


def verdict(ok: bool) -> str:
    return "OK" if ok else "MISSED"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=1000, help="games per configuration")
    args = parser.parse_args()
    data = load_game_data()
    play_games(data, 50, 4, (), seed=99)  # warm up

    figures = {}
    logs: list[list[Event]] = []
    configurations: tuple[tuple[str, int, tuple[str, ...]], ...] = (
        ("plain 4-seat towers", 4, ()),
        ("2 seats + Architetto", 2, ()),
        ("4 seats + both modules", 4, ("trade_routes", "delegates")),
    )
    for name, seats, modules in configurations:

        def measure(seats: int = seats, modules: tuple[str, ...] = modules) -> float:
            return play_games(data, args.games, seats, modules, 1)[0]

        figures[name] = args.games / best_of(3, measure)
        logs += play_games(data, 200, seats, modules, 2)[1]

    ok = True
    plain = figures["plain 4-seat towers"]
    print(f"complete random games per second (best of 3 runs of {args.games}, one core):")
    met = plain >= 500
    ok &= met
    print(f"  plain 4-seat towers      {plain:8,.0f} games/s   (target >= 500) {verdict(met)}")
    for name in ("2 seats + Architetto", "4 seats + both modules"):
        ratio = figures[name] / plain
        met = ratio >= 0.70
        ok &= met
        print(
            f"  {name:<24} {figures[name]:8,.0f} games/s = {ratio:.2f} of plain "
            f"(target >= 0.70) {verdict(met)}"
        )

    events = sum(len(log) for log in logs)
    folded = fold_rate(logs, real_fold)
    trivial = fold_rate(logs, trivial_fold)
    ratio = folded / trivial
    met = ratio >= 0.20
    ok &= met
    print(f"fold over {len(logs)} recorded logs ({events:,} events, best of 5):")
    print(f"  evolve                   {folded:12,.0f} events/s")
    print(f"  trivial replace          {trivial:12,.0f} events/s")
    print(f"  ratio                    {ratio:12.2f}          (target >= 0.20) {verdict(met)}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

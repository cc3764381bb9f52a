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
from pathlib import Path

# Run as a script, this file's folder comes first on sys.path, and bench/server.py and
# bench/store.py would shadow the packages they measure: take the folder off first.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).parent.resolve()]

from msgspec.structs import replace  # noqa: E402

from domain.events import Event  # noqa: E402
from domain.evolve import evolve, fold  # noqa: E402
from domain.gamedata import GameData  # noqa: E402
from domain.playout import play_out, random_chooser  # noqa: E402
from domain.setup import new_game  # noqa: E402
from domain.state import NEW_GAME, State  # noqa: E402
from server.config.card_data import load_game_data  # noqa: E402


def play_games(
    data: GameData, games: int, seats: int, modules: Sequence[str], seed: int
) -> tuple[float, list[list[Event]]]:
    """Play `games` random games; return the seconds taken and the logs."""
    rng = random.Random(seed)
    seeds = [rng.randbytes(32) for _ in range(games)]

    choose = random_chooser(rng)
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


def fold_rates(logs: list[list[Event]], *folds: Callable[[list[Event]], State]) -> list[float]:
    """Events per second of each fold over all logs: the best of 7 rounds, the folds taking
    turns in each round, so that a slow moment of the machine does not fall on one alone."""
    events = sum(len(log) for log in logs)
    best = [float("inf")] * len(folds)
    for _ in range(7):
        for index, fold_one in enumerate(folds):
            start = time.perf_counter()
            for log in logs:
                fold_one(log)
            best[index] = min(best[index], time.perf_counter() - start)
    return [events / seconds for seconds in best]


def verdict(ok: bool) -> str:
    return "OK" if ok else "MISSED"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=500, help="games per configuration")
    args = parser.parse_args()
    data = load_game_data()
    play_games(data, 50, 4, (), seed=99)  # warm up

    configurations: tuple[tuple[str, int, tuple[str, ...]], ...] = (
        ("plain 4-seat towers", 4, ()),
        ("2 seats + Architetto", 2, ()),
        ("4 seats + both modules", 4, ("trade_routes", "delegates")),
    )
    # Best of 5 rounds, the configurations taking turns in each round (the machine's speed
    # drifts; taking turns keeps a slow moment from falling on one configuration alone).
    best = dict.fromkeys((name for name, _, _ in configurations), float("inf"))
    for _ in range(5):
        for name, seats, modules in configurations:
            seconds = play_games(data, args.games, seats, modules, 1)[0]
            best[name] = min(best[name], seconds)
    figures = {name: args.games / seconds for name, seconds in best.items()}
    logs: list[list[Event]] = []
    for _, seats, modules in configurations:
        logs += play_games(data, 200, seats, modules, 2)[1]

    ok = True
    plain = figures["plain 4-seat towers"]
    print(f"complete random games per second (best of 5 rounds of {args.games}, one core):")
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
    folded, trivial = fold_rates(logs, real_fold, trivial_fold)
    ratio = folded / trivial
    met = ratio >= 0.20
    ok &= met
    print(f"fold over {len(logs)} recorded logs ({events:,} events, best of 7, alternating):")
    print(f"  evolve                   {folded:12,.0f} events/s")
    print(f"  trivial replace          {trivial:12,.0f} events/s")
    print(f"  ratio                    {ratio:12.2f}          (target >= 0.20) {verdict(met)}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

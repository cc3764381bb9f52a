"""How strong and how fast the bots are, in games between levels on both cores.

    .venv/bin/python bench/bots.py [--greedy-games 400] [--duel-games 200] [--four-games 100]

- greedy against three random bots, 4 seats (towers), the greedy bot's seat taken in turn:
  greedy wins at least 90 % of the games;
- ismcts at 100 ms per decision against greedy, 2 seats towers (the Architetto plays), the
  seats alternated: ismcts finishes ahead of greedy in at least 60 % of the games, the lower
  bound of the 95 % interval above 50 %;
- one ismcts against three greedy, 4 seats: ismcts wins more than its fair share (25 %);
- greedy at most 2 ms per decision (median); ismcts iterations per second at 2 and 5 seats.

Every figure is printed with its 95 % (Wilson) interval; the target is met or MISSED.
"""

from __future__ import annotations

import argparse
import multiprocessing
import random
import statistics
import sys
import time
from pathlib import Path

sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).parent.resolve()]

from bots.levels import make  # noqa: E402
from bots.match import play_match  # noqa: E402
from bots.seen import seen_by  # noqa: E402
from domain.decide import decide  # noqa: E402
from domain.evolve import fold  # noqa: E402
from domain.legal import legal_commands  # noqa: E402
from domain.playout import pick  # noqa: E402
from domain.setup import new_game  # noqa: E402
from server.cli.simulation import wilson  # noqa: E402
from server.config.card_data import load_game_data  # noqa: E402

THINK_MS = 100.0


def _game(job: tuple[str, int]) -> tuple[float, float]:
    """One game of a series: (the share of a win of the bot under test, 1.0 if it finished
    ahead of the seat(s) it was measured against else 0.0)."""
    series, number = job
    data = load_game_data()
    seats = 2 if series == "duel" else 4
    mine = number % seats
    tested, against = {"greedy": ("greedy", "random"), "duel": ("ismcts", "greedy"),
                       "four": ("ismcts", "greedy")}[series]  # fmt: skip
    bots = [_make(tested) if seat == mine else _make(against) for seat in range(seats)]
    state, _ = play_match(bots, data, seed=1_000_000 * len(series) + number)
    assert state.result is not None
    winners = state.result.winners
    scores = {score.seat: score for score in state.result.scores}

    def rank(seat: int) -> tuple[int, int]:  # R37: the score, then the fewest floors
        return (scores[seat].total, -scores[seat].floors_on_board)

    ahead = all(rank(mine) > rank(seat) for seat in range(seats) if seat != mine)
    return (1 / len(winners) if mine in winners else 0.0), float(ahead)


def _make(level: str):  # type: ignore[no-untyped-def]
    if level == "ismcts":
        return make("ismcts", milliseconds=THINK_MS, clock=time.perf_counter)
    return make(level)


def _series(pool: multiprocessing.pool.Pool, series: str, games: int) -> list[tuple[float, float]]:
    return pool.map(_game, [(series, number) for number in range(games)])


def _report(label: str, hits: float, games: int, target: float, *, above: bool = False) -> bool:
    low, high = wilson(hits, games)
    rate = hits / games
    ok = rate > target if above else rate >= target
    if target == 0.60:
        ok = ok and low > 0.50
    verdict = "OK" if ok else "MISSED"
    sign = ">" if above else ">="
    print(f"  {label}: {rate:.1%} of {games} (95 % {low:.1%}-{high:.1%}) "
          f"(target {sign} {target:.0%}) {verdict}", flush=True)  # fmt: skip
    return ok


def _greedy_ms(games: int = 12) -> float:
    data = load_game_data()
    bot, times = make("greedy"), []
    rng = random.Random(5)
    for number in range(games):
        log = new_game(edition="towers", seats=4, modules=(), game_data=data,
                       server_seed=rng.randbytes(32))  # fmt: skip
        state = fold(log)
        while (pending := state.pending) is not None:
            if pending.seat == 0:
                seen = seen_by(state, log, 0)
                start = time.perf_counter()
                command = bot.choose(seen, random.Random(number))
                times.append(time.perf_counter() - start)
            else:
                command = pick(legal_commands(state, pending.seat), rng)
            events, state = decide(state, pending.seat, command)
            log += events
    return statistics.median(times) * 1000


def _iterations_per_second(seats: int) -> float:
    data = load_game_data()
    rng = random.Random(seats)
    log = new_game(edition="towers", seats=seats, modules=(), game_data=data,
                   server_seed=rng.randbytes(32))  # fmt: skip
    state = fold(log)
    moves = 0
    while (pending := state.pending) is not None:  # into the game, to a decision with a choice
        legal = legal_commands(state, pending.seat)
        if moves >= 8 * seats and len(legal) > 1:
            break
        events, state = decide(state, pending.seat, pick(legal, rng))
        log += events
        moves += 1
    assert pending is not None
    seen = seen_by(state, log, pending.seat)
    bot = make("ismcts", milliseconds=1000, clock=time.perf_counter)
    bot.choose(seen, random.Random(1))
    return float(bot.last_iterations)  # type: ignore[attr-defined]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--greedy-games", type=int, default=400)
    parser.add_argument("--duel-games", type=int, default=200)
    parser.add_argument("--four-games", type=int, default=100)
    args = parser.parse_args()
    met = []
    started = time.perf_counter()
    with multiprocessing.Pool(2) as pool:
        print("greedy against three random bots, 4 seats:")
        greedy = _series(pool, "greedy", args.greedy_games)
        met.append(_report("greedy wins", sum(w for w, _ in greedy), len(greedy), 0.90))
        print(f"ismcts ({THINK_MS:.0f} ms a decision) against greedy, 2 seats with the Architetto:")
        duel = _series(pool, "duel", args.duel_games)
        met.append(_report("ismcts ahead of greedy", sum(a for _, a in duel), len(duel), 0.60))
        print(f"one ismcts ({THINK_MS:.0f} ms) against three greedy, 4 seats:")
        four = _series(pool, "four", args.four_games)
        met.append(_report("ismcts wins", sum(w for w, _ in four), len(four), 0.25, above=True))
    median = _greedy_ms()
    ok = median <= 2.0
    met.append(ok)
    print(f"greedy: {median:.2f} ms a decision, median (target <= 2 ms) {'OK' if ok else 'MISSED'}")
    for seats in (2, 5):
        print(f"ismcts at {seats} seats: {_iterations_per_second(seats):,.0f} iterations/s")
    print(f"{sum(met)} of {len(met)} targets met in {time.perf_counter() - started:.0f} s")
    return 0 if all(met) else 1


if __name__ == "__main__":
    raise SystemExit(main())

"""How long a finished game's analysis takes, how steady its estimates are, and whether what it
says means something (issue: every decision analysed from the mover's own view).

    .venv/bin/python bench/analysis.py [--games 12] [--iterations 1500] [--seed 1]

- the seconds to analyse every decision of a finished five-seat game at the default budget,
  on one core (target: under a minute), beside the baseline measured in the same run: the
  seconds the search bot takes to play those same decisions at the server's budget (300
  iterations), as a ratio;
- how steady an estimate is: the same decisions judged again with other randomness, the 99th
  percentile of the change in the chance after the command played (it should sit well below
  the least mark, 5 points, or a mark would be noise);
- the levels ordered by the mean chance lost per decision (random > greedy > ismcts), over
  `--games` three-seat games with each level on each seat in turn, at the default budget, each
  mean with its 95 % interval (normal: hundreds of decisions a level), the intervals apart;
- the marks per level, per 100 decisions.

Each figure is printed on a line of its own, `name value`, with the target met or MISSED.
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import random
import statistics
import sys
import time
from pathlib import Path

sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).parent.resolve()]

from bots.analysis import ITERATIONS, Analyst, decisions, mark_of  # noqa: E402
from bots.levels import make  # noqa: E402
from bots.match import play_match  # noqa: E402
from bots.seen import seen_by  # noqa: E402
from server.config.card_data import load_game_data  # noqa: E402

LEVELS = ("random", "greedy", "ismcts")
BOT_ITERATIONS = 300
"""The search bot's budget on the server (workers.context: `bot_options`)."""


def _bot(level: str) -> object:
    return make(level, iterations=BOT_ITERATIONS) if level == "ismcts" else make(level)


def _five_seats(iterations: int, seed: int) -> dict[str, float]:
    """One five-seat game (a search bot, two greedy, two random) analysed whole: the seconds
    the analysis takes, the seconds the search bot takes to decide the same decisions, the
    decisions judged, and the steadiness of the estimates."""
    data = load_game_data()
    levels = ["ismcts", "greedy", "random", "greedy", "random"]
    _state, log = play_match([_bot(level) for level in levels], data, seed=seed)  # type: ignore[misc]
    found = list(decisions(log))
    analyst = Analyst(iterations=iterations)
    began = time.process_time()
    judged = [analyst.judge_decision(log, d, f"bench-{seed}") for d in found]
    analysing = time.process_time() - began
    bot = make("ismcts", iterations=BOT_ITERATIONS)
    began = time.process_time()
    for decision in found:
        if decision.options > 1:
            bot.choose(seen_by(decision.state, log[: decision.version], decision.seat),
                       random.Random(decision.version))  # fmt: skip
    playing = time.process_time() - began
    sample = [d for d in found if d.options > 1][::4]
    changes = []
    for decision in sample:
        one = analyst.judge_decision(log, decision, f"bench-{seed}")
        other = analyst.judge_decision(log, decision, f"again-{seed}")
        assert one is not None and other is not None
        changes.append(abs(one.after - other.after))
    changes.sort()
    return {
        "seconds": analysing,
        "playing": playing,
        "decisions": len(found),
        "judged": sum(1 for j in judged if j is not None),
        "p99_change": changes[min(len(changes) - 1, round(0.99 * (len(changes) - 1)))],
        "p50_change": statistics.median(changes),
    }


def _ordering_game(job: tuple[int, int, int]) -> dict[str, list[float]]:
    """One three-seat game of the levels, seated in turn by `number`: each level's losses."""
    number, iterations, seed = job
    seated = LEVELS[number % 3 :] + LEVELS[: number % 3]
    _state, log = play_match([_bot(level) for level in seated], load_game_data(),  # type: ignore[misc]
                             seed=seed * 10_000 + number)  # fmt: skip
    analyst = Analyst(iterations=iterations)
    losses: dict[str, list[float]] = {level: [] for level in LEVELS}
    for decision in decisions(log):
        judged = analyst.judge_decision(log, decision, f"order-{seed}-{number}")
        if judged is not None:
            losses[seated[decision.seat]].append(judged.loss)
    return losses


def _interval(losses: list[float]) -> tuple[float, float, float]:
    mean = statistics.mean(losses)
    half = 1.96 * statistics.stdev(losses) / math.sqrt(len(losses))
    return mean, mean - half, mean + half


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=12)
    parser.add_argument("--iterations", type=int, default=ITERATIONS)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    five = _five_seats(args.iterations, args.seed)
    met = "met" if five["seconds"] < 60 else "MISSED"
    print(f"analysis_iterations {args.iterations}")
    print(f"five_seat_decisions {five['decisions']:.0f} (judged {five['judged']:.0f})")
    print(f"five_seat_analysis_seconds {five['seconds']:.1f} (target < 60 on one core: {met})")
    print(f"baseline_bot_seconds {five['playing']:.1f} (the search bot deciding the same, "
          f"{BOT_ITERATIONS} iterations)")  # fmt: skip
    print(f"ratio_analysis_to_baseline {five['seconds'] / five['playing']:.2f}")
    steady = "met" if five["p99_change"] < 0.05 else "MISSED"
    print(f"estimate_change_p50 {five['p50_change']:.4f}")
    print(f"estimate_change_p99 {five['p99_change']:.4f} (target < 0.05, the least mark: {steady})")

    jobs = [(number, args.iterations, args.seed) for number in range(args.games)]
    began = time.monotonic()
    with multiprocessing.Pool(2) as pool:
        games = pool.map(_ordering_game, jobs)
    print(f"ordering_games {args.games} ({time.monotonic() - began:.0f} s on two cores)")
    losses = {level: [x for game in games for x in game[level]] for level in LEVELS}
    bounds = {}
    for level in LEVELS:
        mean, low, high = _interval(losses[level])
        bounds[level] = (low, high)
        marks = dict.fromkeys(("inaccuracy", "mistake", "blunder"), 0)
        for loss in losses[level]:
            if (mark := mark_of(loss)) is not None:
                marks[mark] += 1
        per100 = ", ".join(f"{m} {100 * n / len(losses[level]):.1f}" for m, n in marks.items())
        print(f"mean_loss_{level} {mean:.4f} [{low:.4f}, {high:.4f}] over {len(losses[level])} "
              f"decisions; per 100 decisions: {per100}")  # fmt: skip
    ordered = (
        bounds["random"][0] > bounds["greedy"][1] and bounds["greedy"][0] > bounds["ismcts"][1]
    )
    print(f"levels_ordered {'yes' if ordered else 'no'} (random > greedy > ismcts, 95 % "
          f"intervals apart: {'met' if ordered else 'MISSED'})")  # fmt: skip


if __name__ == "__main__":
    main()

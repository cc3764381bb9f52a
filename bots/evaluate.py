"""What the bots' readings of a position share: what a seat expects of the cards it has not
seen (`Unseen`), and how far a builder leads the others (`soft_margin`). The reading itself
is `bots.outlook`, for the greedy bot and the search alike."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple


class Unseen(NamedTuple):
    """What the evaluating seat expects of the cards it has not seen in each other seat's
    hand: per seat, the crests it may hold per city and the portraits per noble (averages
    over the cards it could be: fractions)."""

    crests: Sequence[dict[int, float]]
    portraits: Sequence[dict[str, float]]


def soft_margin(points: list[float], builder: int, softness: float) -> float:
    """How far `builder` leads a soft maximum of the others (`softness` in points; 0: the
    best of them, as `margin`): the best of expected scores is less than the expected best
    of the scores, and a builder close behind the best may well end ahead of it."""
    others = [p for b, p in enumerate(points) if b != builder]
    best = max(others)
    if softness <= 0:
        return points[builder] - best
    spread = sum(math.exp((p - best) / softness) for p in others)
    return points[builder] - best - softness * math.log(spread)

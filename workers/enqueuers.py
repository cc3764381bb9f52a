"""What the server calls to enqueue the jobs that follow a player's acts outside a game's
stream (a resignation, a new e-mail address, a vacation, an analysis asked for): each a
function made once for the server's queue, enqueueing by the job's stored name
(`workers.jobs`, `workers.mail`, `workers.deadlines`, `workers.analysis`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from workers.analysis import enqueue_slice
from workers.job_ids import job_id
from workers.retries import DELIVERY_RETRY, MOVED_RETRY
from workers.settings import later_queue_of, queue_of

HANDED_OVER = "workers.jobs.handed_over"
CONFIRM_ADDRESS = "workers.mail.confirm_address"
PLAYER_AWAY = "workers.deadlines.player_away"


def handover_enqueuer(client: Any, prefix: str) -> Callable[[str, str, int], None]:
    """What the server calls when a player hands their seat to a bot: the job that follows
    (one per game and seat, so a resignation sent again adds nothing)."""
    queue = queue_of(client, prefix)

    def enqueue(game_id: str, player_id: str, seat: int) -> None:
        queue.enqueue(
            HANDED_OVER, game_id, player_id, job_id=job_id(game_id, seat, "handed"),
            retry=MOVED_RETRY,
        )  # fmt: skip

    return enqueue


def confirmation_enqueuer(client: Any, prefix: str) -> Callable[[str, str], None]:
    """What the server calls when a player sets a new e-mail address: the job that asks
    them to confirm it (`workers.mail.confirm_address`)."""
    queue = queue_of(client, prefix)

    def enqueue(player_id: str, address: str) -> None:
        queue.enqueue(CONFIRM_ADDRESS, player_id, address, retry=DELIVERY_RETRY)

    return enqueue


def vacation_enqueuer(client: Any, prefix: str) -> Callable[[str], None]:
    """What the server calls when a player's vacation starts or ends: the job that moves the
    deadlines of their games (`workers.deadlines.player_away`)."""
    queue = queue_of(client, prefix)

    def enqueue(player_id: str) -> None:
        queue.enqueue(PLAYER_AWAY, player_id, retry=MOVED_RETRY)

    return enqueue


def analysis_enqueuer(client: Any, prefix: str) -> Callable[[str, int], None]:
    """What the server calls when a finished game's analysis is asked for and is not done:
    the job of its first slice not kept (`workers.analysis`), for a game that ended before
    games were analysed or an analysis whose job was lost or failed all its tries; one job
    however often it is asked (the running chain's own, while it runs)."""
    queue = later_queue_of(client, prefix)

    def enqueue(game_id: str, start: int) -> None:
        enqueue_slice(queue, game_id, start)

    return enqueue

"""A finished game's analysis as the API serves it (`GET /api/games/{id}/analysis`): read from
the slices the analysis jobs keep (`workers.analysis`, `projections.analysis`); reading only.

It exists only once the game is over: asked of a game in play it is refused, and the jobs
analyse only a finished game, so nothing of it can help a live one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal, cast

from bots.analysis import MARKS, Judgement
from projections.analysis import SeatFigures, missing_slice, read_analysis
from server.schema import answers
from server.schema.errors import GameNotOver
from server.services.games import GameService
from store.analysis import analysis_op

THRESHOLDS = dict(MARKS)
Mark = Literal["inaccuracy", "mistake", "blunder"]
Status = Literal["queued", "running", "done", "off"]


class AnalysisService:
    def __init__(
        self, games: GameService, prefix: str, enqueue: Callable[[str, int], None] | None = None
    ) -> None:
        self.games = games
        self.prefix = prefix
        self.enqueue = enqueue
        """Asks for the job of a slice of a finished game's analysis
        (`workers.enqueuers.analysis_enqueuer`); None: this server analyses no game
        (`PATRICIAN_ANALYSIS_ITERATIONS=0`)."""

    async def of(self, game_id: str) -> answers.GameAnalysis:
        """The game's analysis as far as it is made."""
        state = await self.games.state(game_id)  # 404 for no such game
        if state.result is None:
            raise GameNotOver(state.phase, "a game is analysed once it is over")
        decisions, slices = await self.games.run(analysis_op(self.prefix, game_id))
        found = read_analysis(state.board.seats, decisions, slices)
        status: Status = "done" if found.complete else "running" if decisions else "queued"
        if self.enqueue is None and not decisions:
            status = "off"
        elif self.enqueue is not None and not found.complete:
            # its first slice not kept asked for: a game over before games were analysed, a
            # job lost or failed for good; while its jobs run, their own (nothing added)
            self.enqueue(game_id, missing_slice(decisions, slices))
        return answers.GameAnalysis(
            game_id, status, found.decisions, found.analysed, THRESHOLDS,
            tuple(_seat(seat) for seat in found.seats),
            tuple(_judged(judgement, by) for judgement, by in found.judged),
        )  # fmt: skip


def _seat(seat: SeatFigures) -> answers.SeatAnalysis:
    accuracy = None if seat.accuracy is None else round(seat.accuracy, 1)
    counts = (seat.inaccuracies, seat.mistakes, seat.blunders)
    return answers.SeatAnalysis(seat.seat, accuracy, seat.own_decisions, *counts)


def _judged(j: Judgement, by: str) -> answers.JudgedDecision:
    mark = cast(Mark | None, j.mark)
    return answers.JudgedDecision(
        j.version, j.seat, j.played, j.best, j.before, j.after, round(j.loss, 4), mark,
        j.options, by,
    )  # fmt: skip

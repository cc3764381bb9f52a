"""A finished game's analysis as it is kept and as it is read: the slices the jobs write
(`Slice`) and what a reader is shown of them (`read_analysis`): every judged decision with its
mark and who made it, and per seat its accuracy and its marks.

Who made a decision matters to a seat's figures: a turn its clock or its bot played (a
timeout, a seat handed over: the append's `by`) is judged and shown like any other, but it is
not the player's, so it counts neither in the seat's accuracy nor in its marks.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

import msgspec

from bots.analysis import Judgement, accuracy

SLICE = 6
"""Decisions a job judges (a second or two at the default budget: a job never holds a worker
for long, and the progress moves in steps a reader sees)."""


class Slice(msgspec.Struct, frozen=True, gc=False):
    """The judgements of the decisions from one index on (`SLICE` of them, fewer at the end):
    the decisions with one option are not judged, so `judged` may hold fewer."""

    decisions: int
    """How many decisions the slice covers."""
    judged: tuple[Judgement, ...]
    by: tuple[str, ...]
    """Who made each judged decision: "" the seat's player, else the append's `by`."""


class SeatFigures(NamedTuple):
    seat: int
    accuracy: float | None
    """0..100 over the player's own judged decisions (`bots.analysis.accuracy`)."""
    own_decisions: int
    """The player's own judged decisions (not those made for them)."""
    inaccuracies: int
    mistakes: int
    blunders: int


class Analysis(NamedTuple):
    decisions: int
    """How many decisions the game has (0: the analysis has not begun)."""
    analysed: int
    """How many of them were analysed so far."""
    judged: list[tuple[Judgement, str]]
    """The judged decisions in order, each with who made it."""
    seats: list[SeatFigures]

    @property
    def complete(self) -> bool:
        return self.decisions > 0 and self.analysed >= self.decisions


_encode = msgspec.msgpack.encode
_SLICE = msgspec.msgpack.Decoder(Slice)


def encode_slice(part: Slice) -> bytes:
    return _encode(part)


def missing_slice(decisions: int, slices: Mapping[int, bytes]) -> int:
    """The first decision of the first slice not kept (0 before any is)."""
    return next((start for start in range(0, decisions, SLICE) if start not in slices), 0)


def read_analysis(seats: int, decisions: int, slices: Mapping[int, bytes]) -> Analysis:
    """What the kept slices say, for a game of `seats` seats."""
    parts = [_SLICE.decode(slices[start]) for start in sorted(slices)]
    judged = [pair for part in parts for pair in zip(part.judged, part.by, strict=True)]
    figures = []
    for seat in range(seats):
        own = [j for j, by in judged if j.seat == seat and not by]
        marks = [j.mark for j in own]
        counts = (marks.count("inaccuracy"), marks.count("mistake"), marks.count("blunder"))
        figures.append(SeatFigures(seat, accuracy([j.loss for j in own]), len(own), *counts))
    return Analysis(decisions, sum(part.decisions for part in parts), judged, figures)

"""The analysis of a finished game means something: it finds every decision of a log, ranks
the levels of play by what their decisions lose, marks a decision that throws a tower away,
and judges each decision from what its seat could see only (R42: a card it could not see
changes nothing in the estimates)."""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Sequence

import msgspec

from bots.analysis import Analyst, Judgement, accuracy, decisions, mark_of
from bots.levels import make
from bots.match import Choice, play_match
from bots.seen import seen_by
from domain.commands import Command, PlaceFloor, PlayCard
from domain.decide import decide
from domain.errors import IllegalCommand
from domain.events import ArchitettoCardsSetAside, DrawPileStacked, Event, FloorPlaced, StepStarted
from domain.evolve import fold
from domain.gamedata import GameData
from domain.setup import new_game
from domain.state import State

CHEAP = Analyst(iterations=150, played_visits=50)
"""A budget that separates the levels in a few seconds a game (bench/analysis.py measures
the default)."""


def test_every_decision_of_a_game_is_found_from_its_log_alone(game_data: GameData) -> None:
    made: list[Choice] = []
    bots = [make("greedy"), make("random"), make("random")]
    _state, log = play_match(bots, game_data, seed=4, watch=made.append)
    found = list(decisions(log))
    assert [(d.version, d.seat, d.played) for d in found] == [
        (c.version, c.seat, c.command) for c in made
    ]


def test_a_decisions_judgement_is_the_same_however_often_it_is_made(
    game_data: GameData,
) -> None:
    _state, log = play_match([make("random"), make("random")], game_data, seed=8)
    chosen = [d for d in decisions(log) if d.options > 2][:4]
    first = [CHEAP.judge_decision(log, d, "game-8") for d in chosen]
    again = [
        Analyst(iterations=150, played_visits=50).judge_decision(log, d, "game-8") for d in chosen
    ]
    assert first == again and all(j is not None for j in first)


def test_a_decision_with_one_option_is_not_judged(game_data: GameData) -> None:
    _state, log = play_match([make("random"), make("random")], game_data, seed=8)
    forced = next(d for d in decisions(log) if d.options == 1)
    assert CHEAP.judge_decision(log, forced, "game-8") is None


def _interval(losses: Sequence[float]) -> tuple[float, float]:
    """The mean loss's 95 % interval (normal: a few hundred decisions a level)."""
    mean = statistics.mean(losses)
    half = 1.96 * statistics.stdev(losses) / math.sqrt(len(losses))
    return mean - half, mean + half


def test_the_loss_per_decision_orders_the_levels_with_intervals_apart(
    game_data: GameData,
) -> None:
    levels = ["random", "greedy", "ismcts"]
    losses: dict[str, list[float]] = {level: [] for level in levels}
    for game in range(6):  # each level on each seat twice
        seated = levels[game % 3 :] + levels[: game % 3]
        bots = [
            make(level, iterations=100) if level == "ismcts" else make(level) for level in seated
        ]
        _state, log = play_match(bots, game_data, seed=100 + game)
        for decision in decisions(log):
            judged = CHEAP.judge_decision(log, decision, f"game-{game}")
            if judged is not None:
                losses[seated[decision.seat]].append(judged.loss)
    random_, greedy, ismcts = (_interval(losses[level]) for level in levels)
    assert random_[0] > greedy[1], (random_, greedy)
    assert greedy[0] > ismcts[1], (greedy, ismcts)


def _throwaway(game_data: GameData) -> tuple[list[Event], State, str]:
    """Seat 0 of three to place the last floor of a nine-floor city it holds two towers of
    four in, by the top floor of each (R13: a tie goes to the tied seat highest in the tower):
    site 0 holds 0,0,1,1 and site 1 holds 1,1,0,0. On site 0 it keeps both towers (three
    floors in the taller, the top of the tie in the shorter); on site 1 it hands the shorter
    tower to seat 1, whose floor is then the top of the tie."""
    for byte in range(64):
        setup = new_game(
            edition="towers", seats=3, modules=(), game_data=game_data,
            server_seed=bytes([byte]) * 32,
        )  # fmt: skip
        state = fold(setup)
        cards = state.board.cards
        single = [
            card for card in state.hands[0]
            if cards[card].crests == 1 and state.board.capacity[cards[card].city] == 9
        ]  # fmt: skip
        if single:
            break
    card = single[0]
    city = state.board.cities[cards[card].city]
    built = [FloorPlaced(seat, city, 0) for seat in (0, 0, 1, 1)]
    built += [FloorPlaced(seat, city, 1) for seat in (1, 1, 0, 0)]
    log = [*setup, *built, StepStarted(0, "play_card")]  # the floors of earlier turns
    events, state = decide(fold(log), 0, PlayCard(card))
    return [*log, *events], state, city


def test_a_floor_that_throws_a_cities_shorter_tower_away_is_marked_a_mistake_or_worse(
    game_data: GameData,
) -> None:
    log, state, _city = _throwaway(game_data)
    seen = seen_by(state, log, 0)
    kept = Analyst().judge(seen, PlaceFloor(0), random.Random(1))
    thrown = Analyst().judge(seen, PlaceFloor(1), random.Random(1))
    assert kept is not None and thrown is not None
    assert kept.mark is None and kept.best == PlaceFloor(0)
    assert thrown.best == PlaceFloor(0) and thrown.after < kept.after
    assert thrown.mark in ("mistake", "blunder"), thrown
    # the command played read more often than the search tried anything stays judged so
    small = Analyst(iterations=60, played_visits=300).judge(seen, PlaceFloor(1), random.Random(1))
    assert small is not None and small.best == PlaceFloor(0) and small.mark is not None


def _swapped(log: list[Event]) -> list[Event]:
    """The same deal but for the Architetto's first hidden card, swapped with the bottom card
    of the draw pile (R42: nobody sees either before it is revealed or drawn)."""
    aside = next(e for e in log if isinstance(e, ArchitettoCardsSetAside))
    pile = next(e for e in log if isinstance(e, DrawPileStacked))
    hidden, bottom = aside.cards[0], pile.cards[-1]
    cards = tuple(bottom if c == hidden else hidden if c == bottom else c for c in pile.cards)
    swap: dict[int, Event] = {
        id(aside): msgspec.structs.replace(aside, cards=(bottom, *aside.cards[1:])),
        id(pile): msgspec.structs.replace(pile, cards=cards),
    }
    return [swap.get(id(event), event) for event in log]


def _replayed(setup: list[Event], commands: Sequence[tuple[int, Command]]) -> list[Event]:
    """The commands of a game played again on another deal, as long as they stay legal."""
    log, state = list(setup), fold(setup)
    for seat, command in commands:
        if state.pending is None or state.pending.seat != seat:
            break
        try:
            events, state = decide(state, seat, command)
        except IllegalCommand:  # the deals parted: the rest is another game
            break
        log += events
    return log


def test_the_estimates_before_a_hidden_card_is_revealed_do_not_depend_on_it(
    game_data: GameData,
) -> None:
    bots = [make("greedy"), make("greedy")]  # two seats: the Architetto and its hidden cards
    _state, log = play_match(bots, game_data, seed=12)
    setup_end = 1 + next(i for i, e in enumerate(log) if isinstance(e, StepStarted))
    commands = [(d.seat, d.played) for d in decisions(log)]
    twin = _replayed(_swapped(log[:setup_end]), commands)
    assert twin[:setup_end] != log[:setup_end], "the deals differ"
    parted = [i for i, (a, b) in enumerate(zip(log, twin, strict=False)) if a != b]
    same = next((i for i in parted if i >= setup_end), min(len(log), len(twin)))
    judged: list[tuple[Judgement | None, Judgement | None]] = []
    for one, other in zip(decisions(log), decisions(twin), strict=False):
        if one.version >= same or one.options < 2:
            continue
        assert seen_by(one.state, log[: one.version], one.seat) == seen_by(
            other.state, twin[: other.version], other.seat
        )
        judged.append((CHEAP.judge_decision(log, one, "g"), CHEAP.judge_decision(twin, other, "g")))
    assert len(judged) > 30, (same, len(log))
    assert all(a == b for a, b in judged)


def test_the_marks_and_accuracy_follow_the_chance_lost() -> None:
    assert [mark_of(loss) for loss in (0.0, 0.049, 0.05, 0.1, 0.149, 0.15, 0.6)] == [
        None, None, "inaccuracy", "mistake", "mistake", "blunder", "blunder",
    ]  # fmt: skip
    assert accuracy([]) is None
    assert accuracy([0.0, 0.0]) == accuracy([0.0]) == 103.1668 - 3.1669  # lichess's curve at 0
    perfect, sloppy = accuracy([0.0] * 10), accuracy([0.0] * 9 + [0.2])
    assert perfect is not None and sloppy is not None and 90 < sloppy < perfect

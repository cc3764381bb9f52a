"""Bots that play fair: every level always answers one of its seat's legal commands, sees
only what its seat may see (two games that differ only in what it cannot see get the same
choice), guesses the unseen cards consistently, and the search is the same for one seed."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from msgspec.structs import replace

from bots.belief import Belief
from bots.levels import LEVELS, make
from bots.seen import seen_by
from domain.gamedata import GameData
from tests.bots.conftest import KINDS, moments

STEPS = {"play_card", "place_floor", "take_card", "move_floor", "trade_route", "architetto_site"}


def _bot(level: str):  # type: ignore[no-untyped-def]
    return make(level, iterations=12) if level == "ismcts" else make(level)


@pytest.mark.parametrize("chunk", range(4))
def test_every_level_answers_a_listed_legal_command_in_every_kind_of_decision(
    game_data: GameData, chunk: int
) -> None:
    """Over more than 1,000 moments (all four chunks) of every kind of game and decision."""
    rng = random.Random(chunk)
    asked = 0
    steps: set[str] = set()
    for kind in KINDS[chunk::4]:
        for _game in range(3):
            for state, _log, seen in moments(game_data, kind, rng, every=9):
                assert state.pending is not None
                steps.add(state.pending.step)
                for level in LEVELS:
                    choice = _bot(level).choose(seen, random.Random(asked))
                    assert choice in seen.view.legal_commands, (level, state.pending, choice)
                asked += 1
    assert asked >= 250
    if chunk == 0:  # its kinds include the 2-seat towers games, and the trade routes
        assert steps == STEPS, f"every kind of decision was asked: {STEPS - steps}"


def test_two_games_that_differ_only_in_what_the_seat_cannot_see_get_the_same_choice(
    game_data: GameData,
) -> None:
    rng = random.Random(11)
    checked = 0
    for kind in [(2, "towers", ()), (4, "towers", ("trade_routes",)), (3, "classic", ())]:
        for state, log, seen in moments(game_data, kind, rng, every=7):
            assert state.pending is not None
            seat = state.pending.seat
            other = Belief(seen).determinize(random.Random(checked))  # another hidden deal
            assert other != state or not (state.draw or state.hidden)
            twin = replace(state, hands=other.hands, draw=other.draw, hidden=other.hidden)
            assert seen_by(twin, log, seat) == seen, "what the seat may see is the same"
            for level in LEVELS:
                first = _bot(level).choose(seen, random.Random(checked))
                again = _bot(level).choose(seen_by(twin, log, seat), random.Random(checked))
                assert first == again, level
            checked += 1
    assert checked > 30


def test_every_guess_of_the_unseen_cards_agrees_with_everything_seen(
    game_data: GameData,
) -> None:
    rng = random.Random(5)
    guesses = 0
    for kind in KINDS:
        for state, _log, seen in moments(game_data, kind, rng, every=25):
            assert state.pending is not None
            seat = state.pending.seat
            belief = Belief(seen)
            for k in range(3):
                guess = belief.determinize(random.Random(k))
                # The public game is the same: only the secret zones may differ.
                public = replace(
                    guess,
                    hands=state.hands,
                    draw=state.draw,
                    hidden=state.hidden,
                    server_seed=state.server_seed,  # a stand-in: nobody sees it in play
                )
                assert public == state
                assert guess.hands[seat] == state.hands[seat], "its own hand is its own"
                everything: Counter[str] = Counter()
                for group in (*guess.hands, *guess.played, guess.draw, guess.hidden):
                    everything.update(group)
                everything.update(card for card in guess.face_up if card is not None)
                assert everything == Counter(state.board.card_order), "every card, once"
                assert len(guess.draw) == len(state.draw) == seen.view.draw_count
                assert len(guess.hidden) == len(state.hidden)
                for other, hand in enumerate(guess.hands):
                    assert (
                        len(hand) == len(state.hands[other]) == seen.view.players[other].hand_size
                    )
                    if other != seat:
                        unseen = set(hand) - set(state.hands[other])
                        assert all(state.board.cards[c].star for c in unseen), "dealt: stars"
                secret_zones = set(guess.draw) | set(guess.hidden)
                for other, hand in enumerate(guess.hands):
                    if other != seat:
                        secret_zones |= set(hand) - set(belief.known_hands()[other])
                seen_cards = (
                    set(state.hands[seat])
                    | {c for group in state.played for c in group}
                    | {c for c in state.face_up if c}
                )
                assert not secret_zones & seen_cards, "no card it has seen is guessed away"
                guesses += 1
    assert guesses > 200


def test_the_search_chooses_the_same_for_the_same_seed_and_iterations(
    game_data: GameData,
) -> None:
    rng = random.Random(3)
    compared = 0
    for kind in [(2, "towers", ()), (5, "towers", ("delegates",))]:
        for _state, _log, seen in moments(game_data, kind, rng, every=15):
            choices = {
                make("ismcts", iterations=40).choose(seen, random.Random(99)) for _ in range(2)
            }
            assert len(choices) == 1
            compared += 1
    assert compared > 5


def test_a_budget_in_milliseconds_needs_a_clock_passed_in() -> None:
    with pytest.raises(ValueError, match="clock"):
        make("ismcts", milliseconds=50)
    ticks = iter(range(10**6))
    bot = make("ismcts", milliseconds=5, clock=lambda: next(ticks) / 1000)
    assert bot.level == "ismcts"


def test_an_unknown_level_is_named() -> None:
    with pytest.raises(ValueError, match="'genius' is not a level"):
        make("genius")

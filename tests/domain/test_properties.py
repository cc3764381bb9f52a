"""Property-based play: Hypothesis chooses every decision, so a failure shrinks to the
shortest sequence of choices that breaks a rule or an invariant."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from domain.board import SUPPORTED_RULES_VERSIONS
from domain.decide import decide
from domain.errors import IllegalCommand
from domain.evolve import fold
from domain.gamedata import GameData
from domain.legal import legal_commands
from domain.setup import new_game
from server.config.card_data import load_game_data
from tests.domain.invariants import Checker, command_universe

DATA: GameData = load_game_data()
OPTIONS = st.sampled_from(
    [("classic", seats, ()) for seats in (2, 3, 4, 5)]
    + [
        ("towers", seats, modules)
        for seats in (2, 3, 4, 5)
        for modules in ((), ("trade_routes",), ("delegates",), ("trade_routes", "delegates"))
    ]
)

VERSIONS = st.sampled_from(SUPPORTED_RULES_VERSIONS)
"""Every rules version still played: `legal_commands` and `decide` agree under each."""


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    options=OPTIONS,
    rules_version=VERSIONS,
    seed=st.binary(min_size=32, max_size=32),
    choices=st.data(),
)
def test_any_sequence_of_legal_choices_keeps_every_invariant(
    options: tuple[str, int, tuple[str, ...]],
    rules_version: int,
    seed: bytes,
    choices: st.DataObject,
) -> None:
    edition, seats, modules = options
    log = new_game(
        edition=edition,
        seats=seats,
        modules=modules,
        game_data=DATA,
        server_seed=seed,
        rules_version=rules_version,
    )
    state = fold(log)
    checker = Checker(state)
    checker.note(log)
    while state.pending is not None:
        seat = state.pending.seat
        legal = legal_commands(state, seat)
        assert legal
        command = legal[choices.draw(st.integers(0, len(legal) - 1), label="choice")]
        events, state = decide(state, seat, command)
        checker.note(events)
        checker.check_state(state)
    assert state.result is not None


@settings(max_examples=200, deadline=None)
@given(
    seed=st.binary(min_size=32, max_size=32),
    steps=st.integers(0, 120),
    pick=st.integers(0, 10_000),
    seat=st.integers(-1, 5),
    rules_version=VERSIONS,
)
def test_a_command_is_accepted_exactly_when_it_is_listed(
    seed: bytes, steps: int, pick: int, seat: int, rules_version: int
) -> None:
    state = fold(
        new_game(
            edition="towers",
            seats=2,
            modules=("trade_routes",),
            game_data=DATA,
            server_seed=seed,
            rules_version=rules_version,
        )
    )
    for _ in range(steps):
        if state.pending is None:
            break
        legal = legal_commands(state, state.pending.seat)
        _, state = decide(state, state.pending.seat, legal[pick % len(legal)])
    universe = command_universe(state.board)
    command = universe[pick % len(universe)]
    listed = command in legal_commands(state, seat)
    try:
        decide(state, seat, command)
    except IllegalCommand:
        assert not listed
    else:
        assert listed

"""Two rules versions live side by side (docs/rules-versions.md): a game is decided for its
whole life by the version it was created with, and stores its events in that version's shape.

Version 3 reads R45 as the rulebook writes it (a seat whose empty supply, R41, left no floor
placed built in no city: R14 lets it take any face-up card, R15 bars no city from its move),
and spells `city_scored`'s bonus `trade_bonus`; everywhere else the two decide alike. The
upcaster (`CityScored.__post_init__`) reads version 2's `bonus`; `domain.shapes.stored_bytes`
writes each game's own shape, byte for byte what version 2 always wrote.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterator

import msgspec
import pytest

from domain.board import RULES_VERSION, SUPPORTED_RULES_VERSIONS
from domain.commands import MoveFloor, PlaceFloor, PlayCard, Skip, TakeCard
from domain.decide import decide
from domain.errors import InvalidOptions
from domain.events import (
    CardTaken,
    CityScored,
    Event,
    GameCreated,
    decode_events,
    encoder,
    event_decoder,
    events_decoder,
)
from domain.evolve import fold
from domain.gamedata import GameData
from domain.legal import built_city, legal_commands
from domain.playout import pick, play_out, random_chooser
from domain.setup import create_game, new_game
from domain.shapes import stored_bytes
from domain.state import State
from tests.domain.invariants import Checker
from tests.domain.table import act, refused, table

V2_CITY_SCORED = (
    b'{"type":"city_scored","city":"Parma","high_seat":1,"high_token":5,"low_seat":2,'
    b'"low_token":2,"bonus":-2}'
)
"""A `city_scored` as rules version 2 stored it (its encoder's output, copied before the
rename): every key in this order, `bonus` last and always present."""

V2_GAME_SHA256 = "f586bff2b01cc07ebd7f1646dbc0b473f23a49408f0062a98adfcd7bea276319"
"""SHA-256 of the stored lines (joined by newlines) of `_v2_game()`, as version 2's encoder
wrote them before version 3 existed: the shipped card file, 3 seats with trade routes."""

OPTIONS: list[tuple[str, int, tuple[str, ...]]] = [
    *[("classic", seats, ()) for seats in (2, 3, 4, 5)],
    *[
        ("towers", seats, modules)
        for seats in (2, 3, 4, 5)
        for modules in ((), ("trade_routes",), ("delegates",), ("trade_routes", "delegates"))
    ],
]
"""Every edition, seat count and module choice (R1-R5)."""


def _no_floor_left(rules_version: int, edition: str = "towers") -> State:
    """Seat 0, no floor left (R41), plays MIL-3 (Milano, move symbol): Milano and Roma show
    a card, and seat 0 owns a floor in both."""
    return table(
        3,
        edition,
        hands={0: ["MIL-3", "ROM-7"]},
        clear_face_up=True,
        face_up={"Milano": "SIE-1", "Roma": "ROM-1"},
        towers={"Milano": ((0,), (1,)), "Roma": ((0,), ())},
        supply={0: 0},
        rules_version=rules_version,
    )


# --- R45: the city built in, where R41 left no floor placed -------------------------------


def test_r45_in_version_2_a_seat_with_no_floor_left_takes_the_played_cards_citys_card() -> None:
    _, after = act(_no_floor_left(2), 0, PlayCard("MIL-3"))
    assert built_city(after) == after.board.city_index["Milano"]
    assert legal_commands(after, 0) == [TakeCard("Milano")]
    assert refused(after, 0, TakeCard("Roma")).code == "must_take_built_city"


def test_r45_in_version_2_the_played_cards_city_is_barred_from_the_move() -> None:
    _, after = act(_no_floor_left(2), 0, PlayCard("MIL-3"), TakeCard("Milano"))
    assert legal_commands(after, 0) == [MoveFloor("Roma", 0), Skip()]
    assert refused(after, 0, MoveFloor("Milano", 0)).code == "move_in_built_city"


def test_r45_in_version_3_a_seat_with_no_floor_left_built_in_no_city_and_takes_any_card() -> None:
    _, after = act(_no_floor_left(3), 0, PlayCard("MIL-3"))
    assert built_city(after) is None
    assert legal_commands(after, 0) == [TakeCard("Milano"), TakeCard("Roma")]
    events, _ = act(after, 0, TakeCard("Roma"))
    assert events[0] == CardTaken(0, "Roma", "ROM-1")


def test_r45_in_version_3_no_city_is_barred_from_the_move() -> None:
    _, after = act(_no_floor_left(3), 0, PlayCard("MIL-3"), TakeCard("Roma"))
    assert legal_commands(after, 0) == [
        MoveFloor("Milano", 0),
        MoveFloor("Milano", 1),
        MoveFloor("Roma", 0),
        Skip(),
    ]
    _, moved = act(after, 0, MoveFloor("Milano", 0))
    assert moved.towers[2 * moved.board.city_index["Milano"] + 1] == (1, 0)


@pytest.mark.parametrize("rules_version", SUPPORTED_RULES_VERSIONS)
def test_r45_in_classic_the_move_comes_first_and_follows_the_games_version(
    rules_version: int,
) -> None:
    # R38: play, place (none, R41), move, then take.
    _, after = act(_no_floor_left(rules_version, "classic"), 0, PlayCard("MIL-3"))
    moves = legal_commands(after, 0)
    assert (MoveFloor("Milano", 0) in moves) == (rules_version == 3)
    _, after = act(after, 0, Skip())
    takes = legal_commands(after, 0)
    assert takes == (
        [TakeCard("Milano")] if rules_version == 2 else [TakeCard("Milano"), TakeCard("Roma")]
    )


@pytest.mark.parametrize("rules_version", SUPPORTED_RULES_VERSIONS)
def test_r45_a_floor_placed_this_turn_means_the_played_cards_city_in_both_versions(
    rules_version: int,
) -> None:
    # The last floor went to Milano (R41 for the second crest): it built there.
    state = table(
        3,
        hands={0: ["MIL-1", "ROM-7"]},
        clear_face_up=True,
        face_up={"Milano": "SIE-1", "Roma": "ROM-1"},
        supply={0: 1},
        rules_version=rules_version,
    )
    _, after = act(state, 0, PlayCard("MIL-1"), PlaceFloor(0))
    assert after.supply[0] == 0
    assert legal_commands(after, 0) == [TakeCard("Milano")]


def test_r45_at_any_moment_of_a_random_game_a_seat_run_out_of_floors_follows_its_version(
    game_data: GameData,
) -> None:
    """Random games of both versions in lockstep; at each turn's start the seat's supply is
    emptied (R41) in a copy, and its card played in both: version 3 offers every option of
    version 2 and more only where version 2 bars the played card's city; both agree with
    `decide` on every option (the random playout checks of `tests.domain.invariants`)."""
    rng = random.Random("r45")
    differed = 0
    for edition, seats, modules in OPTIONS:
        twins = _twins(game_data, edition, seats, modules, rng.randbytes(32))
        steps = 0
        while twins[0].pending is not None and steps < 400:
            steps += 1
            pending = twins[0].pending
            if pending.step == "play_card" and rng.random() < 0.3:
                card = rng.choice(twins[0].hands[pending.seat])
                drained = [_empty_supply(twin, pending.seat) for twin in twins]
                after = [decide(twin, pending.seat, PlayCard(card))[1] for twin in drained]
                differed += _compare_r41_step(after, rng)
            legal = legal_commands(twins[0], pending.seat)
            assert legal_commands(twins[1], pending.seat) == legal
            command = pick(legal, rng)
            twins = [decide(twin, pending.seat, command)[1] for twin in twins]
    assert differed, "no emptied supply met a face-up card or a move to differ on"


def _twins(
    data: GameData, edition: str, seats: int, modules: tuple[str, ...], seed: bytes
) -> list[State]:
    return [
        fold(
            new_game(
                edition=edition,
                seats=seats,
                modules=modules,
                game_data=data,
                server_seed=seed,
                rules_version=version,
            )
        )
        for version in (2, 3)
    ]


def _empty_supply(state: State, seat: int) -> State:
    supply = list(state.supply)
    supply[seat] = 0
    return msgspec.structs.replace(state, supply=tuple(supply))


def _compare_r41_step(after: list[State], rng: random.Random) -> int:
    """Through the steps of a turn with no floor placed, in both versions: version 3's
    options contain version 2's; they differ only at a take or a move that version 2
    bars from the played card's city. Returns how many steps differed."""
    differed = 0
    while (pending := after[1].pending) is not None and pending.step in _R45_STEPS:
        name = after[1].board.cities[after[1].played_card().city]
        new = legal_commands(after[1], pending.seat)
        for state in after:
            if state.pending is not None:
                Checker(state).check_decisions(state, rng)
        if after[0].pending != pending:  # version 2 passed a move only the played city had
            assert pending.step == "move_floor"
            assert {command.city for command in new if isinstance(command, MoveFloor)} == {name}
            return differed + 1
        old = legal_commands(after[0], pending.seat)
        assert set(old) <= set(new)
        if old != new:
            differed += 1
            extra = [command for command in new if command not in old]
            if pending.step == "move_floor":
                assert {command.city for command in extra if isinstance(command, MoveFloor)} == {
                    name
                }
            else:
                assert old == [TakeCard(name)]
        command = pick(old, rng)
        after = [decide(state, pending.seat, command)[1] for state in after]
    assert after[0].pending == after[1].pending
    return differed


_R45_STEPS = ("take_card", "move_floor")


# --- everywhere else the two versions decide alike ----------------------------------------


def _lockstep(
    data: GameData, options: tuple[str, int, tuple[str, ...]], seed: bytes
) -> Iterator[tuple[int, State, State, list[Event], list[Event]]]:
    """Play a version-2 and a version-3 game from the same seed with the same choices; yield
    the seat that decides, the states before each decision and the events each decided."""
    edition, seats, modules = options
    twins = _twins(data, edition, seats, modules, seed)
    rng = random.Random(seed)
    while twins[0].pending is not None:
        pending = twins[0].pending
        legal = legal_commands(twins[0], pending.seat)
        command = pick(legal, rng)
        (old, two), (new, three) = (decide(twin, pending.seat, command) for twin in twins)
        yield pending.seat, twins[0], twins[1], old, new
        twins = [two, three]


def test_away_from_r41_both_versions_offer_and_decide_the_same_and_store_it_alike(
    game_data: GameData,
) -> None:
    """Random games of every option, from the same seeds: the same legal commands at every
    decision, the same events, and stored bytes that differ only in `city_scored`'s field
    name (and `game_created`'s version)."""
    scored = 0
    for game, options in enumerate(OPTIONS * 3):
        for seat, two, three, old, new in _lockstep(game_data, options, bytes([game]) * 32):
            assert not (two.card and two.placed == 0 and two.supply[two.active] == 0), "R41"
            assert legal_commands(two, seat) == legal_commands(three, seat)
            assert old == new
            for event in old:
                kept, current = stored_bytes(event, 2), stored_bytes(event, 3)
                if isinstance(event, CityScored):
                    scored += 1
                    assert kept.replace(b'"bonus":', b'"trade_bonus":') == current
                else:
                    assert kept == current
    assert scored > 100


def test_only_the_version_sets_the_first_events_of_two_versions_apart(game_data: GameData) -> None:
    old, new = (
        new_game(
            edition="towers",
            seats=3,
            modules=(),
            game_data=game_data,
            server_seed=bytes(32),
            rules_version=version,
        )
        for version in (2, 3)
    )
    assert isinstance(old[0], GameCreated) and isinstance(new[0], GameCreated)
    assert (old[0].rules_version, new[0].rules_version) == (2, 3)
    assert msgspec.structs.replace(old[0], rules_version=3) == new[0]
    assert old[1:] == new[1:]
    assert fold(old).board.rules_version == 2 and fold(new).board.rules_version == 3


# --- the upcaster and the stored bytes ----------------------------------------------------


def test_version_2_bytes_of_city_scored_decode_to_trade_bonus_on_every_path() -> None:
    expected = CityScored("Parma", 1, 5, 2, 2, trade_bonus=-2)
    as_dict = msgspec.json.decode(V2_CITY_SCORED)
    decoded = [
        event_decoder.decode(V2_CITY_SCORED),
        decode_events([V2_CITY_SCORED])[0],
        events_decoder.decode(b"[" + V2_CITY_SCORED + b"]")[0],
        msgspec.json.decode(V2_CITY_SCORED, type=CityScored),
        msgspec.convert(as_dict, Event),
        msgspec.convert(as_dict, CityScored),
        CityScored("Parma", 1, 5, 2, 2, bonus=-2),
    ]
    for event in decoded:
        assert event == expected
        assert isinstance(event, CityScored)
        assert (event.trade_bonus, event.bonus) == (-2, msgspec.UNSET)
        assert encoder.encode(event) == V2_CITY_SCORED.replace(b'"bonus"', b'"trade_bonus"')


def test_a_version_2_city_scored_is_stored_again_as_version_2_wrote_it() -> None:
    assert stored_bytes(event_decoder.decode(V2_CITY_SCORED), 2) == V2_CITY_SCORED
    zero = stored_bytes(CityScored("Parma", 1, 5, 2, 2), 2)
    assert zero.endswith(b',"bonus":0}')  # always present, as version 2 wrote it


def _v2_game(data: GameData) -> list[Event]:
    rng = random.Random(1)
    log = new_game(
        edition="towers",
        seats=3,
        modules=("trade_routes",),
        game_data=data,
        server_seed=bytes([1]) * 32,
        entropies=["a", "b", "c"],
        rules_version=2,
    )
    return log + play_out(fold(log), random_chooser(rng))[1]


def test_re_encoding_a_version_2_games_events_with_its_version_gives_the_original_bytes(
    game_data: GameData,
) -> None:
    log = _v2_game(game_data)
    lines = [stored_bytes(event, 2) for event in log]
    assert hashlib.sha256(b"\n".join(lines)).hexdigest() == V2_GAME_SHA256
    assert decode_events(lines) == log
    assert [stored_bytes(event, 2) for event in decode_events(lines)] == lines
    bonuses = [event.trade_bonus for event in log if isinstance(event, CityScored)]
    assert any(bonuses), "the game has a trade bonus to spell"


def test_the_current_encoding_never_contains_bonus(game_data: GameData) -> None:
    old = _v2_game(game_data)
    new = new_game(
        edition="towers",
        seats=3,
        modules=("trade_routes",),
        game_data=game_data,
        server_seed=bytes(32),
    )
    new += play_out(fold(new), random_chooser(random.Random(1)))[1]
    for event in (*old, *new):
        assert b'"bonus"' not in encoder.encode(event)
        assert b'"bonus"' not in stored_bytes(event, RULES_VERSION)
    assert b'"trade_bonus"' in encoder.encode(old)


def test_a_city_scored_naming_two_different_bonuses_does_not_decode() -> None:
    both = V2_CITY_SCORED.replace(b"}", b',"trade_bonus":1}')
    with pytest.raises(msgspec.ValidationError, match="two different bonuses"):
        event_decoder.decode(both)
    same = V2_CITY_SCORED.replace(b"}", b',"trade_bonus":-2}')
    assert event_decoder.decode(same) == event_decoder.decode(V2_CITY_SCORED)


@pytest.mark.parametrize("rules_version", [0, 1, 4])
def test_no_bytes_are_written_for_a_version_this_code_does_not_play(rules_version: int) -> None:
    with pytest.raises(ValueError, match="rules version"):
        stored_bytes(CityScored("Parma", 1, 5, 2, 2), rules_version)


# --- creating a game of a version ---------------------------------------------------------


@pytest.mark.parametrize("rules_version", [1, 4, True, "2"])
def test_a_game_of_a_rules_version_this_code_does_not_play_is_refused(
    game_data: GameData, rules_version: object
) -> None:
    with pytest.raises(InvalidOptions) as refusal:
        create_game(
            edition="towers",
            seats=2,
            modules=(),
            game_data=game_data,
            server_seed=bytes(32),
            player="anna",
            rules_version=rules_version,  # type: ignore[arg-type]
        )
    assert refusal.value.field == "rules_version"


def test_new_games_get_the_current_rules_version(game_data: GameData) -> None:
    created = create_game(
        edition="towers",
        seats=2,
        modules=(),
        game_data=game_data,
        server_seed=bytes(32),
        player="anna",
    )[0]
    assert isinstance(created, GameCreated)
    assert created.rules_version == RULES_VERSION == 3
    assert SUPPORTED_RULES_VERSIONS == (2, 3)

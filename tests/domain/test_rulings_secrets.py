"""Per-ruling tests of what is secret (R42: `view`, `redact` and `visible` never show a secret to
someone who may not see it) and of refused commands (R43: every illegal command raises
`IllegalCommand` with a stable code and a message naming its ruling, and changes nothing).

Each test names the ruling of `docs/rulings.md` it checks. The secret-leak tests
encode what a seat receives to JSON and search it for every card id and seed it must not
learn, so that a leak through any field, present or future, is caught.

Long on purpose: one short test per case, each named as a sentence, read like a table;
splitting the file would scatter cases of one ruling or one promise.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NamedTuple

import msgspec
import pytest

from domain import decide as decide_module
from domain import refusals, setup
from domain.commands import (
    ChooseArchitettoSite,
    Command,
    MoveFloor,
    PlaceFloor,
    PlaceTradeRoute,
    PlayCard,
    Skip,
    TakeCard,
)
from domain.decide import decide, decide_all
from domain.errors import CommandRefused, IllegalCommand
from domain.events import (
    ArchitettoCardsSetAside,
    CardPlayed,
    CardRevealed,
    DrawPileStacked,
    Event,
    GameCreated,
    HandDealt,
    SeedSealed,
    encoder,
)
from domain.evolve import fold
from domain.gamedata import GameData
from domain.legal import legal_commands
from domain.playout import play_out
from domain.setup import create_game, new_game
from domain.state import State
from domain.view import redact, view, visible
from tests.domain.table import SEED, act, table, waiting

Viewer = int | None


def _log(game_data: GameData, seats: int, edition: str = "towers") -> list[Event]:
    return new_game(edition=edition, seats=seats, modules=[], game_data=game_data, server_seed=SEED)


def _first(state: State, options: Sequence[Command]) -> Command:
    return options[0]


def _played_for(log: list[Event], turns: int) -> tuple[list[Event], State]:
    """The opening log and `turns` decisions more, each the first legal command."""
    state = fold(log)
    log = list(log)
    for _ in range(turns):
        pending = state.pending
        assert pending is not None
        events, state = decide(state, pending.seat, legal_commands(state, pending.seat)[0])
        log += events
    return log, state


def secrets(log: list[Event], state: State, seat: Viewer) -> set[str]:
    """Everything `seat` must not learn before the end: the starting-hand cards still in other
    seats' hands (never face up), the draw pile, the hidden cards and the seed."""
    hidden: set[str] = set(state.draw) | set(state.hidden)
    for dealt in log:
        if isinstance(dealt, HandDealt) and dealt.seat != seat:
            hidden |= set(dealt.cards) & set(state.hands[dealt.seat])
    return {f'"{card}"' for card in hidden} | {state.server_seed}


def leaks(received: bytes, secret: set[str]) -> set[str]:
    return {item for item in secret if item.encode() in received}


VIEWERS: list[Viewer] = [0, 1, None]


# --- R42 views -------------------------------------------------------------------------


@pytest.mark.parametrize("turns", [0, 7, 20])
@pytest.mark.parametrize(("seats", "edition"), [(2, "towers"), (4, "towers"), (3, "classic")])
def test_r42_no_board_view_shows_a_secret_to_anyone(
    game_data: GameData, seats: int, edition: str, turns: int
) -> None:
    log, state = _played_for(_log(game_data, seats, edition), turns)
    assert state.phase == "playing"
    for seat in [*range(seats), None]:
        seen = msgspec.json.encode(view(state, seat))
        assert leaks(seen, secrets(log, state, seat)) == set(), seat


def test_r42_hidden_cards_not_yet_revealed_stay_secret_during_the_end_reveal() -> None:
    state = table(
        2,
        hands={0: [], 1: ["ROM-7"]},
        clear_face_up=True,
        draw=[],
        hidden=["LUC-5", "VER-4", "SIE-5"],
        active=1,
    )
    events, after = act(state, 1, PlayCard("ROM-7"), PlaceFloor(0))
    assert after.pending is not None and after.pending.step == "architetto_site"
    assert after.hidden == ("VER-4", "SIE-5")
    for seat in VIEWERS:
        seen = msgspec.json.encode(view(after, seat))
        assert b'"LUC-5"' in seen  # revealed: the card being built
        assert leaks(seen, {'"VER-4"', '"SIE-5"'}) == set()
        assert (
            leaks(encoder.encode(redact(events, seat, over=False)), {'"VER-4"', '"SIE-5"'}) == set()
        )


def test_r42_a_seat_sees_its_own_hand_and_only_the_size_of_the_others(
    game_data: GameData,
) -> None:
    state = fold(_log(game_data, 3))
    mine = view(state, 1)
    assert mine.hand == tuple(sorted(state.hands[1]))
    assert [seat.hand_size for seat in mine.players] == [3, 3, 3]
    assert view(state, None).hand == ()
    assert view(state, 1).legal_commands == ()  # seat 0 decides: nothing of its hand shows
    assert view(state, None).legal_commands == ()


def test_r42_the_draw_pile_and_the_hidden_cards_show_only_their_size(
    game_data: GameData,
) -> None:
    state = fold(_log(game_data, 2))
    seen = view(state, 0)
    assert seen.draw_count == len(state.draw)
    assert seen.architetto is not None
    assert seen.architetto.hidden_count == 3
    assert seen.architetto.discard is None


def test_r42_a_played_stack_shows_others_only_its_top_card_and_its_size() -> None:
    state = table(3, played={0: ["BOL-6", "ROM-7", "SIE-5"]})
    other = view(state, 1).players[0]
    assert (other.top_card, other.played_count, other.played) == ("SIE-5", 3, None)
    spectator = view(state, None).players[0]
    assert spectator.played is None
    own = view(state, 0)
    assert own.played == ("BOL-6", "ROM-7", "SIE-5")
    assert own.players[0].played == ("BOL-6", "ROM-7", "SIE-5")
    encoded = msgspec.json.encode(view(state, 1))
    assert b'"BOL-6"' not in encoded and b'"ROM-7"' not in encoded


def test_r42_the_architettos_discard_pile_shows_only_its_top_card_and_size() -> None:
    state = table(2, played={2: ["LUC-5", "MIL-1"]})
    seen = view(state, 0).architetto
    assert seen is not None
    assert (seen.top_card, seen.discard_count, seen.discard) == ("MIL-1", 2, None)


def test_r42_classic_tokens_lie_face_down_others_see_only_how_many() -> None:
    state = table(3, "classic", winners={"Roma": (0, 1), "Verona": (0, 2)})
    seen = view(state, 1).players
    assert (seen[0].token_count, seen[0].tokens) == (2, None)
    assert (seen[1].token_count, seen[1].tokens) == (1, (6,))
    assert all(seat.tokens is None for seat in view(state, None).players)
    assert view(state, 0).players[0].tokens == (9, 5)


def test_r42_classic_city_views_do_not_tell_others_who_holds_which_token() -> None:
    # The board view may show a viewer its own tokens, and of the others only how many they
    # hold: a scored city must not name another seat as the holder of its high or low token.
    state = table(3, "classic", winners={"Roma": (0, 1), "Verona": (2, 0)})
    for viewer in VIEWERS:
        for city in view(state, viewer).cities:
            if city.scored:
                assert city.high_seat in (None, viewer), (viewer, city.name)
                assert city.low_seat in (None, viewer), (viewer, city.name)


def test_r42_towers_tokens_lie_face_up() -> None:
    state = table(3, winners={"Roma": (0, 1)})
    assert view(state, 1).players[0].tokens == (9,)
    assert view(state, None).players[1].tokens == (6,)


def test_r42_at_the_end_everybody_sees_everything(game_data: GameData) -> None:
    log = _log(game_data, 2, "towers")
    final, events = play_out(fold(log), _first)
    log += events
    assert final.phase == "over"
    spectator = view(final, None)
    assert spectator.server_seed == SEED.hex()
    assert [seat.played for seat in spectator.players] == list(final.played[:2])
    assert spectator.architetto is not None
    assert spectator.architetto.discard == final.played[2]
    for seat in VIEWERS:
        assert redact(log, seat, over=True) == log


def test_r42_classic_tokens_are_turned_up_at_the_end(game_data: GameData) -> None:
    final, _ = play_out(fold(_log(game_data, 3, "classic")), _first)
    assert all(seat.tokens is not None for seat in view(final, None).players)


# --- R42 redaction of events ------------------------------------------------------------


def test_r42_a_dealt_hand_is_shown_only_to_its_seat(game_data: GameData) -> None:
    log = _log(game_data, 3)
    for seat in VIEWERS:
        hands = [event for event in redact(log, seat, over=False) if isinstance(event, HandDealt)]
        assert [hand.seat for hand in hands] == ([] if seat is None else [seat])


@pytest.mark.parametrize(
    "event",
    [
        SeedSealed("00" * 32),
        DrawPileStacked(("BOL-1", "MIL-1")),
        ArchitettoCardsSetAside(("BOL-1",)),
    ],
)
def test_r42_the_seed_the_draw_pile_and_the_hidden_cards_go_to_nobody_before_the_end(
    event: Event,
) -> None:
    for seat in [0, 1, 2, None]:
        assert not visible(event, seat, over=False)
        assert visible(event, seat, over=True)


def test_r42_public_events_go_to_everybody() -> None:
    for seat in [0, 1, None]:
        assert visible(CardPlayed(0, "BOL-1"), seat, over=False)


@pytest.mark.parametrize("turns", [0, 9, 30])
def test_r42_no_redacted_event_shows_a_secret_to_anyone(game_data: GameData, turns: int) -> None:
    log, state = _played_for(_log(game_data, 2), turns)
    assert state.phase == "playing"
    for seat in VIEWERS:
        # The card file in GameCreated lists every card id: it is public and not a secret.
        received = [e for e in redact(log, seat, over=False) if not isinstance(e, GameCreated)]
        assert leaks(encoder.encode(received), secrets(log, state, seat)) == set(), seat


def test_r42_the_seed_commitment_is_public_and_the_seed_is_not(game_data: GameData) -> None:
    log = create_game(
        edition="towers",
        seats=3,
        modules=[],
        game_data=game_data,
        server_seed=SEED,
        player="ann",
    )
    state = fold(log)
    seen = view(state, None)
    assert seen.seed_commitment == state.seed_commitment
    assert seen.server_seed is None
    assert SEED.hex().encode() not in encoder.encode(redact(log, 0, over=False))
    assert SEED.hex().encode() not in msgspec.json.encode(seen)


# --- R43 illegal commands -----------------------------------------------------------------


def _waiting_game(game_data: GameData) -> State:
    log = create_game(
        edition="towers",
        seats=3,
        modules=[],
        game_data=game_data,
        server_seed=SEED,
        player="ann",
    )
    return fold(log)


def _over(game_data: GameData) -> State:
    return play_out(fold(_log(game_data, 3)), _first)[0]


def _to_play(game_data: GameData) -> State:
    return table(3, hands={0: ["MIL-3", "VER-4"], 1: ["ROM-7"]})


def _to_place_last(game_data: GameData) -> State:
    state = table(3, hands={0: ["VER-4"]}, towers={"Verona": ((1, 1, 2, 2), ())})
    return act(state, 0, PlayCard("VER-4"))[1]


def _to_take(game_data: GameData) -> State:
    state = table(
        3,
        hands={0: ["MIL-3"]},
        clear_face_up=True,
        face_up={"Milano": "SIE-1", "Roma": "ROM-1"},
        towers={"Roma": ((0,), ()), "Siena": ((1,), ()), "Verona": ((0, 0, 1), (1, 1))},
        winners={"Verona": (0, 1)},
    )
    return act(state, 0, PlayCard("MIL-3"), PlaceFloor(0))[1]


def _to_move(game_data: GameData) -> State:
    return act(_to_take(game_data), 0, TakeCard("Milano"))[1]


def _to_trade(game_data: GameData) -> State:
    state = table(
        3,
        "towers",
        ["trade_routes"],
        hands={0: ["SIE-3"]},
        clear_face_up=True,
        markers=[(1, "Milano", "Parma", "trader"), (2, "Verona", "Parma", "bandit")],
    )
    return act(state, 0, PlayCard("SIE-3"), PlaceFloor(0))[1]


def _no_marker_left(game_data: GameData) -> State:
    # Not reachable in play (the step is passed, R44); arranged to check the refusal.
    state = table(
        4,
        "towers",
        ["trade_routes"],
        hands={0: ["SIE-3"]},
        markers=[(0, "Roma", "Siena", "trader")],
    )
    return waiting(state, 0, "trade_route", card="SIE-3", placed=1)


def _to_choose(game_data: GameData) -> State:
    state = table(
        2,
        hands={0: ["BOL-1"], 1: ["ROM-7"]},
        clear_face_up=True,
        draw=["LUC-5"],
    )
    return act(state, 0, PlayCard("BOL-1"), PlaceFloor(0), PlaceFloor(1))[1]


Arrange = Callable[[GameData], State]
BAD_SITE = 2


class Case(NamedTuple):
    arrange: Arrange
    seat: int
    command: Command
    code: str
    rule: str


CASES = [
    Case(_waiting_game, 0, PlayCard("BOL-4"), "game_not_started", "R7"),
    Case(_over, 0, PlayCard("BOL-4"), "game_over", "R19"),
    Case(_to_play, 1, PlayCard("ROM-7"), "not_your_decision", "R44"),
    Case(_to_play, 0, Skip(), "step_not_optional", "R44"),
    Case(_to_play, 0, PlaceFloor(0), "wrong_step", "R44"),
    Case(_to_play, 0, PlayCard("ROM-7"), "card_not_in_hand", "R10"),
    Case(_to_place_last, 0, PlaceFloor(BAD_SITE), "unknown_site", "R11"),  # type: ignore[arg-type]
    Case(_to_place_last, 0, PlaceFloor(0), "last_floor_must_fill_empty_site", "R12"),
    Case(_to_place_last, 0, Skip(), "step_not_optional", "R44"),
    Case(_to_take, 0, TakeCard("Siena"), "no_face_up_card", "R14"),
    Case(_to_take, 0, TakeCard("Roma"), "must_take_built_city", "R14"),
    Case(_to_take, 0, TakeCard("Atlantis"), "unknown_city", "R2"),
    Case(_to_take, 0, Skip(), "step_not_optional", "R44"),
    Case(_to_move, 0, MoveFloor("Milano", 0), "move_in_built_city", "R15"),
    Case(_to_move, 0, MoveFloor("Verona", 0), "city_already_scored", "R15"),
    Case(_to_move, 0, MoveFloor("Siena", 0), "no_floor_owned", "R15"),
    Case(_to_move, 0, MoveFloor("Roma", 1), "site_empty", "R46"),
    Case(_to_move, 0, MoveFloor("Roma", BAD_SITE), "unknown_site", "R15"),  # type: ignore[arg-type]
    Case(_to_move, 0, MoveFloor("Atlantis", 0), "unknown_city", "R2"),
    Case(_to_move, 1, Skip(), "not_your_decision", "R44"),
    Case(_to_trade, 0, PlaceTradeRoute(("Milano", "Roma"), "trader"), "no_such_signpost", "R30"),
    Case(_to_trade, 0, PlaceTradeRoute(("Milano", "Parma"), "bandit"), "signpost_taken", "R30"),
    Case(_to_trade, 0, PlaceTradeRoute(("Siena", "Roma"), "trader"), "played_city_on_route", "R30"),
    Case(_to_trade, 0, PlaceTradeRoute(("Bologna", "Parma"), "trader"), "city_marker_limit", "R30"),
    Case(_to_trade, 0, PlaceTradeRoute(("Lucca", "Atlantis"), "trader"), "unknown_city", "R2"),
    Case(_to_trade, 0, PlaceTradeRoute(("Milano", "Verona"), "pirate"), "unknown_side", "R30"),  # type: ignore[arg-type]
    Case(
        _no_marker_left,
        0,
        PlaceTradeRoute(("Milano", "Verona"), "trader"),
        "no_markers_left",
        "R31",
    ),
    Case(_to_choose, 0, ChooseArchitettoSite(BAD_SITE), "unknown_site", "R21"),  # type: ignore[arg-type]
    Case(_to_choose, 0, Skip(), "step_not_optional", "R44"),
    Case(_to_choose, 1, ChooseArchitettoSite(0), "not_your_decision", "R44"),
    Case(_to_choose, 0, PlaceFloor(0), "wrong_step", "R44"),
]


@pytest.mark.parametrize(
    "case", CASES, ids=[f"{case.code}-{case.rule}-{i}" for i, case in enumerate(CASES)]
)
def test_r43_an_illegal_command_is_refused_with_a_stable_code_and_changes_nothing(
    game_data: GameData, case: Case
) -> None:
    state, seat = case.arrange(game_data), case.seat
    before = msgspec.json.encode(state)
    options = legal_commands(state, seat)
    assert case.command not in options
    with pytest.raises(IllegalCommand) as caught:
        decide(state, seat, case.command)
    error = caught.value
    assert (error.code, error.rule) == (case.code, case.rule)
    assert str(error).endswith(f"({case.rule})")
    assert error.message == str(error)
    # Nothing changed: the same state holds and offers exactly what it did.
    assert msgspec.json.encode(state) == before
    assert legal_commands(state, seat) == options
    if state.pending is not None and state.pending.seat == seat:
        decide(state, seat, options[0])  # and still accepts a legal command


@pytest.mark.parametrize(("seats", "edition"), [(2, "towers"), (3, "classic")])
def test_r43_every_listed_command_is_accepted_and_nothing_else(
    game_data: GameData, seats: int, edition: str
) -> None:
    # decide accepts exactly the commands legal_commands lists, at every decision of a game.
    state = fold(_log(game_data, seats, edition))
    probes: list[Command] = [
        PlayCard("BOL-1"),
        PlaceFloor(0),
        PlaceFloor(1),
        TakeCard("Roma"),
        MoveFloor("Roma", 0),
        Skip(),
        ChooseArchitettoSite(0),
    ]
    while (pending := state.pending) is not None:
        options = legal_commands(state, pending.seat)
        for option in options:
            decide(state, pending.seat, option)
        for probe in probes:
            if probe not in options:
                with pytest.raises(IllegalCommand):
                    decide(state, pending.seat, probe)
        _, state = decide(state, pending.seat, options[-1])
    assert state.phase == "over"


def test_r43_every_reason_of_refusal_has_a_test_that_gives_it() -> None:
    """The codes of `domain.refusals` and `domain.decide`, each produced by some test (the
    catch-all `not_allowed` aside, which the playouts say never comes)."""
    here = Path(__file__).parents[1]
    sources = [Path(refusals.__file__), Path(decide_module.__file__), Path(setup.__file__)]
    codes = {
        code
        for source in sources
        for code in re.findall(r'IllegalCommand\(\s*"(\w+)"', source.read_text())
    }
    assert len(codes) > 20
    tests = "".join(path.read_text() for path in here.rglob("test_*.py"))
    untested = sorted(code for code in codes - {"not_allowed"} if f'"{code}"' not in tests)
    assert not untested, f"no test gives {untested}"


@pytest.mark.parametrize(
    "after_the_reveal",
    [PlayCard("NOPE-0"), Skip(), PlaceFloor(0), TakeCard("Roma")],
)
def test_r42_a_batch_ends_where_a_hidden_card_is_turned_up(after_the_reveal: Command) -> None:
    """A batch refused after a refill would tell its sender about the card refilled (what the
    next step is, whether the Architetto's site is forced...) while writing nothing. So any
    command after a reveal is refused in the same words, whatever the hidden cards were."""
    answers = set()
    for pile in (["VER-4", "LUC-5"], ["ROM-7", "SIE-3"], ["FIR-3"]):
        state = table(3, hands={0: ["MIL-5"]}, face_up={"Milano": "SIE-1"}, draw=pile)
        turn: list[Command] = [PlayCard("MIL-5"), PlaceFloor(0), TakeCard("Milano")]
        with pytest.raises(CommandRefused) as refused:
            decide_all(state, 0, [*turn, after_the_reveal])
        error = refused.value.error
        answers.add((refused.value.index, error.code, error.rule, error.message))
        events, _ = decide_all(state, 0, turn)  # the turn up to the reveal is accepted
        assert any(isinstance(event, CardRevealed) for event in events)
    assert answers == {
        (
            3,
            "sent_before_a_reveal",
            "R42",
            "command 2 turned up a hidden card: send the commands after it once you have "
            "seen it (R42)",
        )
    }

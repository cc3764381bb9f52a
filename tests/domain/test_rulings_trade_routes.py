"""Per-ruling tests of the Trade Routes module (R30 placing, R31 markers, R32 effect,
R47 precisions), with R17 and R44 where they decide whether the step happens at all.

Each test names the ruling of `docs/rulings.md` it checks. The signposts are
the `nine_city_board` pairs of `game-data.json` (placeholders, see its `provenance`); the
engine names a pair in board order (Bologna, Milano, Firenze, Ferrara, Lucca, Siena, Parma,
Roma, Verona).

Long on purpose: one short test per case, each named as a sentence, read like a table;
splitting the file would scatter cases of one ruling or one promise.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import msgspec
import pytest

from domain.commands import (
    PlaceFloor,
    PlaceTradeRoute,
    PlayCard,
    Skip,
    TakeCard,
)
from domain.events import (
    CardRevealed,
    CityScored,
    Event,
    GameEnded,
    StepSkipped,
    StepStarted,
    TradeRoutePlaced,
)
from domain.gamedata import GameData, TradeRoutes
from domain.legal import legal_commands
from domain.scoring import final_scores
from domain.state import State
from domain.view import MarkerView, view
from tests.domain.table import act, of_type, refused, table

TRADE = ["trade_routes"]
TRADE_STEP = StepStarted(0, "trade_route")

MarkerSpec = tuple[int, str, str, str]
Towers = Mapping[str, tuple[Sequence[int], Sequence[int]]]


def at_trade(
    card: str = "SIE-3",
    markers: Sequence[MarkerSpec] = (),
    winners: Mapping[str, tuple[int, int]] | None = None,
    towers: Towers | None = None,
    seats: int = 3,
) -> State:
    """Seat 0 has played the star card `card`, placed its floor and taken Roma's card (the
    only face-up card): the trade route step is next."""
    state = table(
        seats,
        "towers",
        TRADE,
        hands={0: [card, "ROM-7"], 1: ["SIE-4", "ROM-5"]},
        clear_face_up=True,
        face_up={"Roma": "BOL-1"},
        draw=["VER-4", "LUC-5"],
        markers=markers,
        winners=winners,
        towers=towers,
    )
    _, after = act(state, 0, PlayCard(card), PlaceFloor(0), TakeCard("Roma"))
    assert after.pending == TRADE_STEP
    return after


def routes(state: State, seat: int = 0) -> set[tuple[str, str]]:
    return {
        command.cities
        for command in legal_commands(state, seat)
        if isinstance(command, PlaceTradeRoute)
    }


def completing_milano(
    markers: Sequence[MarkerSpec],
    milano: tuple[Sequence[int], Sequence[int]] = ((0, 0, 0), (1, 1, 2)),
    seats: int = 3,
    bonus: tuple[int, ...] | None = None,
) -> tuple[list[Event], State]:
    """Seat 0 plays MIL-5 onto Milano's site 0, completing Milano (VII)."""
    state = table(
        seats,
        "towers",
        TRADE,
        hands={0: ["MIL-5", "ROM-7"], 1: ["SIE-4", "ROM-5"]},
        clear_face_up=True,
        towers={"Milano": milano},
        markers=markers,
    )
    if bonus is not None:
        state = msgspec.structs.replace(state, bonus=bonus)
    return act(state, 0, PlayCard("MIL-5"), PlaceFloor(0))


# --- R30 placing ----------------------------------------------------------------------------


def test_r30_after_a_star_card_the_seat_may_place_a_marker_on_a_free_signpost() -> None:
    state = at_trade()
    # All 14 signposts but the three of Siena, the played card's city; each side; and skip.
    assert len(routes(state)) == 11
    options = legal_commands(state, 0)
    assert len(options) == 2 * 11 + 1 and options[-1] == Skip()
    assert PlaceTradeRoute(("Milano", "Verona"), "trader") in options
    assert PlaceTradeRoute(("Milano", "Verona"), "bandit") in options
    events, after = act(state, 0, PlaceTradeRoute(("Milano", "Verona"), "trader"))
    assert events[0] == TradeRoutePlaced(0, ("Milano", "Verona"), "trader")
    assert after.markers_left[0] == 1
    assert view(after, 2).markers == (MarkerView(0, ("Milano", "Verona"), "trader"),)
    assert after.pending == StepStarted(1, "play_card")


def test_r30_a_marker_may_be_placed_bandit_side_up() -> None:
    events, after = act(at_trade(), 0, PlaceTradeRoute(("Lucca", "Parma"), "bandit"))
    assert of_type(events, TradeRoutePlaced) == [TradeRoutePlaced(0, ("Lucca", "Parma"), "bandit")]
    assert view(after, None).markers[0].side == "bandit"


def test_r30_the_step_comes_after_the_refill() -> None:
    state = table(
        3, "towers", TRADE, hands={0: ["SIE-3"]}, face_up={"Siena": "BOL-1"}, draw=["VER-4"]
    )
    events, _ = act(state, 0, PlayCard("SIE-3"), PlaceFloor(0), TakeCard("Siena"))
    assert events[-2:] == [CardRevealed("Siena", "VER-4"), TRADE_STEP]


def test_r30_neither_city_may_be_the_played_cards_city() -> None:
    state = at_trade()
    assert not any("Siena" in pair for pair in routes(state))
    for pair in (("Lucca", "Siena"), ("Firenze", "Siena"), ("Siena", "Roma")):
        error = refused(state, 0, PlaceTradeRoute(pair, "trader"))
        assert (error.code, error.rule) == ("played_city_on_route", "R30")


def test_r30_a_signpost_holds_at_most_one_marker() -> None:
    state = at_trade(markers=[(1, "Milano", "Verona", "bandit")])
    assert ("Milano", "Verona") not in routes(state)
    error = refused(state, 0, PlaceTradeRoute(("Milano", "Verona"), "trader"))
    assert (error.code, error.rule) == ("signpost_taken", "R30")


def test_r30_a_city_has_at_most_two_markers_pointing_to_it() -> None:
    state = at_trade(markers=[(1, "Milano", "Parma", "trader"), (2, "Verona", "Parma", "trader")])
    assert not any("Parma" in pair for pair in routes(state))
    for pair in (("Ferrara", "Parma"), ("Bologna", "Parma"), ("Lucca", "Parma")):
        error = refused(state, 0, PlaceTradeRoute(pair, "trader"))
        assert (error.code, error.rule) == ("city_marker_limit", "R30")
    # Milano and Verona each have one marker: their shared signpost is still free.
    assert ("Milano", "Verona") in routes(state)


def test_r30_only_a_signpost_of_the_board_takes_a_marker() -> None:
    state = at_trade()
    error = refused(state, 0, PlaceTradeRoute(("Milano", "Roma"), "trader"))
    assert (error.code, error.rule) == ("no_such_signpost", "R30")
    error = refused(state, 0, PlaceTradeRoute(("Milano", "Atlantis"), "trader"))
    assert error.code == "unknown_city"


def test_r30_declining_the_marker_is_a_skip() -> None:
    events, after = act(at_trade(), 0, Skip())
    assert events[0] == StepSkipped(0, "trade_route")
    assert after.markers == ()
    assert after.markers_left[0] == 2


def test_r30_a_card_without_a_star_gives_no_trade_route_step() -> None:
    state = table(3, "towers", TRADE, hands={0: ["SIE-5"]}, face_up={"Siena": "BOL-1"})
    events, after = act(state, 0, PlayCard("SIE-5"), PlaceFloor(0), TakeCard("Siena"))
    assert TRADE_STEP not in events
    assert after.pending == StepStarted(1, "play_card")


def test_r30_without_the_module_a_star_card_gives_no_trade_route_step() -> None:
    state = table(3, hands={0: ["SIE-3"]}, face_up={"Siena": "BOL-1"})
    events, after = act(state, 0, PlayCard("SIE-3"), PlaceFloor(0), TakeCard("Siena"))
    assert TRADE_STEP not in events
    assert after.markers_left == (0, 0, 0)


def test_r30_with_no_free_signpost_the_step_passes_without_a_command(
    game_data: GameData,
) -> None:
    # Unreachable with the shipped placeholder signposts and marker counts, so a card file
    # with two signposts: Parma-Ferrara holds a marker, Milano-Verona touches the played city.
    signposts = (("Milano", "Verona"), ("Parma", "Ferrara"))
    data = msgspec.structs.replace(
        game_data, trade_routes=TradeRoutes(signposts, (*signposts, ("Pistoia", "Lucca")))
    )
    state = table(
        3,
        "towers",
        TRADE,
        data=data,
        hands={0: ["MIL-4"]},
        clear_face_up=True,
        markers=[(1, "Parma", "Ferrara", "trader")],
    )
    events, after = act(state, 0, PlayCard("MIL-4"), PlaceFloor(0))
    assert TRADE_STEP not in events
    assert after.pending == StepStarted(1, "play_card")


# --- R31 markers -----------------------------------------------------------------------------


@pytest.mark.parametrize(("seats", "markers"), [(2, 2), (3, 2), (4, 1), (5, 1)])
def test_r31_two_markers_per_seat_with_2_or_3_seats_one_with_4_or_5(
    seats: int, markers: int
) -> None:
    state = table(seats, "towers", TRADE)
    assert state.markers_left == (markers,) * seats
    assert [seat.markers_left for seat in view(state, 0).players] == [markers] * seats


def test_r31_a_seat_without_a_marker_left_gets_no_trade_route_step() -> None:
    state = table(
        4,
        "towers",
        TRADE,
        hands={0: ["SIE-3"]},
        face_up={"Siena": "BOL-1"},
        markers=[(0, "Milano", "Verona", "trader")],
    )
    assert state.markers_left[0] == 0
    events, after = act(state, 0, PlayCard("SIE-3"), PlaceFloor(0), TakeCard("Siena"))
    assert TRADE_STEP not in events
    assert after.pending == StepStarted(1, "play_card")


def test_r31_the_second_marker_is_the_last() -> None:
    state = at_trade(markers=[(0, "Milano", "Verona", "trader")])
    _, after = act(state, 0, PlaceTradeRoute(("Lucca", "Parma"), "trader"))
    assert after.markers_left[0] == 0


# --- R32 effect ------------------------------------------------------------------------------


def test_r32_a_trader_pays_each_tower_winner_a_bonus_point() -> None:
    events, after = completing_milano([(2, "Milano", "Verona", "trader")])
    assert of_type(events, CityScored) == [CityScored("Milano", 0, 7, 1, 4, trade_bonus=1)]
    assert after.bonus == (1, 1, 0)
    assert [seat.trade_bonus for seat in view(after, None).players] == [1, 1, 0]


def test_r32_two_bandits_cost_each_tower_winner_two() -> None:
    events, after = completing_milano(
        [(1, "Milano", "Verona", "bandit"), (2, "Milano", "Parma", "bandit")]
    )
    (scored,) = of_type(events, CityScored)
    assert scored.trade_bonus == -2
    assert after.bonus == (-2, -2, 0)


def test_r32_one_trader_and_one_bandit_give_nothing() -> None:
    events, after = completing_milano(
        [(1, "Milano", "Verona", "trader"), (2, "Milano", "Parma", "bandit")]
    )
    (scored,) = of_type(events, CityScored)
    assert scored.trade_bonus == 0
    assert after.bonus == (0, 0, 0)


def test_r32_two_traders_pay_each_tower_winner_two() -> None:
    _, after = completing_milano(
        [(1, "Milano", "Verona", "trader"), (2, "Milano", "Parma", "trader")]
    )
    assert after.bonus == (2, 2, 0)


def test_r32_markers_pointing_elsewhere_do_nothing() -> None:
    events, after = completing_milano([(1, "Parma", "Verona", "trader")])
    assert of_type(events, CityScored)[0].trade_bonus == 0
    assert after.bonus == (0, 0, 0)


def test_r32_a_marker_on_an_already_scored_city_pays_nothing_but_counts_toward_its_limit() -> None:
    # Parma is scored (seat 1 high, seat 2 low) and has one marker. Seat 0 adds a Trader on
    # Parma-Ferrara: nobody is paid for Parma, and Parma now has its two markers.
    state = at_trade(
        markers=[(1, "Verona", "Parma", "bandit")],
        winners={"Parma": (1, 2)},
        towers={"Parma": ((1, 1, 1), (2, 2))},
    )
    assert ("Ferrara", "Parma") in routes(state)
    events, after = act(state, 0, PlaceTradeRoute(("Ferrara", "Parma"), "trader"))
    assert not of_type(events, CityScored)
    assert after.bonus == (0, 0, 0)
    assert after.pending == StepStarted(1, "play_card")
    # Seat 1 plays a star card next: no other Parma signpost is offered.
    _, later = act(after, 1, PlayCard("SIE-4"), PlaceFloor(0), TakeCard("Roma"))
    assert later.pending == StepStarted(1, "trade_route")
    assert not any("Parma" in pair for pair in routes(later, 1))
    error = refused(later, 1, PlaceTradeRoute(("Bologna", "Parma"), "trader"))
    assert (error.code, error.rule) == ("city_marker_limit", "R30")
    scores = final_scores(later).scores
    assert [score.trade_bonus for score in scores] == [0, 0, 0]


def test_r32_bonus_tokens_are_unlimited() -> None:
    # The box holds 24 bonus tokens; a seat already at +24 still gains.
    _, after = completing_milano(
        [(1, "Milano", "Verona", "trader"), (2, "Milano", "Parma", "trader")],
        milano=((0, 0, 0), (1, 0, 0)),
        bonus=(24, 0, 0),
    )
    assert after.bonus == (28, 0, 0)
    assert final_scores(after).scores[0].trade_bonus == 28


# --- R47 precisions ---------------------------------------------------------------------


def test_r47_a_signpost_is_an_unordered_pair() -> None:
    state = at_trade()
    events, after = act(state, 0, PlaceTradeRoute(("Verona", "Milano"), "trader"))
    (placed,) = of_type(events, TradeRoutePlaced)
    assert set(placed.cities) == {"Milano", "Verona"}
    # The signpost is now taken whichever way round it is named.
    _, later = act(after, 1, PlayCard("SIE-4"), PlaceFloor(0), TakeCard("Roma"))
    for pair in (("Milano", "Verona"), ("Verona", "Milano")):
        assert refused(later, 1, PlaceTradeRoute(pair, "bandit")).code == "signpost_taken"


def test_r47_a_seat_winning_both_towers_is_paid_twice() -> None:
    # Milano ends (0,0,0,0) and (1,0,0): seat 0 holds both towers.
    events, after = completing_milano(
        [(1, "Milano", "Verona", "trader")], milano=((0, 0, 0), (1, 0, 0))
    )
    assert of_type(events, CityScored) == [CityScored("Milano", 0, 7, 0, 4, trade_bonus=1)]
    assert after.bonus == (2, 0, 0)


def test_r47_the_bonus_counts_the_markers_present_when_the_city_is_scored() -> None:
    # A Bandit on Milano-Verona is there when Milano is scored; a Trader that seat 1 adds
    # afterwards on Milano-Parma changes nothing for Milano.
    _, after = completing_milano([(1, "Milano", "Verona", "bandit")])
    assert after.bonus == (-1, -1, 0)
    _, after = act(after, 0, Skip())
    _, after = act(after, 1, PlayCard("SIE-4"), PlaceFloor(0))
    assert after.pending == StepStarted(1, "trade_route")
    events, after = act(after, 1, PlaceTradeRoute(("Milano", "Parma"), "trader"))
    assert not of_type(events, CityScored)
    assert after.bonus == (-1, -1, 0)
    assert final_scores(after).scores[0].trade_bonus == -1


def test_r47_a_marker_placed_this_turn_counts_for_a_city_the_architetto_completes_right_after() -> (
    None
):
    # Seat 1 plays the last card, a star card, and puts a Trader on Milano-Verona. Then the
    # Architetto's hidden VER-4 completes Verona (forced on site 1, R21c): both of Verona's
    # tower winners, seat 0 and the Architetto, are paid.
    state = table(
        2,
        "towers",
        TRADE,
        hands={0: [], 1: ["SIE-3"]},
        clear_face_up=True,
        draw=[],
        hidden=["VER-4", "LUC-5", "BOL-7"],
        towers={"Verona": ((0, 0, 0), (1,)), "Lucca": ((0, 0), (1,)), "Bologna": ((1,), ())},
        active=1,
    )
    _, after = act(state, 1, PlayCard("SIE-3"), PlaceFloor(0))
    assert after.pending == StepStarted(1, "trade_route")
    events, after = act(after, 1, PlaceTradeRoute(("Milano", "Verona"), "trader"))
    assert of_type(events, CityScored) == [CityScored("Verona", 0, 5, 2, 2, trade_bonus=1)]
    assert after.phase == "over"
    assert after.result is not None
    assert [score.trade_bonus for score in after.result.scores] == [1, 0, 1]


def test_r47_the_architetto_is_paid_too() -> None:
    # Two seats: Milano ends (0,0,0,0) and (2,2,1): the Architetto holds the shorter tower.
    events, after = completing_milano(
        [(1, "Milano", "Verona", "trader")], milano=((0, 0, 0), (2, 2, 1)), seats=2
    )
    assert of_type(events, CityScored) == [CityScored("Milano", 0, 7, 2, 4, trade_bonus=1)]
    assert after.bonus == (1, 0, 1)
    seen = view(after, 0).architetto
    assert seen is not None and seen.trade_bonus == 1
    assert final_scores(after).scores[2].trade_bonus == 1


def test_r47_trade_bonus_totals_may_go_below_zero() -> None:
    _, after = completing_milano(
        [(1, "Milano", "Verona", "bandit"), (2, "Milano", "Parma", "bandit")]
    )
    scores = final_scores(after).scores
    assert scores[0].trade_bonus == -2
    assert scores[0].total == 7 - 2
    assert scores[1].trade_bonus == -2
    assert scores[1].total == 4 - 2
    ended = final_scores(msgspec.structs.replace(after, bonus=(-3, -2, 0)))
    assert isinstance(ended, GameEnded)
    assert ended.scores[0].total == 7 - 3

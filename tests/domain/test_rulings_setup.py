"""Per-ruling tests of editions, options, the deal and seating (R1-R8, R39, R40, R50).

Each test names the ruling of `docs/rulings.md` it checks. The games are created
through `domain.setup` exactly as the server creates them, from fixed seeds.

Long on purpose: one short test per case, each named as a sentence, read like a table;
splitting the file would scatter cases of one ruling or one promise.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import msgspec
import pytest

from domain.commands import Command, PlaceFloor, PlayCard
from domain.errors import IllegalCommand, InvalidOptions
from domain.events import (
    ArchitettoCardsSetAside,
    ArchitettoRevealed,
    CardRevealed,
    DrawPileStacked,
    Event,
    FaceUpDealt,
    FloorPlaced,
    GameCreated,
    GameStarted,
    HandDealt,
    SeatJoined,
    SeedRevealed,
    StepStarted,
    encoder,
    events_decoder,
)
from domain.evolve import fold
from domain.gamedata import GameData
from domain.legal import legal_commands
from domain.playout import play_out
from domain.setup import check_options, create_game, join_game, new_game
from domain.shuffle import shuffle_seed
from domain.state import State
from domain.view import view
from tests.domain.table import SEED, act, of_type, started, table

OTHER_SEED = bytes(range(100, 132))


def _log(
    game_data: GameData,
    seats: int,
    *,
    edition: str = "towers",
    modules: Sequence[str] = (),
    seed: bytes = SEED,
    entropies: Sequence[str] = (),
) -> list[Event]:
    return new_game(
        edition=edition,
        seats=seats,
        modules=modules,
        game_data=game_data,
        server_seed=seed,
        entropies=entropies,
    )


def _first(state: State, options: Sequence[Command]) -> Command:
    return options[0]


# --- R1 editions ---------------------------------------------------------------------------


def test_r1_edition_seats_and_modules_are_recorded_in_the_first_event(
    game_data: GameData,
) -> None:
    log = _log(game_data, 3, modules=["delegates", "trade_routes"])
    created = log[0]
    assert isinstance(created, GameCreated)
    assert (created.edition, created.seats) == ("towers", 3)
    assert set(created.modules) == {"trade_routes", "delegates"}
    assert not any(isinstance(event, GameCreated) for event in log[1:])
    board = fold(log).board
    assert (board.edition, board.seats, set(board.modules)) == (
        "towers",
        3,
        {"trade_routes", "delegates"},
    )


def test_r1_towers_and_classic_are_the_only_editions(game_data: GameData) -> None:
    assert check_options("towers", 3, [], game_data)[0] == "towers"
    assert check_options("classic", 3, [], game_data)[0] == "classic"
    with pytest.raises(InvalidOptions) as caught:
        check_options("deluxe", 3, [], game_data)
    assert caught.value.field == "edition"


def test_r1_options_cannot_change_once_the_game_is_created(game_data: GameData) -> None:
    # Joining takes no options: the table size decides when the game starts and is dealt.
    state = fold(
        create_game(
            edition="classic",
            seats=2,
            modules=[],
            game_data=game_data,
            server_seed=SEED,
            player="ann",
        )
    )
    joined = join_game(state, "bob")
    assert any(isinstance(event, GameStarted) for event in joined)
    assert not any(isinstance(event, GameCreated) for event in joined)
    assert fold(joined, state).board.edition == "classic"


# --- R2 player counts -----------------------------------------------------------------------


@pytest.mark.parametrize("seats", [0, 1, 6, 7])
def test_r2_a_game_has_two_to_five_seats(game_data: GameData, seats: int) -> None:
    with pytest.raises(InvalidOptions) as caught:
        check_options("towers", seats, [], game_data)
    assert caught.value.field == "seats"


@pytest.mark.parametrize("seats", [2, 3, 4, 5])
def test_r2_two_to_five_seats_are_accepted(game_data: GameData, seats: int) -> None:
    assert fold(_log(game_data, seats)).board.seats == seats


@pytest.mark.parametrize("edition", ["towers", "classic"])
def test_r2_five_seats_play_ten_cities_with_pistoia_and_all_55_cards(edition: str) -> None:
    state = started(5, edition)
    assert len(state.board.cities) == 10
    assert "Pistoia" in state.board.cities
    cards = [card for hand in state.hands for card in hand]
    cards += [card for card in state.face_up if card is not None]
    cards += list(state.draw)
    assert len(cards) == len(set(cards)) == 55
    assert sum(1 for card in cards if card.startswith("PIS-")) == 7


@pytest.mark.parametrize("edition", ["towers", "classic"])
@pytest.mark.parametrize("seats", [2, 3, 4])
def test_r2_fewer_than_five_seats_leave_pistoia_its_cards_and_tokens_out(
    seats: int, edition: str
) -> None:
    state = started(seats, edition)
    board = state.board
    assert "Pistoia" not in board.cities
    assert len(board.cities) == 9
    assert len(board.tokens) == 9
    everywhere = [card for hand in state.hands for card in hand]
    everywhere += [card for card in state.face_up if card is not None]
    everywhere += [*state.draw, *state.hidden]
    assert len(everywhere) == 48
    assert not any(card.startswith("PIS-") for card in everywhere)
    assert not any(card.startswith("PIS-") for card in board.cards)
    assert "Pistoia" not in [city.name for city in view(state, 0).cities]


# --- R3 tower supply ------------------------------------------------------------------------


@pytest.mark.parametrize("seats", [2, 3, 4, 5])
def test_r3_towers_gives_29_floors_to_every_builder(seats: int) -> None:
    state = started(seats)
    assert set(state.supply) == {29}
    assert len(state.supply) == state.board.builders


@pytest.mark.parametrize(("seats", "floors"), [(2, 39), (3, 29), (4, 21), (5, 21)])
def test_r3_classic_gives_39_29_21_21_floors_by_seat_count(seats: int, floors: int) -> None:
    state = started(seats, edition="classic")
    assert state.supply == (floors,) * seats
    assert all(seat.supply == floors for seat in view(state, None).players)


# --- R4 two seats ---------------------------------------------------------------------------


def test_r4_towers_with_two_seats_always_plays_with_the_architetto() -> None:
    state = started(2)
    assert state.board.architetto
    assert state.board.builders == 3
    assert state.supply == (29, 29, 29)
    assert len(state.hidden) == 3
    seen = view(state, 0).architetto
    assert seen is not None and seen.seat == 2 and seen.supply == 29 and seen.hidden_count == 3


def test_r4_classic_with_two_seats_plays_without_the_architetto_39_floors_each() -> None:
    state = started(2, edition="classic")
    assert not state.board.architetto
    assert state.board.builders == 2
    assert state.supply == (39, 39)
    assert state.hidden == ()
    assert view(state, 0).architetto is None


@pytest.mark.parametrize("seats", [3, 4, 5])
def test_r4_the_architetto_plays_only_with_two_seats(seats: int) -> None:
    assert not started(seats).board.architetto


def test_r39_classic_two_seats_play_head_to_head_on_the_nine_city_board(
    game_data: GameData,
) -> None:
    state = fold(_log(game_data, 2, edition="classic"))
    assert len(state.board.cities) == 9 and "Pistoia" not in state.board.cities
    assert state.supply == (39, 39)
    final, events = play_out(state, _first)
    assert final.phase == "over"
    assert {event.seat for event in of_type(events, FloorPlaced)} <= {0, 1}
    assert not of_type(events, ArchitettoRevealed)
    assert final.result is not None and len(final.result.scores) == 2


# --- R5 modules ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "modules", [[], ["trade_routes"], ["delegates"], ["trade_routes", "delegates"]]
)
def test_r5_each_module_is_optional_in_towers(game_data: GameData, modules: list[str]) -> None:
    board = fold(_log(game_data, 3, modules=modules)).board
    assert set(board.modules) == set(modules)
    assert board.trade_routes == ("trade_routes" in modules)
    assert (board.delegates is not None) == ("delegates" in modules)


@pytest.mark.parametrize("module", ["trade_routes", "delegates"])
def test_r5_modules_exist_only_in_towers(game_data: GameData, module: str) -> None:
    with pytest.raises(InvalidOptions) as caught:
        check_options("classic", 3, [module], game_data)
    assert caught.value.field == "modules"


def test_r5_an_unknown_module_is_refused(game_data: GameData) -> None:
    with pytest.raises(InvalidOptions) as caught:
        check_options("towers", 3, ["pirates"], game_data)
    assert caught.value.field == "modules"


# --- R6 the deal -----------------------------------------------------------------------------


@pytest.mark.parametrize("seats", [2, 3, 4, 5])
def test_r6_each_seat_is_dealt_three_star_cards(game_data: GameData, seats: int) -> None:
    log = _log(game_data, seats)
    stars = {card.id for card in game_data.cards if card.star}
    dealt = of_type(log, HandDealt)
    assert [hand.seat for hand in dealt] == list(range(seats))
    for hand in dealt:
        assert len(hand.cards) == 3
        assert set(hand.cards) <= stars
    all_dealt = [card for hand in dealt for card in hand.cards]
    assert len(set(all_dealt)) == 3 * seats


@pytest.mark.parametrize("seats", [2, 3, 4, 5])
def test_r6_the_draw_pile_holds_every_other_card_and_the_rest_of_the_stars(
    game_data: GameData, seats: int
) -> None:
    log = _log(game_data, seats)
    board = fold(log).board
    dealt = {card for hand in of_type(log, HandDealt) for card in hand.cards}
    (pile,) = of_type(log, DrawPileStacked)
    assert set(pile.cards) | dealt == set(board.cards)
    assert not set(pile.cards) & dealt
    assert len(pile.cards) == len(set(pile.cards))
    stars = [card for card in board.cards if board.cards[card].star]
    stars_in_pile = [card for card in pile.cards if board.cards[card].star]
    assert len(stars_in_pile) == len(stars) - 3 * seats  # 15 stars: none left with 5 seats
    if stars_in_pile:
        # The remaining stars are mixed into the pile, not stacked on top or at the bottom.
        positions = [pile.cards.index(card) for card in stars_in_pile]
        assert positions != list(range(len(positions)))
        assert positions != list(range(len(pile.cards) - len(positions), len(pile.cards)))


@pytest.mark.parametrize("seats", [2, 3, 4, 5])
def test_r6_one_card_goes_face_up_on_each_city_in_board_order_from_the_top_of_the_pile(
    game_data: GameData, seats: int
) -> None:
    log = _log(game_data, seats)
    state = fold(log)
    (pile,) = of_type(log, DrawPileStacked)
    (up,) = of_type(log, FaceUpDealt)
    cities = len(state.board.cities)
    assert up.cards == pile.cards[:cities]
    assert state.face_up == pile.cards[:cities]
    shown = {city.name: city.face_up for city in view(state, None).cities}
    assert list(shown) == [c.name for c in game_data.cities if seats == 5 or not c.five_player_only]
    assert tuple(shown.values()) == pile.cards[:cities]


def test_r6_with_the_architetto_the_next_three_cards_are_set_aside_face_down(
    game_data: GameData,
) -> None:
    log = _log(game_data, 2)
    state = fold(log)
    (pile,) = of_type(log, DrawPileStacked)
    (aside,) = of_type(log, ArchitettoCardsSetAside)
    assert aside.cards == pile.cards[9:12]
    assert state.hidden == pile.cards[9:12]
    assert state.draw == pile.cards[12:]


def test_r6_without_the_architetto_no_card_is_set_aside(game_data: GameData) -> None:
    log = _log(game_data, 3)
    assert not of_type(log, ArchitettoCardsSetAside)
    (pile,) = of_type(log, DrawPileStacked)
    assert fold(log).draw == pile.cards[9:]


# --- R7 seating and start -----------------------------------------------------------------


@pytest.mark.parametrize("seats", [2, 3, 4, 5])
def test_r7_seat_0_of_the_shuffled_order_starts(game_data: GameData, seats: int) -> None:
    log = _log(game_data, seats)
    (seating,) = of_type(log, GameStarted)
    assert sorted(seating.seat_players) == list(range(seats))
    assert log[-1] == StepStarted(0, "play_card")
    state = fold(log)
    assert state.pending == StepStarted(0, "play_card")
    names = [seat.player for seat in view(state, None).players]
    assert names == [f"player-{seating.seat_players[seat] + 1}" for seat in range(seats)]


def test_r7_the_seats_are_shuffled_so_the_creator_does_not_always_start(
    game_data: GameData,
) -> None:
    starters = set()
    for n in range(24):
        (seating,) = of_type(_log(game_data, 4, seed=bytes([n]) * 32), GameStarted)
        starters.add(seating.seat_players[0])
    assert len(starters) > 1


def test_r7_the_seating_follows_from_the_same_randomness_as_the_cards(
    game_data: GameData,
) -> None:
    # The same seed and entropies give the same seating; a different entropy reshuffles.
    seatings = {
        of_type(_log(game_data, 5, entropies=["", "", "", "", f"x{n}"]), GameStarted)[
            0
        ].seat_players
        for n in range(12)
    }
    assert len(seatings) > 1
    again = of_type(_log(game_data, 5, entropies=["", "", "", "", "x0"]), GameStarted)
    assert again[0].seat_players in seatings


def test_r7_a_game_waiting_for_players_refuses_commands_and_double_seats(
    game_data: GameData,
) -> None:
    state = fold(
        create_game(
            edition="towers",
            seats=3,
            modules=[],
            game_data=game_data,
            server_seed=SEED,
            player="ann",
        )
    )
    assert state.phase == "waiting"
    with pytest.raises(IllegalCommand) as caught:
        act(state, 0, PlayCard("BOL-4"))
    assert (caught.value.code, caught.value.rule) == ("game_not_started", "R7")
    with pytest.raises(IllegalCommand) as seated:
        join_game(state, "ann")
    assert (seated.value.code, seated.value.rule) == ("already_seated", "R7")
    full = fold(_log(game_data, 3))
    with pytest.raises(IllegalCommand) as closed:
        join_game(full, "dan")
    assert closed.value.code == "game_not_open"


# --- R8 prestige tokens -------------------------------------------------------------------


@pytest.mark.parametrize("seats", [4, 5])
def test_r8_each_city_has_a_high_token_of_its_floors_and_a_low_token_three_less(
    game_data: GameData, seats: int
) -> None:
    state = started(seats)
    floors = {city.name: city.floors for city in game_data.cities}
    for city in view(state, None).cities:
        assert city.capacity == floors[city.name]
        assert city.tokens_left == (floors[city.name], floors[city.name] - 3)


def test_r8_scoring_a_city_hands_out_its_two_tokens() -> None:
    # Ferrara (V): high 5 and low 2.
    state = table(3, hands={0: ["FER-2"]}, towers={"Ferrara": ((0, 0), (1, 1))})
    _, after = act(state, 0, PlayCard("FER-2"), PlaceFloor(0))
    ferrara = next(city for city in view(after, None).cities if city.name == "Ferrara")
    assert ferrara.scored and ferrara.tokens_left == ()
    assert view(after, None).players[0].tokens == (5,)
    assert view(after, None).players[1].tokens == (2,)


# --- R40 fair randomness ----------------------------------------------------------------


def test_r40_the_game_commits_to_the_sha256_of_its_secret_seed(game_data: GameData) -> None:
    log = _log(game_data, 3)
    created = log[0]
    assert isinstance(created, GameCreated)
    assert created.seed_commitment == hashlib.sha256(SEED).hexdigest()
    assert created.shuffle_algorithm == "patrician-shuffle/1"
    assert view(fold(log), None).seed_commitment == created.seed_commitment


def test_r40_the_seed_stays_secret_until_the_end_and_is_then_published(
    game_data: GameData,
) -> None:
    state = fold(_log(game_data, 2))
    assert view(state, 0).server_seed is None
    assert view(state, None).server_seed is None
    final, events = play_out(state, _first)
    assert final.phase == "over"
    assert events[-1] == SeedRevealed(SEED.hex())
    assert view(final, None).server_seed == SEED.hex()
    assert hashlib.sha256(bytes.fromhex(SEED.hex())).hexdigest() == final.seed_commitment


def test_r40_the_published_seed_and_entropies_re_derive_the_whole_deal(
    game_data: GameData,
) -> None:
    log = _log(game_data, 4, entropies=["ann's dice", "", "bob", "42"])
    entropies = [joined.entropy for joined in of_type(log, SeatJoined)]
    assert entropies == ["ann's dice", "", "bob", "42"]
    again = _log(game_data, 4, entropies=entropies)
    assert again == log


@pytest.mark.parametrize("changed", [0, 1, 2, 3])
def test_r40_every_seats_entropy_changes_the_shuffle(game_data: GameData, changed: int) -> None:
    base = ["a", "b", "c", "d"]
    other = list(base)
    other[changed] = "z"
    deal = of_type(_log(game_data, 4, entropies=base), DrawPileStacked)
    moved = of_type(_log(game_data, 4, entropies=other), DrawPileStacked)
    assert deal != moved


def test_r40_the_shuffle_seed_hashes_the_server_seed_and_every_entropy_in_join_order() -> None:
    # The algorithm as documented in domain/shuffle.py, recomputed independently.
    entropies = ["ann", "", "bob"]
    expected = hashlib.sha256(b"patrician-shuffle/1\x00" + SEED)
    for entropy in entropies:
        raw = entropy.encode()
        expected.update(len(raw).to_bytes(4, "big") + raw)
    assert shuffle_seed(SEED, entropies) == expected.digest()
    assert shuffle_seed(SEED, ["bob", "", "ann"]) != expected.digest()


def test_r40_a_different_server_seed_deals_differently(game_data: GameData) -> None:
    first = of_type(_log(game_data, 3, seed=SEED), DrawPileStacked)
    second = of_type(_log(game_data, 3, seed=OTHER_SEED), DrawPileStacked)
    assert first != second


# --- R50 records -----------------------------------------------------------------------


def test_r50_the_draw_pile_is_listed_top_first(game_data: GameData) -> None:
    log = _log(game_data, 3)
    (pile,) = of_type(log, DrawPileStacked)
    state = fold(log)
    assert state.face_up == pile.cards[:9]
    assert state.draw == pile.cards[9:]
    # The first refill reveals the card right under the face-up ones.
    card = state.hands[0][0]
    events, after = act(state, 0, PlayCard(card), PlaceFloor(0))
    (take,) = legal_commands(after, 0)
    events, after = act(after, 0, take)
    (revealed,) = of_type(events, CardRevealed)
    assert revealed.card == pile.cards[9]
    assert after.draw == pile.cards[10:]


def test_r50_the_architettos_hidden_cards_are_revealed_in_the_order_set_aside() -> None:
    # The last seat plays its last card; the three hidden cards follow in the order set aside.
    state = table(
        2,
        hands={0: [], 1: ["ROM-7"]},
        clear_face_up=True,
        draw=[],
        hidden=["SIE-5", "VER-4", "LUC-5"],
        towers={
            "Siena": ((0, 0, 0), (1,)),
            "Verona": ((0, 0), (1,)),
            "Lucca": ((1, 1, 1), (0,)),
        },
        active=1,
    )
    events, after = act(state, 1, PlayCard("ROM-7"), PlaceFloor(0))
    revealed = of_type(events, ArchitettoRevealed)
    assert [card.card for card in revealed] == ["SIE-5", "VER-4", "LUC-5"]
    assert all(card.source == "hidden" for card in revealed)
    assert after.played[2][-3:] == ("SIE-5", "VER-4", "LUC-5")


def test_r50_a_game_plays_with_the_card_file_it_was_created_with(game_data: GameData) -> None:
    # A card file where Verona's "take any" card shows the move symbol instead.
    cards = tuple(
        msgspec.structs.replace(card, action="move_top_floor") if card.id == "VER-2" else card
        for card in game_data.cards
    )
    custom = msgspec.structs.replace(game_data, cards=cards)
    log = _log(custom, 3)
    created = log[0]
    assert isinstance(created, GameCreated)
    assert created.game_data == custom
    board = fold(log).board
    assert board.cards["VER-2"].move and not board.cards["VER-2"].take_any
    # Re-encoding and decoding the log keeps the card file with the game.
    replayed = fold(events_decoder.decode(encoder.encode(log))).board
    assert replayed.cards["VER-2"].move

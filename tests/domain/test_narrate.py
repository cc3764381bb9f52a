"""The words of a game name each seat by its player ("Bea (seat 1)") once the seats are drawn,
and by number where no name is known (`patrician simulate`): what the log, the replay and
every notification say."""

from __future__ import annotations

from msgspec.structs import replace

from domain.events import CardPlayed, GameCreated, HandDealt, StepStarted
from domain.narrate import narrate, seat_names
from server.config.card_data import load_game_data
from tests.domain.table import started


def test_each_seat_is_named_by_its_player_once_the_seats_are_drawn() -> None:
    state = replace(started(3), names=("Ada", "Bea", "Cy"))
    names = seat_names(state)
    assert names == tuple(("Ada", "Bea", "Cy")[joined] for joined in state.seat_players)
    seat = 1
    who = f"{names[seat]} (seat {seat})"
    played = CardPlayed(seat=seat, card=state.hands[seat][0])
    assert (narrate(state.board, played, names) or "").startswith(f"{who} plays ")
    turn = StepStarted(seat=seat, step="play_card")
    assert narrate(state.board, turn, names) == f"-- {who}'s turn --"
    dealt = HandDealt(seat=seat, cards=state.hands[seat])
    assert (narrate(state.board, dealt, names) or "").startswith(f"{who} was dealt ")


def test_a_seat_without_a_known_name_is_told_by_its_number() -> None:
    state = started(3)
    played = CardPlayed(seat=2, card=state.hands[2][0])
    assert (narrate(state.board, played) or "").startswith("seat 2 plays ")
    assert (narrate(state.board, played, ("Ada", "", "")) or "").startswith("seat 2 plays ")
    dealt = HandDealt(seat=2, cards=state.hands[2])
    assert (narrate(state.board, dealt) or "").startswith("Seat 2 was dealt ")


def test_a_game_created_is_told_in_words_not_code_names() -> None:
    state = started(3)
    created = GameCreated(
        rules_version=1,
        edition="towers",
        seats=4,
        modules=("trade_routes", "delegates"),
        seed_commitment="",
        shuffle_algorithm="",
        game_data=load_game_data(),
    )
    said = narrate(state.board, created)
    assert said == "A game for 4 players was created: Towers, Trade Routes, Delegates."
    alone = narrate(state.board, replace(created, edition="classic", modules=()))
    assert alone == "A game for 4 players was created: Classic."

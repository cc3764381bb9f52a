"""The game notation (docs/notation.md): every kind of game is written one line per turn and
parses back into exactly the record's commands, and no text makes the parser fail otherwise
than with a `NotationError` that says where.

The records are built without a server: seeded random playouts of the pure domain, appended
the way the command path appends them (a seat's decisions up to a revealed card or the end of
its decision), chained and handed to `build_record`.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

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
from domain.decide import decide, turns_up_a_card
from domain.events import Event, encoder, event_decoder
from domain.evolve import fold
from domain.legal import legal_commands
from domain.playout import pick
from domain.setup import cancel_game, create_game, join_game, leave_game
from domain.state import State
from evidence.notation import (
    FORMAT,
    Notation,
    NotationError,
    Turn,
    format_notation,
    notation_of,
    record_commands,
    write_notation,
)
from evidence.notation_parse import parse_notation
from evidence.record import LoggedEvent, Record, RecordCommand, build_record
from server.config.card_data import load_game_data
from store.chain import ZERO_HASH, extend

DATA = load_game_data()
NAMES = ("Mary", "John", "Ada", "Ugo", "Lia")
TIME = "2026-11-30T01:30:02.114Z"


class Table:
    """A game's log and appends as the store would keep them."""

    def __init__(self) -> None:
        self.log: list[LoggedEvent] = []
        self.appends: list[RecordCommand] = []
        self.state = State()

    def append(
        self,
        kind: str,
        player: str,
        events: Sequence[Event],
        *,
        command_id: str,
        seat: int | None = None,
        commands: Sequence[Command] = (),
    ) -> None:
        first = len(self.log) + 1
        datas = [encoder.encode(event) for event in events]
        hashes = extend(self.log[-1].hash if self.log else ZERO_HASH, first, datas)
        self.log += [
            LoggedEvent(first + i, event, data, hash_)
            for i, (event, data, hash_) in enumerate(zip(events, datas, hashes, strict=True))
        ]
        self.state = fold(events, self.state)
        self.appends.append(
            RecordCommand(
                command_id, kind, player, seat, TIME, tuple(commands), first, len(self.log)
            )
        )

    def record(self, seat: int | None = None) -> Record:
        return build_record("g3f2c0ffee", self.state, self.log, self.appends, seat)


def opened(edition: str, seats: int, modules: Sequence[str], rng: random.Random) -> Table:
    """A table with its creator seated."""
    table = Table()
    created = create_game(
        edition=edition,
        seats=seats,
        modules=modules,
        game_data=DATA,
        server_seed=rng.randbytes(32),
        player="p0",
        entropy="e0",
        name=NAMES[0],
    )
    table.append("create", "p0", created, command_id="create")
    return table


def play(
    edition: str,
    seats: int,
    modules: Sequence[str] = (),
    seed: int = 0,
    *,
    appends: int | None = None,
) -> Table:
    """A seeded random game, played to the end (or for `appends` appends of commands)."""
    rng = random.Random(seed)
    table = opened(edition, seats, modules, rng)
    for k in range(1, seats):
        joined = join_game(table.state, f"p{k}", f"e{k}", NAMES[k])
        table.append("join", f"p{k}", joined, command_id=f"join:p{k}")
    while (pending := table.state.pending) is not None and appends != len(table.appends) - seats:
        seat, state = pending.seat, table.state
        batch: list[Command] = []
        events: list[Event] = []
        while True:
            command = pick(legal_commands(state, seat), rng)
            decided, state = decide(state, seat, command)
            batch.append(command)
            events += decided
            after = state.pending
            if turns_up_a_card(decided) or after is None or after.seat != seat:
                break
            if after.step == "play_card":
                break
        player = state.players[state.seat_players[seat]]
        table.append(
            "commands",
            player,
            events,
            command_id=f"c{len(table.appends)}",
            seat=seat,
            commands=batch,
        )
    return table


def game(edition: str, seats: int, modules: Sequence[str] = (), seed: int = 0) -> Record:
    return play(edition, seats, modules, seed).record()


def turn_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line and not line.startswith("[")]


def assert_round_trip(record: Record) -> str:
    text = write_notation(record)
    parsed = parse_notation(text)
    assert parsed.commands() == record_commands(record)
    assert parsed == notation_of(record)
    cards = [command for _, command in record_commands(record) if isinstance(command, PlayCard)]
    lines = turn_lines(text)
    assert len(lines) == len(cards) == len(parsed.turns)
    for number, (line, card) in enumerate(zip(lines, cards, strict=True), 1):
        assert line.startswith(f"{number}. S")
        assert line.split()[2] == card.card
    return text


KINDS = [
    *[("towers", seats, ()) for seats in range(2, 6)],
    *[("classic", seats, ()) for seats in range(2, 6)],
    ("towers", 2, ("trade_routes",)),
    ("towers", 3, ("trade_routes",)),
    ("towers", 4, ("delegates",)),
    ("towers", 5, ("delegates",)),
    ("towers", 2, ("trade_routes", "delegates")),
    ("towers", 3, ("trade_routes", "delegates")),
    ("towers", 5, ("trade_routes", "delegates")),
]


@pytest.mark.parametrize(("edition", "seats", "modules"), KINDS)
@pytest.mark.parametrize("seed", [1, 2])
def test_every_kind_of_game_is_one_line_per_turn_and_parses_back_into_its_commands(
    edition: str, seats: int, modules: tuple[str, ...], seed: int
) -> None:
    record = game(edition, seats, modules, seed)
    text = assert_round_trip(record)
    notation = parse_notation(text)
    assert notation.tag("Edition") == edition
    assert notation.tag("Seats") == str(seats)
    assert notation.tag("Modules") == " ".join(modules)
    assert notation.tag("Result") is not None


@pytest.mark.parametrize(("edition", "seats", "modules"), [KINDS[0], KINDS[5], KINDS[-1]])
def test_with_the_records_deal_the_commands_of_the_notation_re_decide_the_game(
    edition: str, seats: int, modules: tuple[str, ...]
) -> None:
    record = game(edition, seats, modules, 4)
    first = next(entry.first_version for entry in record.commands if entry.kind == "commands")
    dealt = fold(event_decoder.decode(entry.data) for entry in record.events[: first - 1])
    state = dealt
    for seat, command in parse_notation(write_notation(record)).commands():
        _, state = decide(state, seat, command)
    assert state.phase == "over" and state.result == record.result
    assert state.version == record.head.version


def test_a_three_seat_game_is_written_with_a_header_of_tag_pairs_and_a_blank_line() -> None:
    record = game("towers", 3, ("trade_routes", "delegates"), 1)
    text = write_notation(record)
    header, turns = text.split("\n\n")
    seat_of = {p.seat: p for p in record.players}
    assert header.splitlines()[:7] == [
        f'[Format "{FORMAT}"]',
        '[Game "g3f2c0ffee"]',
        '[Edition "towers"]',
        '[Seats "3"]',
        '[Modules "trade_routes delegates"]',
        f'[Rules "{record.rules_version}"]',
        f'[Commitment "{record.fairness.seed_commitment}"]',
    ]
    assert f'[Seed "{record.fairness.server_seed}"]' in header
    for seat in range(3):
        player = seat_of[seat]
        assert f'[Seat{seat} "{player.name} ({player.player_id})"]' in header
    assert record.result is not None
    winners = " ".join(f"S{seat}" for seat in record.result.winners)
    assert f'[Result "{winners}"]' in header
    assert text.endswith("\n") and not turns.startswith("\n")


def test_the_architetto_game_writes_the_sites_a_seat_chooses_in_that_seats_turn() -> None:
    record = game("towers", 2, (), 1)
    text = assert_round_trip(record)
    assert " arch " in text
    chosen = [
        (entry.seat, command)
        for entry in record.commands
        for command in entry.commands
        if isinstance(command, ChooseArchitettoSite)
    ]
    turns = parse_notation(text).turns
    written = [
        (turn.seat, command)
        for turn in turns
        for command in turn.commands
        if isinstance(command, ChooseArchitettoSite)
    ]
    assert written == chosen and chosen
    assert record.result is not None
    architetto = record.result.scores[-1]
    assert architetto.seat == 2
    assert (parse_notation(text).tag("Scores") or "").endswith(f"Architetto {architetto.total}")


def test_moves_skips_and_trade_routes_are_written_in_words() -> None:
    record = game("towers", 3, ("trade_routes",), 1)
    text = assert_round_trip(record)
    commands = [command for _, command in record_commands(record)]
    assert any(isinstance(c, Skip) for c in commands) and " skip" in text
    move = next(c for c in commands if isinstance(c, MoveFloor))
    assert f" move {move.city} {move.from_site}" in text
    route = next(c for c in commands if isinstance(c, PlaceTradeRoute))
    assert f" route {route.cities[0]}-{route.cities[1]} {route.side}" in text


def test_a_cancelled_table_has_a_header_with_its_players_and_no_turns() -> None:
    table = opened("towers", 3, (), random.Random(7))
    table.append("join", "p1", join_game(table.state, "p1", "e1", "John"), command_id="join:p1")
    table.append("leave", "p1", leave_game(table.state, "p1"), command_id="leave:p1:0")
    table.append("join", "p2", join_game(table.state, "p2", "e2", "Ada"), command_id="join:p2")
    waiting = write_notation(table.record())
    assert "Result" not in waiting and "Seed" not in waiting
    table.append("cancel", "p0", cancel_game(table.state, "p0"), command_id="cancel")
    record = table.record()
    text = assert_round_trip(record)
    assert turn_lines(text) == [] and "\n\n" not in text
    notation = parse_notation(text)
    assert notation.turns == ()
    assert notation.tag("Result") == "cancelled"
    assert notation.tag("Joined0") == "Mary (p0)"
    assert notation.tag("Joined1") == "Ada (p2)"
    assert record.fairness.server_seed is not None
    assert notation.tag("Seed") == record.fairness.server_seed


def test_a_game_in_play_lists_the_commands_made_so_far_and_no_result() -> None:
    record = play("towers", 4, ("trade_routes",), 3, appends=20).record(seat=2)
    assert not record.complete
    text = assert_round_trip(record)
    notation = parse_notation(text)
    assert notation.tag("Result") is None and notation.tag("Seed") is None
    assert notation.commands() == record_commands(record)


def test_decisions_made_by_a_bot_or_the_clock_are_marked_after_them() -> None:
    record = game("towers", 3, ("trade_routes",), 1)
    later = next(  # an append in the middle of a turn of seat 0 or 2
        index
        for index, entry in enumerate(record.commands)
        if entry.commands and entry.seat != 1 and not isinstance(entry.commands[0], PlayCard)
    )
    marked = tuple(
        msgspec.structs.replace(entry, by="bot:greedy")
        if entry.seat == 1
        else msgspec.structs.replace(entry, by="clock:greedy")
        if index == later
        else entry
        for index, entry in enumerate(record.commands)
    )
    record = msgspec.structs.replace(record, commands=marked)
    text = assert_round_trip(record)
    turns = parse_notation(text).turns
    for line, turn in zip(turn_lines(text), turns, strict=True):
        if turn.seat == 1:
            assert line.endswith(" {bot:greedy}") and line.count("{") == 1
            assert set(turn.by) == {"bot:greedy"}
    mixed = next(turn for turn in turns if "clock:greedy" in turn.by)
    line = turn_lines(text)[mixed.number - 1]
    assert " {} " in line and line.endswith(" {clock:greedy}")
    assert mixed.by[0] == "" and mixed.by[-1] == "clock:greedy"


def test_names_that_are_not_plain_words_are_written_as_json_strings_and_read_back() -> None:
    odd = Notation(
        tags=(("Event", 'a "friendly" game\n'), ("Seats", "2")),
        turns=(
            Turn(
                1,
                0,
                (
                    PlayCard("skip"),
                    PlaceFloor(1),
                    TakeCard("Reggio-Emilia"),
                    MoveFloor("Città", 0),
                    PlaceTradeRoute(("Reggio-Emilia", "Parma"), "bandit"),
                    ChooseArchitettoSite(1),
                ),
                ("", "", "", "", "bot:x", "bot:x"),
            ),
            Turn(2, 1, (PlayCard("0"), TakeCard("take"), Skip()), ("", "", "")),
        ),
    )
    text = format_notation(odd)
    assert '1. S0 "skip" 1 take Reggio-Emilia move "Città" 0 {} route' in text
    assert '2. S1 "0" take "take" skip' in text
    assert parse_notation(text) == odd


def test_a_hand_typed_notation_may_indent_quote_plain_names_and_end_lines_in_crlf() -> None:
    text = (
        '[Seats "2"]\r\n\r\n  1.  S0  FIR-3 0\t1 take "Firenze"\r\n'
        '2. S1 MIL-1 0 route "Lucca" Siena trader { bot:greedy }\r\n'
    )
    assert parse_notation(text).commands() == [
        (0, PlayCard("FIR-3")),
        (0, PlaceFloor(0)),
        (0, PlaceFloor(1)),
        (0, TakeCard("Firenze")),
        (1, PlayCard("MIL-1")),
        (1, PlaceFloor(0)),
        (1, PlaceTradeRoute(("Lucca", "Siena"), "trader")),
    ]
    assert parse_notation(text).turns[1].by == ("bot:greedy",) * 3


@pytest.mark.parametrize(
    ("text", "line", "column", "says"),
    [
        ("[Seats 3]\n", 1, 1, "tag pair"),
        ('[Seats "3"]\n[Seats "3"]\n', 2, 2, "second Seats"),
        ('[Seats "6"]\n', 1, 8, "2 to 5"),
        ('[Format "patrician-notation/9"]\n', 1, 9, "the format is"),
        ('1. S0 FIR-3 0\n[Game "g"]\n', 2, 1, "after the first turn"),
        ("FIR-3 0\n", 1, 1, "number and seat"),
        ("2. S0 FIR-3\n", 1, 1, "turn 2 where turn 1"),
        ("01. S0 FIR-3\n", 1, 1, "turn 01"),
        ("1. S0 FIR-3\n1. S1 MIL-1\n", 2, 1, "turn 1 where turn 2"),
        ('[Seats "3"]\n1. S3 FIR-3\n', 2, 4, "no seat S3"),
        ("1. S0\n", 1, 6, "without a command"),
        ("1. S0 FIR-3 0 2\n", 1, 15, "'2' where a command"),
        ("1. S0 FIR-3 take\n", 1, 17, "the line ends where a city"),
        ("1. S0 FIR-3 move Siena 2\n", 1, 24, "0 or 1"),
        ("1. S0 FIR-3 route Lucca trader\n", 1, 19, "two cities"),
        ("1. S0 FIR-3 route Lucca-Siena both\n", 1, 31, "trader or bandit"),
        ("1. S0 FIR-3 0 MIL-1\n", 1, 15, "second card"),
        ("1. S0 0 take Lucca\n", 1, 7, "begins with the card"),
        ("1. S0 {bot:greedy} FIR-3\n", 1, 7, "follows no command"),
        ("1. S0 FIR-3 {bot\n", 1, 13, "not closed by }"),
        ('1. S0 "FIR-3\n', 1, 7, 'not closed by "'),
        ("1. S0 FIR-3 }\n", 1, 13, "closes no comment"),
        ('1. S0 "\\ud800"\n', 1, 7, "not a valid JSON string"),
        ('1. S0 ""\n', 1, 7, "an empty name"),
        ("1. S0 FIR-3{bot:greedy}\n", 1, 12, "separated by spaces"),
        ("1. S0 FIR-3 take Città\n", 1, 18, "JSON strings"),
        ("1. S0 trader\n", 1, 7, "where a command"),
        (f"{'9' * 5000}. S0 FIR-3\n", 1, 1, "where turn 1"),
    ],
)
def test_malformed_text_is_refused_naming_the_line_and_the_column(
    text: str, line: int, column: int, says: str
) -> None:
    with pytest.raises(NotationError) as refused:
        parse_notation(text)
    assert (refused.value.line, refused.value.column) == (line, column), str(refused.value)
    assert says in refused.value.message
    assert str(refused.value).startswith(f"line {line}, column {column}: ")


SAMPLE = write_notation(game("towers", 3, ("trade_routes", "delegates"), 5))
NOTATION_CHARACTERS = st.sampled_from(
    list('0123456789. S-{}[]"\\\t\r\nabkmoprstuvFIRLUCtakemoveroute')
)


def parse_or_refuse(text: str) -> Notation | None:
    """The text's notation, or None when it is refused as it should be (any other exception
    escapes and fails the test); what is parsed is written back the same."""
    refused: NotationError | None = None
    try:
        notation = parse_notation(text)
    except NotationError as error:
        refused = error
    if refused is not None:
        assert refused.line >= 1 and refused.column >= 1
        return None
    assert parse_notation(format_notation(notation)) == notation
    return notation


@given(st.text())
def test_any_text_is_parsed_or_refused_with_a_notation_error(text: str) -> None:
    parse_or_refuse(text)


@given(st.text(NOTATION_CHARACTERS))
def test_text_made_of_the_notations_own_characters_is_parsed_or_refused(text: str) -> None:
    parse_or_refuse(text)


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["delete", "insert", "replace", "duplicate", "swap"]),
            st.integers(min_value=0, max_value=len(SAMPLE)),
            st.integers(min_value=0, max_value=len(SAMPLE)),
            st.text(NOTATION_CHARACTERS, max_size=4) | st.text(max_size=3),
        ),
        min_size=1,
        max_size=4,
    )
)
def test_a_mutated_notation_is_parsed_or_refused_with_a_notation_error(
    mutations: list[tuple[str, int, int, str]],
) -> None:
    text = SAMPLE
    for kind, first, second, piece in mutations:
        at, to = sorted((first % (len(text) + 1), second % (len(text) + 1)))
        lines = text.split("\n")
        if kind == "delete":
            text = text[:at] + text[min(to, at + 8) :]
        elif kind == "insert":
            text = text[:at] + piece + text[at:]
        elif kind == "replace":
            text = text[:at] + piece + text[at + len(piece) :]
        elif kind == "duplicate":
            line = at % len(lines)
            text = "\n".join([*lines[: line + 1], lines[line], *lines[line + 1 :]])
        else:
            i, j = at % len(lines), to % len(lines)
            lines[i], lines[j] = lines[j], lines[i]
            text = "\n".join(lines)
    parse_or_refuse(text)


GAMES = st.sampled_from(KINDS).flatmap(
    lambda kind: st.tuples(st.just(kind), st.integers(min_value=0, max_value=2**32))
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(GAMES)
def test_any_seeded_game_parses_back_into_its_commands(
    drawn: tuple[tuple[str, int, tuple[str, ...]], int],
) -> None:
    (edition, seats, modules), seed = drawn
    assert_round_trip(game(edition, seats, modules, seed))


@pytest.mark.parametrize("name", ["architetto", "five-seats", "classic", "rules-2", "cancelled"])
def test_the_fixture_records_as_the_server_served_them_round_trip_through_their_notation(
    name: str,
) -> None:
    from pathlib import Path

    from evidence.audit import record_decoder

    raw = (Path(__file__).parent.parent / "fixtures" / "records" / f"{name}.json").read_bytes()
    record = record_decoder.decode(raw)
    text = write_notation(record)
    assert parse_notation(text).commands() == record_commands(record)
    turns = [line for line in text.splitlines() if line[:1].isdigit()]
    plays = sum(isinstance(c, PlayCard) for _seat, c in record_commands(record))
    assert len(turns) == plays

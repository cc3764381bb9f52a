"""Reading a game notation (`docs/notation.md`) back into its turns and commands.

The text may come from anyone (a pasted file, a message, an upload), so this is a parser of
untrusted input: whatever it is given, it returns a `Notation` or raises `NotationError`
naming the line and column where the text stops being a notation, and nothing else. It
checks the form only (words, numbers, seats, the order of turns); whether the commands are
legal is for the engine to decide, replaying them with the record's deal.
"""

from __future__ import annotations

import json
import re

from domain.commands import (
    ChooseArchitettoSite,
    Command,
    MoveFloor,
    PlaceFloor,
    PlaceTradeRoute,
    PlayCard,
    Side,
    Site,
    Skip,
    TakeCard,
)
from evidence.notation import BARE, FORMAT, KEYWORDS, Notation, NotationError, Turn

_TAG = re.compile(r'\[([A-Za-z][A-Za-z0-9_]*)[ \t]+("(?:[^"\\]|\\.)*")\][ \t]*')
_TURN = re.compile(r"([0-9]+)\.[ \t]+S([0-9]+)(?=[ \t]|$)")
_TOKEN = re.compile(r'[ \t]+|"(?:[^"\\]|\\.)*"|\{[^{}]*\}|[^ \t{}"]+')
_HALF = re.compile(r"[A-Za-z][A-Za-z0-9_.']*", re.ASCII)
_MAX_SEATS = 5
_MAX_DIGITS = 9


class _Words:
    """The words of one turn line after its number and seat, each with its column."""

    def __init__(self, line: int, text: str, start: int) -> None:
        self.line = line
        self.words: list[tuple[int, str]] = []
        position = start
        while position < len(text):
            found = _TOKEN.match(text, position)
            if found is None:  # a lone quote or brace: nothing else is left unmatched
                what = "a comment" if text[position] == "{" else "a quoted name"
                closer = "}" if text[position] == "{" else '"'
                if text[position] == "}":
                    raise self.error(position, "a '}' that closes no comment")
                raise self.error(position, f"{what} that is not closed by {closer} on its line")
            if not found.group().isspace():
                if self.words and self.words[-1][0] + len(self.words[-1][1]) == position:
                    raise self.error(position, "words are separated by spaces")
                self.words.append((position, found.group()))
            position = found.end()
        self.next = 0

    def error(self, column: int, message: str) -> NotationError:
        return NotationError(self.line, column + 1, message)

    def more(self) -> bool:
        return self.next < len(self.words)

    def take(self, wanted: str) -> tuple[int, str]:
        if not self.more():
            end = self.words[-1][0] + len(self.words[-1][1])
            raise NotationError(self.line, end + 1, f"the line ends where {wanted} should follow")
        word = self.words[self.next]
        self.next += 1
        return word

    def site(self, wanted: str) -> Site:
        column, word = self.take(wanted)
        if word == "0":
            return 0
        if word == "1":
            return 1
        raise self.error(column, f"{_shown(word)} where {wanted} (0 or 1) should be")

    def name(self, wanted: str) -> str:
        column, word = self.take(wanted)
        return self.name_of(column, word, wanted)

    def name_of(self, column: int, word: str, wanted: str) -> str:
        if word.startswith('"'):
            return _string(self.line, column, word)
        if word.startswith("{"):
            raise self.error(column, f"a comment where {wanted} should be")
        if word in KEYWORDS or BARE.fullmatch(word) is None:
            raise self.error(
                column,
                f"{_shown(word)} where {wanted} should be (write other names as JSON strings)",
            )
        return word


def _string(line: int, column: int, quoted: str, *, name: bool = True) -> str:
    """A JSON string's value (a name, non-empty, when `name`), which must be valid UTF-8."""
    try:
        value = json.loads(quoted)
        value.encode()
    except (ValueError, UnicodeError):
        raise NotationError(
            line, column + 1, f"{_shown(quoted)} is not a valid JSON string"
        ) from None
    if not isinstance(value, str) or (name and not value):
        raise NotationError(line, column + 1, "an empty name")
    return value


def _shown(word: str) -> str:
    """A word as an error message quotes it: cut short, so a message stays a line."""
    return repr(word if len(word) <= 40 else word[:40] + "...")


def parse_notation(text: str) -> Notation:
    """Read a notation back; `NotationError` (and nothing else) for any malformed text."""
    tags: list[tuple[str, str]] = []
    turns: list[Turn] = []
    for number, raw in enumerate(text.split("\n"), 1):
        line = raw.removesuffix("\r")
        if not line.strip(" \t"):
            continue
        if line.lstrip(" \t").startswith("["):
            if turns:
                indent = len(line) - len(line.lstrip(" \t"))
                raise NotationError(number, indent + 1, "a tag pair after the first turn")
            tags.append(_tag_pair(number, line, tags))
        else:
            turns.append(_turn(number, line, turns, tags))
    return Notation(tuple(tags), tuple(turns))


def _tag_pair(number: int, line: str, tags: list[tuple[str, str]]) -> tuple[str, str]:
    found = _TAG.fullmatch(line, len(line) - len(line.lstrip(" \t")))
    if found is None:
        raise NotationError(number, 1, 'a header line is a tag pair: [Name "value"]')
    name = found.group(1)
    value = _string(number, found.start(2), found.group(2), name=False)
    if any(name == known for known, _ in tags):
        raise NotationError(number, found.start(1) + 1, f"a second {name} tag")
    if name == "Format" and value != FORMAT:
        raise NotationError(
            number, found.start(2) + 1, f"the format is {FORMAT}, not {_shown(value)}"
        )
    if name == "Seats" and value not in [str(n) for n in range(2, _MAX_SEATS + 1)]:
        raise NotationError(number, found.start(2) + 1, f"{_shown(value)} seats: a game has 2 to 5")
    return name, value


def _turn(number: int, line: str, turns: list[Turn], tags: list[tuple[str, str]]) -> Turn:
    found = _TURN.match(line, len(line) - len(line.lstrip(" \t")))
    if found is None:
        raise NotationError(number, 1, "a turn line begins with its number and seat: 7. S1")
    digits, seat_digits = found.group(1), found.group(2)
    expected = len(turns) + 1
    if len(digits) > _MAX_DIGITS or int(digits) != expected or digits != str(expected):
        raise NotationError(
            number,
            found.start(1) + 1,
            f"turn {_shown(digits)[1:-1]} where turn {expected} should be",
        )
    seats = next((int(value) for name, value in tags if name == "Seats"), _MAX_SEATS)
    if len(seat_digits) > 1 or int(seat_digits) >= seats:
        raise NotationError(
            number, found.start(2), f"no seat S{_shown(seat_digits)[1:-1]} in a {seats}-seat game"
        )
    seat = int(seat_digits)
    words = _Words(number, line, found.end())
    commands, by = _commands(words)
    if not commands:
        raise NotationError(number, len(line.rstrip(" \t")) + 1, "a turn without a command")
    if not isinstance(commands[0], PlayCard) and (not turns or turns[-1].seat == seat):
        raise NotationError(number, words.words[0][0] + 1, "a turn begins with the card played")
    return Turn(expected, seat, tuple(commands), tuple(by))


def _commands(words: _Words) -> tuple[list[Command], list[str]]:
    commands: list[Command] = []
    by: list[str] = []
    run = 0  # commands since the last comment
    while words.more():
        column, word = words.take("a command")
        if word.startswith("{"):
            if run == 0:
                raise words.error(
                    column, "a comment that follows no command (it names who made them)"
                )
            if not word.isprintable():
                raise words.error(column, "a comment holds printable characters only")
            by[-run:] = [word[1:-1].strip(" \t")] * run
            run = 0
            continue
        command = _command(words, column, word)
        if isinstance(command, PlayCard) and commands:
            raise words.error(
                column, f"a second card played ({_shown(command.card)}): one card is one turn"
            )
        commands.append(command)
        by.append("")
        run += 1
    return commands, by


def _command(words: _Words, column: int, word: str) -> Command:
    if word == "0":
        return PlaceFloor(0)
    if word == "1":
        return PlaceFloor(1)
    if word == "take":
        return TakeCard(words.name("a city"))
    if word == "move":
        return MoveFloor(words.name("a city"), words.site("the site moved from"))
    if word == "route":
        return PlaceTradeRoute(_pair(words), _side(words))
    if word == "arch":
        return ChooseArchitettoSite(words.site("the Architetto's site"))
    if word == "skip":
        return Skip()
    if word in KEYWORDS:
        raise words.error(column, f"{_shown(word)} where a command should be")
    return PlayCard(words.name_of(column, word, "a command"))


def _pair(words: _Words) -> tuple[str, str]:
    column, word = words.take("two cities")
    if word.startswith('"'):
        return (_string(words.line, column, word), words.name("the second city"))
    halves = word.split("-")
    if len(halves) != 2 or not all(
        _HALF.fullmatch(half) and half not in KEYWORDS for half in halves
    ):
        raise words.error(column, f"{_shown(word)} where two cities (Lucca-Siena) should be")
    return halves[0], halves[1]


def _side(words: _Words) -> Side:
    column, word = words.take("trader or bandit")
    if word == "trader":
        return "trader"
    if word == "bandit":
        return "bandit"
    raise words.error(column, f"{_shown(word)} where trader or bandit should be")

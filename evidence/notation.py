"""The notation of a game: its commands as text, one line per turn, like the move text of PGN.

A record (`evidence.record`) is for machines and audits; the notation is for people: a
header of tag pairs, then each turn as `7. S1 FIR-3 0 0 take Lucca`, short enough to read,
quote in a message or type by hand, and exact: it parses back into the very commands of the
record, in order, each with its seat. Cards are written by id and cities by full name, so
parsing needs no card data. `docs/notation.md` is the format (`patrician-notation/1`);
`evidence.notation_parse` reads it back. It holds commands only, which are public once
made, so the notation of a redacted record tells nothing a record does not.
"""

from __future__ import annotations

import json
import re

import msgspec

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
from evidence.record import Record

FORMAT = "patrician-notation/1"
KEYWORDS = frozenset(("take", "move", "route", "arch", "skip", "trader", "bandit"))
"""The words of the notation; a card or city spelled like one is written quoted."""
BARE = re.compile(r"[A-Za-z][A-Za-z0-9_.'-]*", re.ASCII)
"""A card id or city name written as it is; any other is written as a JSON string."""
ARCHITETTO = "Architetto"


class NotationError(ValueError):
    """Text that is not a game notation; `line` and `column` (from 1) say where it breaks."""

    def __init__(self, line: int, column: int, message: str) -> None:
        super().__init__(f"line {line}, column {column}: {message}")
        self.line = line
        self.column = column
        self.message = message


class Turn(msgspec.Struct, frozen=True):
    """One seat's decisions from its `play_card` to the next seat's; `by[i]` names who acted
    for the seat at `commands[i]` (`RecordCommand.by`: "" for the seat's own player)."""

    number: int
    seat: int
    commands: tuple[Command, ...]
    by: tuple[str, ...]


class Notation(msgspec.Struct, frozen=True):
    """A parsed notation: the header's tag pairs in order, and the turns."""

    tags: tuple[tuple[str, str], ...]
    turns: tuple[Turn, ...]

    def commands(self) -> list[tuple[int, Command]]:
        """Every command with its seat, in the order they were decided."""
        return [(turn.seat, command) for turn in self.turns for command in turn.commands]

    def tag(self, name: str) -> str | None:
        """The value of the header tag `name`, or None when the header has none."""
        return next((value for tag, value in self.tags if tag == name), None)


# --- from a record -------------------------------------------------------------------------


def record_commands(record: Record) -> list[tuple[int, Command]]:
    """The record's own commands with their seats, in order: what the notation must give."""
    return [
        (entry.seat, command)
        for entry in record.commands
        if entry.kind == "commands" and entry.seat is not None
        for command in entry.commands
    ]


def header_tags(record: Record) -> list[tuple[str, str]]:
    """The tag pairs of the record's header, in the order they are written."""
    tags = [
        ("Format", FORMAT),
        ("Game", record.game_id),
        ("Edition", record.edition),
        ("Seats", str(record.seats)),
        ("Modules", " ".join(record.modules)),
        ("Rules", str(record.rules_version)),
        ("Commitment", record.fairness.seed_commitment),
    ]
    if record.fairness.server_seed is not None:
        tags.append(("Seed", record.fairness.server_seed))
    seated = {p.seat: p for p in record.players if p.seat is not None}
    tags += [(f"Seat{seat}", f"{p.name} ({p.player_id})") for seat, p in sorted(seated.items())]
    tags += [
        (f"Joined{p.joined}", f"{p.name} ({p.player_id})") for p in record.players if p.seat is None
    ]
    if record.result is not None:
        result = record.result
        tags.append(("Result", " ".join(_builder(record, seat) for seat in result.winners)))
        tags.append(
            ("Scores", ", ".join(f"{_builder(record, s.seat)} {s.total}" for s in result.scores))
        )
    elif record.complete:
        tags.append(("Result", "cancelled"))
    return tags


def _builder(record: Record, seat: int) -> str:
    return ARCHITETTO if seat == record.seats else f"S{seat}"


def notation_of(record: Record) -> Notation:
    """The record's notation as a struct: what `parse_notation(write_notation(record))` gives."""
    turns: list[tuple[int, list[Command], list[str]]] = []
    for entry in record.commands:
        if entry.kind != "commands" or entry.seat is None:
            continue
        for command in entry.commands:
            if not turns or isinstance(command, PlayCard) or turns[-1][0] != entry.seat:
                turns.append((entry.seat, [], []))
            turns[-1][1].append(command)
            turns[-1][2].append(clean_by(entry.by))
    return Notation(
        tags=tuple(header_tags(record)),
        turns=tuple(
            Turn(number, seat, tuple(commands), tuple(by))
            for number, (seat, commands, by) in enumerate(turns, 1)
        ),
    )


def clean_by(by: str) -> str:
    """`by` as a comment can hold it: braces and control characters become "?", and the
    spaces around it go (no value the server writes has any of them)."""
    cleaned = "".join("?" if c in "{}" or not c.isprintable() else c for c in by).strip()
    return cleaned or ("?" if by else "")


# --- as text -------------------------------------------------------------------------------


def write_notation(record: Record) -> str:
    """The notation of `record`: its header, a blank line, then one line per turn."""
    return format_notation(notation_of(record))


def format_notation(notation: Notation) -> str:
    """`notation` as text, the one way it is written."""
    lines = [f"[{name} {_quoted(value)}]" for name, value in notation.tags]
    if notation.turns:
        lines.append("")
    lines += [turn_text(turn) for turn in notation.turns]
    return "".join(f"{line}\n" for line in lines)


def turn_text(turn: Turn) -> str:
    """One turn's line; each run of commands made by someone else for the seat is followed
    by a `{by}` comment, and a run of the seat's own commands by `{}` when another follows."""
    words = [f"{turn.number}.", f"S{turn.seat}"]
    for index, command in enumerate(turn.commands):
        words.append(command_text(command))
        by = turn.by[index]
        last = index + 1 == len(turn.commands)
        if not last and turn.by[index + 1] == by:
            continue  # the run goes on
        if by or not last:
            words.append(f"{{{by}}}")
    return " ".join(words)


def command_text(command: Command) -> str:
    """One command as its words: `FIR-3`, `0`, `take Lucca`, `move Siena 1`,
    `route Lucca-Siena trader`, `arch 0`, `skip`."""
    match command:
        case PlayCard(card=card):
            return name_text(card)
        case PlaceFloor(site=site):
            return str(site)
        case TakeCard(city=city):
            return f"take {name_text(city)}"
        case MoveFloor(city=city, from_site=site):
            return f"move {name_text(city)} {site}"
        case PlaceTradeRoute(cities=(a, b), side=side):
            if _bare(a) and _bare(b) and "-" not in a + b:
                return f"route {a}-{b} {side}"
            return f"route {_quoted(a)} {_quoted(b)} {side}"
        case ChooseArchitettoSite(site=site):
            return f"arch {site}"
        case Skip():
            return "skip"


def name_text(name: str) -> str:
    """A card id or city name: bare when it is a plain word, else a JSON string."""
    return name if _bare(name) else _quoted(name)


def _bare(name: str) -> bool:
    return name not in KEYWORDS and BARE.fullmatch(name) is not None


def _quoted(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)

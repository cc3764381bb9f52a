"""The names players play under: what makes one that others can read as it is.

A name is shown on boards, records and notifications, beside other players' names, so it must
not be able to hide, reorder or impersonate text: it is NFC, trimmed of spaces, 1-40
characters, with at least one visible character, and none of the characters that change or
hide what is around them (controls, line breaks, text-direction and other format characters
but the joiners of emoji and scripts, unassigned and private code points, blank letters, more
than a few combining marks on one letter). The server refuses such a name when a player is
made, and the rules refuse one in a game, so that a record cannot carry one either.
"""

from __future__ import annotations

import unicodedata

from domain.errors import InvalidOptions

MAX_NAME = 40
MAX_MARKS = 4
"""Combining marks on one letter: enough for any script, too few to stack over a line."""

_JOINERS = frozenset("\u200c\u200d")  # ZWNJ, ZWJ: needed by emoji sequences and some scripts
_BLANK_LETTERS = frozenset("\u115f\u1160\u3164\uffa0\u2800")  # Hangul fillers, braille blank
_REFUSED = frozenset(("Cc", "Cs", "Co", "Cn", "Zl", "Zp"))
_INVISIBLE = frozenset(("Cf", "Mn", "Me", "Zs"))


def clean_name(name: str) -> str:
    """`name` as others will read it, or `InvalidOptions("name", why)`."""
    return clean_text(name, field="name", limit=MAX_NAME)


def clean_text(text: str, *, field: str, limit: int, lines: bool = False) -> str:
    """A player's words as others will read them (a name; with `lines`, a message of table
    talk, whose line breaks are kept), or `InvalidOptions(field, why)`: the same rules as for
    a name, so that no text a player writes can hide or reorder what is around it."""
    cleaned = unicodedata.normalize("NFC", text).strip()
    if lines:
        cleaned = "\n".join(line.strip() for line in cleaned.replace("\r\n", "\n").split("\n"))
    what = "a name" if field == "name" else "a message"
    if len(cleaned) > limit:
        raise InvalidOptions(field, f"{what} has at most {limit} characters")
    marks = 0
    visible = False
    for char in cleaned:
        if lines and char == "\n":
            marks = 0
            continue
        category = unicodedata.category(char)
        hidden = category in _REFUSED or (category == "Cf" and char not in _JOINERS)
        if hidden or char in _BLANK_LETTERS:
            raise InvalidOptions(
                field,
                f"{what} may not contain U+{ord(char):04X} (control, line-break, format, "
                "text-direction, blank or unassigned characters)",
            )
        marks = marks + 1 if category in ("Mn", "Me") else 0
        if marks > MAX_MARKS:
            raise InvalidOptions(field, f"at most {MAX_MARKS} combining marks on one letter")
        visible = visible or category not in _INVISIBLE
    if not visible:
        raise InvalidOptions(field, f"{what} needs at least one visible character")
    return cleaned


def check_name(name: str) -> None:
    """Refuse a name in a game that is not as `clean_name` leaves it (R1: the table's names
    are those the players were made with)."""
    if clean_name(name) != name:
        raise InvalidOptions("name", "a name is trimmed and in NFC")

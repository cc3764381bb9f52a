"""The fields a document names that its type does not know.

Stored data is read leniently, so that a field added by a newer version (with its default)
never stops an older reader: events, the card data kept in a game, batch metadata. What a user
hands in is checked strictly instead, so that a typo in a field name is named rather than
ignored: a card file, a game record given to the audit. This finds those fields, by comparing
the document as parsed with the value decoded from it (which holds every field its type knows).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import msgspec


def unknown_fields(document: Any, decoded: Any) -> list[str]:
    """The paths (`$.cards[3].colour`) of the fields of `document`, as parsed from JSON,
    that `decoded` (the value decoded from it, of its type) does not have."""
    return list(_walk(document, msgspec.to_builtins(decoded), "$"))


def _walk(document: Any, known: Any, path: str) -> Iterator[str]:
    if isinstance(document, dict) and isinstance(known, dict):
        for key, value in document.items():
            if key not in known:
                yield f"{path}.{key}"
            else:
                yield from _walk(value, known[key], f"{path}.{key}")
    elif isinstance(document, list) and isinstance(known, list | tuple):
        for index, (item, kept) in enumerate(zip(document, known, strict=False)):
            yield from _walk(item, kept, f"{path}[{index}]")

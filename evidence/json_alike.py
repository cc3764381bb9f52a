"""JSON that every reader reads alike (I-JSON, RFC 7493): no member named twice in one object,
which some readers take the first of and others the last. The one check of it, for a record
audited (`evidence.audit`) and for the body of a request (`server.api.reading`): a server
that took `{"name": "a", "name": "b"}` would accept what its own audit refuses.
"""

from __future__ import annotations

from collections import Counter
from typing import Any


class Ambiguous(ValueError):
    """JSON that readers read differently; `name`: the member named twice, if that is why."""

    def __init__(self, message: str, name: str | None = None) -> None:
        super().__init__(message)
        self.name = name


def members_named_once(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object's members, as `json.loads` hands them to its `object_pairs_hook`; `Ambiguous`
    for a member named twice, whose readers keep the first or the last. The one check of it,
    for a record audited and for a request's body."""
    members = dict(pairs)
    if len(members) != len(pairs):
        counts = Counter(name for name, _value in pairs)
        twice = next(name for name, _value in pairs if counts[name] > 1)
        raise Ambiguous(f"a member named {twice!r} twice in one object", twice)
    return members

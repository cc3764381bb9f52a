"""What an audit answers: checks, and the refusal that ends one at the first divergence."""

from __future__ import annotations

import msgspec


class Check(msgspec.Struct, frozen=True):
    name: str
    ok: bool
    detail: str


class Refusal(Exception):
    """A check that failed: the first divergence, in words."""

    def __init__(self, name: str, detail: str) -> None:
        super().__init__(name, detail)
        self.check = Check(name, False, detail)

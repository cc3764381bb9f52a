"""The bytes a game stores: each event in the shape of the game's own rules version.

A stored event's bytes are hashed into the game's chain and audited byte for byte (the audit
decides every command again and compares the encoding of what it decided with the stored
text), so a game keeps writing the shape it began with for its whole life, also after an
upgrade: a version-2 game still being played writes version 2's bytes to its last event.
Reading needs no version: `CityScored.__post_init__` upcasts the old spelling on every decode,
so everything served (events, streams, replays) is the current shape (`domain.events.encoder`).

Rules version 3 changed one shape: `city_scored` spells its bonus `trade_bonus`, where version
2 wrote `bonus` (always present, last). `stored_bytes` is the one function that encodes an
event for a stream (the command path's appends, the audit's comparison); docs/rules-versions.md
says the same for verifiers written in other languages.
"""

from __future__ import annotations

from typing import final

import msgspec

from domain.board import RULES_VERSION, SUPPORTED_RULES_VERSIONS
from domain.events import CityScored, Event, encoder


@final
class _CityScoredV2(msgspec.Struct, frozen=True, gc=False, tag_field="type", tag="city_scored"):
    """`city_scored` as rules version 2 wrote it: the same keys in the same order as its
    encoder wrote them, `bonus` last and always present. Only ever encoded, never decoded."""

    city: str
    high_seat: int
    high_token: int
    low_seat: int
    low_token: int
    bonus: int


def stored_bytes(event: Event, rules_version: int) -> bytes:
    """The bytes `event` is stored (and hashed, and audited) as in a game of `rules_version`;
    a version this code does not write is a `ValueError`."""
    if rules_version == RULES_VERSION:
        return encoder.encode(event)
    if rules_version not in SUPPORTED_RULES_VERSIONS:
        known = ", ".join(map(str, SUPPORTED_RULES_VERSIONS))
        raise ValueError(f"rules version {rules_version}: this code writes versions {known}")
    if type(event) is CityScored and rules_version < 3:  # renamed in version 3
        return encoder.encode(
            _CityScoredV2(
                event.city,
                event.high_seat,
                event.high_token,
                event.low_seat,
                event.low_token,
                event.trade_bonus,
            )
        )
    return encoder.encode(event)

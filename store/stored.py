"""What the event store hands back: small frozen msgspec Structs, cheap to build by the
hundred on every load and safe to pass between threads, tasks and processes."""

from __future__ import annotations

import hashlib
import re
from functools import lru_cache
from typing import Literal

import msgspec

from domain.commands import Command
from store.tracing import current_request_id


class AppendResult(msgspec.Struct, frozen=True, gc=False):
    """The versions one append took, and the chain hash of its last event."""

    first_version: int
    last_version: int
    head_hash: str


class StoredEvent(msgspec.Struct, frozen=True, gc=False):
    """One event as stored: its version, its canonical bytes, and its chain hash (hex)."""

    version: int
    data: bytes
    hash: str


class Head(msgspec.Struct, frozen=True, gc=False):
    """The latest version of a game and its chain hash; version 0 for a game with no events."""

    version: int
    hash: str


class Batch(msgspec.Struct, frozen=True, gc=False):
    """One append as recorded in the stream: the command id, the caller's metadata and the
    versions it took. Every append is one batch, so the batches of a game list its commands."""

    command_id: str
    metadata: bytes
    first_version: int
    last_version: int


class Snapshot(msgspec.Struct, frozen=True, gc=False):
    """A saved state at `version`, `hash` being the chain hash of that version's event."""

    version: int
    hash: str
    rules_version: str
    state: bytes


Kind = Literal["create", "join", "commands", "leave", "cancel"]


class AppendMeta(msgspec.Struct, frozen=True):
    """What the command path keeps with every append, as the batch's metadata: who asked,
    when, what (read leniently: a field added later gets its default)."""

    kind: Kind
    player: str
    time: str
    seat: int | None = None
    commands: tuple[Command, ...] = ()
    by: str = ""
    """Who acted for the player: "" the player, else what did ("bot:greedy")."""
    request_id: str = msgspec.field(default_factory=current_request_id)
    """The request that made the append (its `X-Request-ID`), or whose consequence it is (a
    bot's move after it): taken from the context when the metadata is made, since the command
    path does not pass it yet (`store.tracing`). Read it with `store.tracing.request_id_in`:
    decoding an older append's metadata fills a missing one from the reader's context."""


class OutboxEntry(msgspec.Struct, frozen=True, gc=False):
    """One outbox notice: the game and the versions an append added, and what the append's
    metadata says (None: a notice of before it carried it, or metadata not the command
    path's)."""

    entry_id: str
    game_id: str
    first_version: int
    last_version: int
    meta: AppendMeta | None = None


meta_decoder = msgspec.json.Decoder(AppendMeta)
_meta_encoder = msgspec.json.Encoder()


class _PackedMeta(msgspec.Struct, frozen=True, array_like=True):
    """`AppendMeta` as the lean form keeps it (field `M`): a MessagePack array of its fields
    in order, the trailing ones at their defaults left out, the kind by its number in
    `_KINDS`, the time in milliseconds since 1970 when it is in the command path's own
    format (`store.clock.iso`), else as it was written."""

    kind: int
    player: str
    time: int | str
    seat: int | None = None
    commands: tuple[Command, ...] = ()
    by: str = ""
    request_id: str = ""


_packed_encoder = msgspec.msgpack.Encoder()
_packed_decoder = msgspec.msgpack.Decoder(_PackedMeta)
_DEFAULTS = (None, (), "", "")  # seat, commands, by, request_id: after kind, player and time
_KINDS: tuple[Kind, ...] = ("create", "join", "commands", "leave", "cancel")
"""The kinds of append, by their number in the compact form (new ones go at the end)."""
_DATE = re.compile(r"(\d{4})-(\d\d)-(\d\d)")
_CLOCK = re.compile(r"T([01]\d|2[0-3]):([0-5]\d):([0-5]\d)\.(\d{3})Z")
"""The command path's format of times (`store.clock.iso`), its date and its time of day."""
_MONTH_DAYS = (0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def _milliseconds(time: str) -> int | str:
    """`time` as milliseconds since 1970 if they give it back exactly (`_iso`), else `time`.
    By integer arithmetic on the fixed format, the day's number kept for the next time of the
    same day: `datetime` costs several times more, on the path of every append."""
    days = _day_number(time[:10])
    found = None if days is None else _CLOCK.fullmatch(time, 10)
    if found is None or days is None:
        return time
    hours, minutes, seconds, millis = found.groups()
    return (((days * 24 + int(hours)) * 60 + int(minutes)) * 60 + int(seconds)) * 1000 + int(millis)


@lru_cache(maxsize=1024)
def _day_number(date: str) -> int | None:
    """Days since 1970-01-01 of a date `YYYY-MM-DD`, None if it is no such date."""
    found = _DATE.fullmatch(date)
    if found is None:
        return None
    year, month, day = map(int, found.groups())
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    if not 1 <= month <= 12 or not 1 <= day <= (29 if month == 2 and leap else _MONTH_DAYS[month]):
        return None  # no such day: it would not come back the same
    return _days_from_civil(year, month, day)


def _iso(milliseconds: int) -> str:
    """The inverse of `_milliseconds`: the time in the command path's format."""
    seconds, millis = divmod(milliseconds, 1000)
    days, seconds = divmod(seconds, 86400)
    hours, seconds = divmod(seconds, 3600)
    minutes, seconds = divmod(seconds, 60)
    return f"{_date(days)}T{hours:02d}:{minutes:02d}:{seconds:02d}.{millis:03d}Z"


@lru_cache(maxsize=1024)
def _date(days: int) -> str:
    year, month, day = _civil_from_days(days)
    return f"{year:04d}-{month:02d}-{day:02d}"


def _days_from_civil(year: int, month: int, day: int) -> int:
    """Days since 1970-01-01 of a date of the proleptic Gregorian calendar (H. Hinnant's
    algorithm)."""
    year -= month <= 2
    era, year_of_era = divmod(year, 400)
    day_of_year = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    day_of_era = year_of_era * 365 + year_of_era // 4 - year_of_era // 100 + day_of_year
    return era * 146097 + day_of_era - 719468


def _civil_from_days(days: int) -> tuple[int, int, int]:
    """The date `days` after 1970-01-01 (the inverse of `_days_from_civil`)."""
    era, day_of_era = divmod(days + 719468, 146097)
    year_of_era = (
        day_of_era - day_of_era // 1460 + day_of_era // 36524 - day_of_era // 146096
    ) // 365
    day_of_year = day_of_era - (365 * year_of_era + year_of_era // 4 - year_of_era // 100)
    shifted = (5 * day_of_year + 2) // 153
    day = day_of_year - (153 * shifted + 2) // 5 + 1
    month = shifted + (3 if shifted < 10 else -9)
    return year_of_era + era * 400 + (month <= 2), month, day


def pack_meta(meta: AppendMeta) -> bytes:
    """The compact form of `meta` (docs/store.md, "Stream entries")."""
    fields: list[object] = [
        _KINDS.index(meta.kind), meta.player, _milliseconds(meta.time), meta.seat,
        meta.commands, meta.by, meta.request_id,
    ]  # fmt: skip
    while len(fields) > 3 and fields[-1] == _DEFAULTS[len(fields) - 4]:
        fields.pop()
    return _packed_encoder.encode(fields)


def unpack_meta(packed: bytes) -> AppendMeta:
    """The metadata a compact form stands for."""
    meta = _packed_decoder.decode(packed)
    time = meta.time if isinstance(meta.time, str) else _iso(meta.time)
    if not 0 <= meta.kind < len(_KINDS):
        raise msgspec.ValidationError(f"no kind of append {meta.kind}")
    return AppendMeta(
        _KINDS[meta.kind], meta.player, time, meta.seat, meta.commands, meta.by, meta.request_id
    )


_REQUEST_ID = _PackedMeta.__struct_fields__.index("request_id")


def encode_meta(meta: AppendMeta) -> bytes:
    """The JSON object of `meta`, byte for byte as the command path encodes it: what
    `Batch.metadata` holds whatever the form its entry was stored in."""
    return _meta_encoder.encode(meta)


def short_command_id(command_id: str, player: str) -> str:
    """A command id as the lean form keeps it beside its metadata: the command path's
    `cmd:<player>:<id>` as `~<id>` (the player is in the metadata); any other as it is, but
    for a `=` before one that starts with `~` or `=`."""
    long_prefix = f"cmd:{player}:"
    if command_id.startswith(long_prefix):
        return "~" + command_id.removeprefix(long_prefix)
    return "=" + command_id if command_id[:1] in ("~", "=") else command_id


def full_command_id(stored: str, player: str) -> str:
    """The command id a lean entry's `c` stands for (the inverse of `short_command_id`)."""
    if stored.startswith("~"):
        return f"cmd:{player}:{stored[1:]}"
    return stored[1:] if stored.startswith("=") else stored


def command_key(command_id: str) -> bytes:
    """The field of a command's record in a lean game's command memos hash: 16 bytes of
    the SHA-256 of its id, however long the id (a small hash stays a compact listpack)."""
    return hashlib.sha256(command_id.encode()).digest()[:16]


def hash_text(value: bytes | str) -> str:
    """A chain hash as the store hands it out (64 hex digits), from either stored form: 32
    raw bytes (the lean form) or its hex (entries of before it)."""
    if isinstance(value, str):
        return value
    return value.hex() if len(value) == 32 else value.decode()

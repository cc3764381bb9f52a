"""The load benchmark's side of the API, shared by the clients that play its games
(bench/loadclients.py) and the checks of their records (bench/loadchecks.py): the API over
several processes (`Api`, which sends a request again while the stack is down and raises
`Refused` for any other refusal), what a client process counts (`Figures`), and the games it
plays (`Game`, its `Player`s and what the server acknowledged them).

A module of its own so that the clients and the checks both read it and neither the other.
Every request that finds the stack down (a refused or cut connection, a 502-504) is sent
again, to the next API process, with the same body and `command_id`, for at most
`RETRY_SECONDS`: that is a retry, not an error.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import msgspec
from standardwebhooks.webhooks import Webhook

RETRY_SECONDS = 120.0
"""How long one request is sent again while the stack is down (a Redis restart on its AOF)."""
_RETRIED = frozenset({502, 503, 504})
encode = msgspec.json.Encoder().encode
decode = msgspec.json.decode


class Refused(Exception):
    """An answer the load counts as an error: a refusal that is not the stack being down."""


@dataclass
class Figures:
    """What one client process counts; added up by the load script."""

    commands: int = 0
    requests: int = 0
    retries: int = 0
    latencies: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    delivered: Counter[str] = field(default_factory=Counter)
    duplicates: int = 0
    bad_signatures: int = 0
    unprompted: int = 0
    delays: list[float] = field(default_factory=list)
    """Seconds from an append's acceptance (its receipt's `time`) to the arrival of the
    notification it caused."""

    def add(self, other: Figures) -> None:
        """Count another client process's figures in with these."""
        self.commands += other.commands
        self.requests += other.requests
        self.retries += other.retries
        self.latencies += other.latencies
        self.errors += other.errors
        self.delivered += other.delivered
        self.duplicates += other.duplicates
        self.bad_signatures += other.bad_signatures
        self.unprompted += other.unprompted
        self.delays += other.delays


class Api:
    """The API over several processes: a request that finds one down goes to the next."""

    def __init__(self, session: aiohttp.ClientSession, bases: list[str], figures: Figures):
        self.session, self.bases, self.figures = session, bases, figures

    async def call(
        self,
        method: str,
        path: str,
        token: str | None,
        body: Any = None,
        *,
        home: int = 0,
        raw: bool = False,
    ) -> Any:
        """The answer's JSON (`raw`: its bytes); raises Refused for a refusal, or when the
        stack stays down."""
        headers = {"Content-Type": "application/json"}
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        data = None if body is None else encode(body)
        deadline, attempt = time.monotonic() + RETRY_SECONDS, 0
        while True:
            base = self.bases[(home + attempt) % len(self.bases)]
            self.figures.requests += 1
            try:
                async with self.session.request(
                    method, base + path, data=data, headers=headers
                ) as answer:
                    content = await answer.read()
                    if answer.status < 300:
                        return content if raw else decode(content)
                    if answer.status not in _RETRIED:
                        raise Refused(f"{method} {path}: {answer.status} {content[:300]!r}")
            except (TimeoutError, aiohttp.ClientConnectionError):
                pass
            if time.monotonic() > deadline:
                raise Refused(f"{method} {path}: the stack stayed down {RETRY_SECONDS:.0f} s")
            attempt += 1
            self.figures.retries += 1
            await asyncio.sleep(min(0.05 * 2**attempt, 1.0))


@dataclass
class Player:
    token: str
    player_id: str
    path: str
    webhook: Webhook | None = None


@dataclass
class Game:
    """One game of the load: its options, its human players, what the server acknowledged."""

    seats: int
    edition: str
    modules: list[str]
    bots: list[str]
    home: int
    game_id: str = ""
    humans: list[Player] = field(default_factory=list)
    inbox: asyncio.Queue[tuple[Player, dict[str, Any]]] = field(default_factory=asyncio.Queue)
    receipts: list[bytes] = field(default_factory=list)
    acknowledged: dict[str, list[Any]] = field(default_factory=dict)
    """Each acknowledged command id and its commands."""
    ended: set[str] = field(default_factory=set)
    told: set[tuple[str, int, str]] = field(default_factory=set)
    """Each notification delivered: (type, version, player id)."""
    finished: bool = False
    joined: asyncio.Event = field(default_factory=asyncio.Event)
    """Set once the table is full (or its setting up failed)."""

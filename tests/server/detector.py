"""A detector of secrets (R42): from a finished game's complete record, what was secret to
whom after each version, and whether a document served then shows any of it."""

from __future__ import annotations

import json
from collections.abc import Iterable

import msgspec

from domain.events import GameEnded, HandDealt
from domain.evolve import evolve
from domain.state import NEW_GAME, State
from tests.server.client import Json
from tests.server.records import record_events

SERVER_ONLY_EVENTS = {"seed_sealed", "draw_pile_stacked", "architetto_cards_set_aside"}


class Secrets:
    """A finished game seen whole (from its complete record): what was secret to whom after
    each version. Secret to a seat (R42, as tests/domain/invariants.py): the draw pile, the
    Architetto's hidden cards, the dealt cards still in another seat's hand, and the seed."""

    def __init__(self, record: Json) -> None:
        self.log = record_events(record)
        self.seed: str = record["fairness"]["server_seed"]
        self.end = next(v for v, e in enumerate(self.log, 1) if isinstance(e, GameEnded))
        self._states: list[State] = []
        self._dealt: list[dict[int, frozenset[str]]] = []
        state, dealt = NEW_GAME, dict[int, frozenset[str]]()
        for event in self.log:
            state = evolve(state, event)
            if isinstance(event, HandDealt):
                dealt = {**dealt, event.seat: frozenset(event.cards)}
            self._states.append(state)
            self._dealt.append(dealt)
        self._cache: dict[tuple[int, int | None], frozenset[str]] = {}

    def cards(self, version: int, seat: int | None) -> frozenset[str]:
        """The cards secret to `seat` (None: a spectator) right after event `version`."""
        key = (version, seat)
        found = self._cache.get(key)
        if found is None:
            if version >= self.end:
                found = frozenset()
            else:
                state, dealt = self._states[version - 1], self._dealt[version - 1]
                secret = set(state.draw) | set(state.hidden)
                for other, hand in enumerate(state.hands):
                    if other != seat:
                        secret.update(c for c in hand if c in dealt.get(other, frozenset()))
                found = frozenset(secret)
            self._cache[key] = found
        return found

    def leaks(self, document: Json, version: int, seat: int | None) -> set[str]:
        """What of `document`, served right after `version`, was secret to `seat`: the
        secret cards named as a JSON string in it (a `game_data` must have been taken out:
        it lists every card) and the seed anywhere in its text."""
        if version >= self.end:
            return set()
        text = msgspec.json.encode(document)
        found = {card for card in self.cards(version, seat) if b'"%s"' % card.encode() in text}
        if self.seed.encode() in text:
            found.add("<the server seed>")
        return found

    def check_events(self, items: Iterable[Json], seat: int | None, served_at: int) -> None:
        """A list of `{version, event}` served at `served_at`: each event checked against
        what was secret after its own version and after the serving one."""
        for item in items:
            version, event = item["version"], item["event"]
            where = f"event {version} ({event['type']}) for seat {seat}"
            if event["type"] == "game_created":  # the card file: every card, no places
                event = {key: value for key, value in event.items() if key != "game_data"}
            assert not self.leaks(event, version, seat), where
            assert not self.leaks(event, served_at, seat), where
            if served_at < self.end:
                assert event["type"] not in SERVER_ONLY_EVENTS, where
                assert event["type"] != "hand_dealt" or event["seat"] == seat, where

    def check_view(self, view: Json, seat: int | None, version: int) -> None:
        where = f"the view of seat {seat} at version {version}"
        assert not self.leaks(view, version, seat), where
        if version < self.end:
            assert view["server_seed"] is None, where
            assert view["hands"] is None and view["draw"] is None, where
            assert view["hidden"] is None, where
            if seat is None:
                assert view["hand"] == [], where

    def check_record(self, record: Json, seat: int | None, served_at: int) -> None:
        where = f"the record for seat {seat} at version {served_at}"
        if served_at < self.end:
            assert record["complete"] is False, where
            assert record["deal"] is None and record["fairness"]["server_seed"] is None, where
        events = [
            {"version": entry["version"], "event": json.loads(entry["data"])}
            for entry in record["events"]
        ]
        self.check_events(events, seat, served_at)
        rest = {key: value for key, value in record.items() if key not in ("events", "game_data")}
        assert not self.leaks(rest, served_at, seat), where

    def check_replay(self, replay: Json, seat: int | None, served_at: int) -> None:
        assert replay["over"] is (served_at >= self.end)
        for step in replay["steps"]:
            self.check_events([step], seat, served_at)
            self.check_view(step["view"], seat, step["version"])

"""Play random legal games and check, after every decision, what must always hold.

Used by the playout tests. Every step checks: floors and cards conserved, no city over
capacity, a city scored exactly when full and only once, markers conserved, the Architetto
holding no hand, `legal_commands` non-empty for the seat that decides (and empty for the
others), every listed command accepted and sampled unlisted ones refused with the state
unchanged, the log folded from its stored bytes (the shape of the game's rules version,
read back through the upcaster) equal to the state played step by step, and no view
or redacted event showing a seat a card that is secret to it (R42). At the end: the final
score is the sum of its parts, `final_scores` agrees, and the revealed seed re-derives the deal.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence

import msgspec
import pytest

from domain.board import RULES_VERSION, Board
from domain.commands import (
    ChooseArchitettoSite,
    Command,
    MoveFloor,
    PlaceFloor,
    PlaceTradeRoute,
    PlayCard,
    Site,
    Skip,
    TakeCard,
)
from domain.decide import decide
from domain.errors import IllegalCommand
from domain.events import (
    CardRevealed,
    CityScored,
    Event,
    FaceUpDealt,
    GameStarted,
    HandDealt,
    SeedRevealed,
    decode_events,
    encoder,
)
from domain.evolve import fold
from domain.gamedata import GameData
from domain.legal import legal_commands
from domain.playout import pick
from domain.scoring import final_scores
from domain.setup import deal, new_game
from domain.shapes import stored_bytes
from domain.state import State
from domain.view import redact, view


def command_universe(board: Board) -> list[Command]:
    """Every command a client could send on this board, legal or not."""
    sites: tuple[Site, Site] = (0, 1)
    universe: list[Command] = [PlayCard(card) for card in board.card_order]
    universe += [PlaceFloor(site) for site in sites]
    universe += [TakeCard(city) for city in board.cities]
    universe += [MoveFloor(city, site) for city in board.cities for site in sites]
    universe += [
        PlaceTradeRoute((board.cities[a], board.cities[b]), side)
        for a, b in board.signposts
        for side in ("trader", "bandit")
    ]
    universe += [ChooseArchitettoSite(site) for site in sites]
    universe.append(Skip())
    return universe


def strings_in(document: bytes) -> set[bytes]:
    """Every JSON string of `document` (and the text between them: harmless extras)."""
    return set(document.split(b'"'))


class Checker:
    """One game under watch: its dealt hands and every card that has been face up."""

    def __init__(self, state: State) -> None:
        self.board = state.board
        self.all_cards = Counter(self.board.card_order)
        self.universe = command_universe(self.board)
        self.scored: Counter[str] = Counter()
        self.dealt: list[set[str]] = [set() for _ in range(self.board.seats)]
        self.seen: set[str] = set()

    def note(self, events: Sequence[Event]) -> None:
        for event in events:
            if isinstance(event, HandDealt):
                self.dealt[event.seat] = set(event.cards)
            elif isinstance(event, FaceUpDealt):
                self.seen.update(event.cards)
            elif isinstance(event, CardRevealed):
                self.seen.add(event.card)
            elif isinstance(event, CityScored):
                self.scored[event.city] += 1
                assert self.scored[event.city] == 1, f"{event.city} scored twice"

    def secret_to(self, state: State, seat: int | None) -> set[str]:
        """R42: others' dealt cards still in hand, the draw pile, the hidden cards."""
        secret = set(state.draw) | set(state.hidden)
        for other, hand in enumerate(state.hands):
            if other != seat:
                secret.update(card for card in hand if card in self.dealt[other])
        return secret

    def check_state(self, state: State) -> None:
        board = self.board
        assert len(state.hands) == board.seats, "the Architetto never holds a hand"
        for builder in range(board.builders):
            on_board = sum(site.count(builder) for site in state.towers)
            assert state.supply[builder] >= 0
            assert state.supply[builder] + on_board == board.supply[builder], "floors conserved"
        cards: Counter[str] = Counter()
        for hand in state.hands:
            cards.update(hand)
        for stack in state.played:
            cards.update(stack)
        cards.update(card for card in state.face_up if card is not None)
        cards.update(state.draw)
        cards.update(state.hidden)
        assert cards == self.all_cards, "cards conserved"
        for city, name in enumerate(board.cities):
            floors = state.city_floors(city)
            assert floors <= board.capacity[city], f"{name} over capacity"
            full = floors == board.capacity[city]
            assert (state.winners[city] is not None) == full, f"{name} scored iff full"
            assert (self.scored[name] == 1) == full
        for seat in range(board.seats):
            placed = sum(1 for marker in state.markers if marker.seat == seat)
            assert placed + state.markers_left[seat] == board.markers_per_seat
        pointing = Counter[int]()
        for marker in state.markers:
            pointing.update((marker.a, marker.b))
        assert all(count <= 2 for count in pointing.values()), "R30 two markers per city"

    def check_secrets(
        self, state: State, events: Sequence[Event], viewers: Sequence[int | None]
    ) -> None:
        over = state.phase == "over"
        for seat in viewers:
            secret = {card.encode() for card in self.secret_to(state, seat)}
            shown = strings_in(msgspec.json.encode(view(state, seat)))
            shown |= strings_in(encoder.encode(redact(events, seat, over)))
            leaked = shown & secret
            assert not leaked, f"seat {seat} sees secret cards {sorted(leaked)}"

    def check_decisions(self, state: State, rng: random.Random) -> list[Command]:
        assert state.pending is not None
        seat = state.pending.seat
        legal = legal_commands(state, seat)
        assert legal, "legal_commands is never empty before the end"
        for other in range(self.board.seats):
            if other != seat:
                assert legal_commands(state, other) == []
        for command in legal:
            decide(state, seat, command)  # accepted: no exception
        unlisted = [command for command in self.universe if command not in legal]
        for command in rng.sample(unlisted, min(3, len(unlisted))):
            with pytest.raises(IllegalCommand) as refused:
                decide(state, seat, command)
            # R43: every refusal has its own reason, never the catch-all.
            assert refused.value.code != "not_allowed", f"no reason given for {command}"
        other = (seat + 1) % self.board.seats
        if other != seat:
            with pytest.raises(IllegalCommand) as refusal:
                decide(state, other, legal[0])
            assert refusal.value.code == "not_your_decision", "a seat acted out of turn"
        assert legal_commands(state, seat) == legal, "refused commands changed nothing"
        return legal

    def check_end(self, state: State, log: Sequence[Event]) -> None:
        assert state.phase == "over" and state.result is not None
        for seat in range(self.board.seats):
            assert legal_commands(state, seat) == []
        for score in state.result.scores:
            parts = score.tokens + score.portraits + score.trade_bonus + score.delegates
            assert score.total == parts, "the final score is the sum of its parts"
        assert final_scores(state) == state.result
        assert isinstance(log[-1], SeedRevealed)
        assert log[-1].server_seed == state.server_seed
        # R40: the published seed and entropies re-derive the whole deal.
        start = next(i for i, event in enumerate(log) if isinstance(event, GameStarted))
        dealt = deal(fold(log[:start]))
        assert log[start : start + len(dealt)] == dealt


def play_checked(
    data: GameData,
    rng: random.Random,
    *,
    seats: int,
    edition: str,
    modules: Sequence[str],
    every_viewer: bool = True,
    rules_version: int = RULES_VERSION,
) -> tuple[State, list[Event]]:
    """One random legal game, by the rules of `rules_version`, with every invariant checked
    after every decision.

    With `every_viewer`, every seat's and a spectator's view and events are searched for
    secrets after every decision; otherwise one viewer drawn at random per decision (the
    dearest check, sampled where thousands of games already cover the rest).
    """
    log = new_game(
        edition=edition,
        seats=seats,
        modules=modules,
        game_data=data,
        server_seed=rng.randbytes(32),
        entropies=[f"{rng.getrandbits(32):08x}" for _ in range(seats)],
        rules_version=rules_version,
    )
    state = fold(log)
    checker = Checker(state)
    checker.note(log)
    checker.check_state(state)
    assert state.board.rules_version == rules_version

    def stored(events: Sequence[Event]) -> list[Event]:
        return decode_events(stored_bytes(event, rules_version) for event in events)

    folded = fold(stored(log))
    assert folded == state
    while state.pending is not None:
        legal = checker.check_decisions(state, rng)
        seat = state.pending.seat
        events, state = decide(state, seat, pick(legal, rng))
        log += events
        checker.note(events)
        checker.check_state(state)
        viewers: list[int | None] = [*range(seats), None]
        checker.check_secrets(state, events, viewers if every_viewer else [rng.choice(viewers)])
        folded = fold(stored(events), folded)
        assert folded == state, "the folded log equals the state played step by step"
    checker.check_end(state, log)
    return state, log

"""Who wins a tower, a city, a delegate card and the game (R13, R21c, R32-R37, R48, R49)."""

from __future__ import annotations

from itertools import product

from domain.board import Board
from domain.events import CityScored, GameEnded, SeatScore
from domain.gamedata import MinorDelegate
from domain.state import State


def tower_winner(site: tuple[int, ...]) -> int:
    """R13: most floors in the tower; on a tie, the tied builder whose floor is highest."""
    counts: dict[int, int] = {}
    for builder in site:
        counts[builder] = counts.get(builder, 0) + 1
    best = max(counts.values())
    for builder in reversed(site):
        if counts[builder] == best:
            return builder
    raise AssertionError("a scored tower is never empty")  # pragma: no cover


def would_hold(site: tuple[int, ...], builder: int) -> bool:
    """Whether `builder` holds the tower after putting one floor on top of it (R21c):
    its floor would be the highest, so a tie on floors goes its way."""
    mine = 1
    others: dict[int, int] = {}
    for owner in site:
        if owner == builder:
            mine += 1
        else:
            others[owner] = others.get(owner, 0) + 1
    return mine >= max(others.values(), default=0)


def trade_bonus(state: State, city: int) -> int:
    """R32, R47: Traders minus Bandits pointing to the city now."""
    return sum(
        1 if marker.side == "trader" else -1
        for marker in state.markers
        if city in (marker.a, marker.b)
    )


def city_scoring(state: State, city: int) -> CityScored:
    """R13: the taller tower gives the high token, the shorter the low one (R32 bonus too)."""
    first, second = state.towers[2 * city], state.towers[2 * city + 1]
    taller, shorter = (first, second) if len(first) > len(second) else (second, first)
    high, low = state.board.tokens[city]
    return CityScored(
        city=state.board.cities[city],
        high_seat=tower_winner(taller),
        high_token=high,
        low_seat=tower_winner(shorter),
        low_token=low,
        trade_bonus=trade_bonus(state, city),
    )


def token_values(state: State) -> list[list[tuple[int, int]]]:
    """Per builder, the (city, value) of every Prestige token it won."""
    owned: list[list[tuple[int, int]]] = [[] for _ in range(state.board.builders)]
    for city, won in enumerate(state.winners):
        if won is not None:
            high, low = state.board.tokens[city]
            owned[won[0]].append((city, high))
            owned[won[1]].append((city, low))
    return owned


def portrait_points(board: Board, counts: dict[str, int]) -> int:
    return sum(count // board.set_size for count in counts.values()) * board.points_per_set


def portrait_counts(state: State, builder: int) -> dict[str, int]:
    counts = dict.fromkeys(state.board.nobles, 0)
    for card in state.played[builder]:
        for noble in state.board.cards[card].portraits:
            counts[noble] += 1
    return counts


def _minor_owner(
    board: Board, tokens: list[list[tuple[int, int]]], minor: MinorDelegate
) -> int | None:
    """R33, R48: most tokens of the card's value among the seats; ties by the tie order, where
    a city whose token the Architetto holds (or nobody holds) is passed over."""
    counts = [
        sum(1 for _, value in tokens[seat] if value == minor.token_value)
        for seat in range(board.seats)
    ]
    best = max(counts)
    if best == 0:
        return None
    tied = [seat for seat, count in enumerate(counts) if count == best]
    if len(tied) == 1:
        return tied[0]
    order = minor.tie_order_five_players if board.seats == 5 else None
    for name in order or minor.tie_order:
        city = board.city_index.get(name)
        for seat in tied:
            if (city, minor.token_value) in tokens[seat]:
                return seat
    return None


def _major_owner(board: Board, tokens: list[list[tuple[int, int]]]) -> int | None:
    """R34: the highest sum of tokens from the card's cities; ties by the points in each city
    of the tie order; nobody if still tied or if the best sum is 0."""
    assert board.delegates is not None
    major = board.delegates.d
    cities = {board.city_index[name] for name in major.cities}

    def points(seat: int, among: set[int]) -> int:
        return sum(value for city, value in tokens[seat] if city in among)

    sums = [points(seat, cities) for seat in range(board.seats)]
    best = max(sums)
    if best == 0:
        return None
    tied = [seat for seat in range(board.seats) if sums[seat] == best]
    for name in major.tie_order:
        if len(tied) == 1:
            break
        city = {board.city_index[name]}
        top = max(points(seat, city) for seat in tied)
        tied = [seat for seat in tied if points(seat, city) == top]
    return tied[0] if len(tied) == 1 else None


def _best_with_extras(board: Board, counts: dict[str, int], wild: int, each: int) -> int:
    """R35: `each` extra portraits of every noble and `wild` of the owner's choice, chosen to
    the owner's best score."""
    base = {noble: count + each for noble, count in counts.items()}
    best = portrait_points(board, base)
    for choice in product(board.nobles, repeat=wild):
        trial = dict(base)
        for noble in choice:
            trial[noble] += 1
        best = max(best, portrait_points(board, trial))
    return best


def final_scores(state: State) -> GameEnded:
    """R36, R37, R49: every builder's score with its parts, and the winners."""
    board = state.board
    tokens = token_values(state)
    cards: dict[int, list[str]] = {}
    if board.delegates is not None:
        for letter, minor in board.delegates.minors():
            owner = _minor_owner(board, tokens, minor)
            if owner is not None:
                cards.setdefault(owner, []).append(letter)
        major = _major_owner(board, tokens)
        if major is not None:
            cards.setdefault(major, []).append("D")
    scores = []
    for builder in range(board.builders):
        counts = portrait_counts(state, builder)
        portraits = portrait_points(board, counts)
        mine = cards.get(builder, [])
        wild = sum(1 for letter in mine if letter != "D")
        extra = _best_with_extras(board, counts, wild, int("D" in mine)) - portraits if mine else 0
        won = sum(value for _, value in tokens[builder])
        scores.append(
            SeatScore(
                seat=builder,
                tokens=won,
                portraits=portraits,
                trade_bonus=state.bonus[builder],
                delegates=extra,
                total=won + portraits + state.bonus[builder] + extra,
                floors_on_board=board.supply[builder] - state.supply[builder],
                delegate_cards=tuple(mine),
            )
        )
    best = max(score.total for score in scores)
    leaders = [score for score in scores if score.total == best]
    fewest = min(score.floors_on_board for score in leaders)
    winners = tuple(score.seat for score in leaders if score.floors_on_board == fewest)
    return GameEnded(
        scores=tuple(scores),
        winners=winners,
        architetto_won=board.architetto and board.seats in winners,
    )

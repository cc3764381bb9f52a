"""Creating a game, taking seats, and the deal when the table is full (R1-R7, R40).

The server draws the secret seed (the domain has no randomness of its own); everything else,
the seating and every card's place, follows from it and the seats' entropies by
`domain.shuffle`, so the deal can be re-derived by anyone once the seed is published.
"""

from __future__ import annotations

from collections.abc import Sequence

from domain import shuffle
from domain.board import EDITIONS, HAND_SIZE, MODULES, RULES_VERSION, SUPPORTED_RULES_VERSIONS
from domain.errors import IllegalCommand, InvalidOptions
from domain.events import (
    ArchitettoCardsSetAside,
    DrawPileStacked,
    Edition,
    Event,
    FaceUpDealt,
    GameCancelled,
    GameCreated,
    GameStarted,
    HandDealt,
    Module,
    SeatJoined,
    SeatLeft,
    SeedRevealed,
    SeedSealed,
    StepStarted,
)
from domain.evolve import fold
from domain.gamedata import GameData
from domain.names import check_name
from domain.state import State

MAX_ENTROPY = 256
ARCHITETTO_HIDDEN = 3
MIN_SEED_BYTES = 16


def check_options(
    edition: str, seats: int, modules: Sequence[str], game_data: GameData
) -> tuple[Edition, tuple[Module, ...]]:
    """R1-R5: refuse options a game cannot have, naming the field; return them canonical."""
    if edition not in EDITIONS:
        raise InvalidOptions("edition", f"{edition!r} is not an edition; choose towers or classic")
    if isinstance(seats, bool) or not isinstance(seats, int) or not 2 <= seats <= 5:
        raise InvalidOptions("seats", f"{seats!r} seats: a game has 2 to 5 seats (R2)")
    for module in modules:
        if module not in MODULES:
            raise InvalidOptions(
                "modules", f"{module!r} is not a module; known: {', '.join(MODULES)} (R5)"
            )
    if len(set(modules)) != len(modules):
        raise InvalidOptions("modules", "a module is listed twice")
    if modules and edition != "towers":
        raise InvalidOptions("modules", "the modules exist only in the towers edition (R5)")
    stars = sum(
        1
        for card in game_data.cards
        for city in game_data.cities
        if card.star and card.city == city.name and (seats == 5 or not city.five_player_only)
    )
    if stars < HAND_SIZE * seats:
        raise InvalidOptions(
            "seats",
            f"the card file has {stars} star cards in play, too few to deal {HAND_SIZE} to "
            f"each of {seats} seats (R6)",
        )
    ordered: tuple[Module, ...] = tuple(module for module in MODULES if module in modules)
    return edition if edition == "towers" else "classic", ordered


def _check_rules_version(rules_version: int) -> None:
    if (
        isinstance(rules_version, bool)
        or not isinstance(rules_version, int)
        or rules_version not in SUPPORTED_RULES_VERSIONS
    ):
        known = ", ".join(map(str, SUPPORTED_RULES_VERSIONS))
        raise InvalidOptions(
            "rules_version", f"{rules_version!r} is not a rules version this server plays ({known})"
        )


def _check_entropy(entropy: str) -> None:
    if len(entropy) > MAX_ENTROPY:
        raise InvalidOptions("entropy", f"at most {MAX_ENTROPY} characters")


def create_game(
    *,
    edition: str,
    seats: int,
    modules: Sequence[str],
    game_data: GameData,
    server_seed: bytes,
    player: str,
    entropy: str = "",
    name: str = "Player",
    rules_version: int = RULES_VERSION,
) -> list[Event]:
    """The first events of a game: its options and seed commitment, and the creator's seat.
    New games get the current `rules_version`; an older supported one is for re-deciding a
    game created with it (the audit) and for tests of games that began before an upgrade."""
    _check_rules_version(rules_version)
    checked_edition, checked_modules = check_options(edition, seats, modules, game_data)
    _check_entropy(entropy)
    check_name(name)
    if len(server_seed) < MIN_SEED_BYTES:
        raise InvalidOptions("server_seed", f"at least {MIN_SEED_BYTES} bytes of secret")
    return [
        GameCreated(
            rules_version=rules_version,
            edition=checked_edition,
            seats=seats,
            modules=checked_modules,
            seed_commitment=shuffle.commitment(server_seed),
            shuffle_algorithm=shuffle.ALGORITHM,
            game_data=game_data,
        ),
        SeedSealed(server_seed.hex()),
        SeatJoined(player, entropy, name),
    ]


def _check_waiting(state: State) -> None:
    if state.phase != "waiting":
        raise IllegalCommand("game_not_open", "R7", "the game is not waiting for players")


def join_game(state: State, player: str, entropy: str = "", name: str = "Player") -> list[Event]:
    """A player takes a seat; when it is the last one, the game starts and is dealt (R6, R7)."""
    _check_waiting(state)
    if player in state.players:
        raise IllegalCommand("already_seated", "R7", "you already hold a seat in this game")
    _check_entropy(entropy)
    check_name(name)
    joined: list[Event] = [SeatJoined(player, entropy, name)]
    if len(state.players) + 1 == state.board.seats:
        joined += deal(fold(joined, state))
    return joined


def leave_game(state: State, player: str) -> list[Event]:
    """A player who joined gives their place up before the table is full (R7). The creator
    cannot leave the table they set: they cancel the game instead."""
    _check_waiting(state)
    if player not in state.players:
        raise IllegalCommand("not_at_table", "R7", "you hold no place at this table")
    if player == state.players[0]:
        raise IllegalCommand(
            "creator_cannot_leave", "R7", "you created this game: cancel it instead of leaving"
        )
    return [SeatLeft(player)]


def cancel_game(state: State, player: str) -> list[Event]:
    """The creator calls the game off before it starts; the seed is published at once, since
    no card was dealt from it (R40)."""
    _check_waiting(state)
    if not state.players or player != state.players[0]:
        raise IllegalCommand("not_creator", "R7", "only the player who created it may cancel it")
    return [GameCancelled(player), SeedRevealed(state.server_seed)]


def deal(state: State) -> list[Event]:
    """R6, R7, R40: seat the players and deal the cards from the shuffle seed."""
    board = state.board
    seed = shuffle.shuffle_seed(bytes.fromhex(state.server_seed), state.entropies)
    seats = board.seats
    seat_players = tuple(shuffle.shuffled(range(seats), seed, "seats"))
    stars = [card for card in board.card_order if board.cards[card].star]
    others = [card for card in board.card_order if not board.cards[card].star]
    stars = shuffle.shuffled(stars, seed, "stars")
    deck = tuple(shuffle.shuffled(stars[HAND_SIZE * seats :] + others, seed, "deck"))
    cities = len(board.cities)
    events: list[Event] = [GameStarted(seat_players)]
    # R42: each secret event carries its own salt, so that its chain hash, which is public,
    # cannot be matched by trying the cards it might hold (docs/record.md, "Secrets").
    events += [
        HandDealt(
            seat,
            tuple(stars[HAND_SIZE * seat : HAND_SIZE * (seat + 1)]),
            shuffle.salt(seed, f"hand/{seat}"),
        )
        for seat in range(seats)
    ]
    events.append(DrawPileStacked(deck, shuffle.salt(seed, "draw_pile")))
    events.append(FaceUpDealt(deck[:cities]))
    if board.architetto:
        hidden = deck[cities : cities + ARCHITETTO_HIDDEN]
        events.append(ArchitettoCardsSetAside(hidden, shuffle.salt(seed, "architetto_hidden")))
    events.append(StepStarted(0, "play_card"))
    return events


def new_game(
    *,
    edition: str,
    seats: int,
    modules: Sequence[str],
    game_data: GameData,
    server_seed: bytes,
    entropies: Sequence[str] = (),
    rules_version: int = RULES_VERSION,
) -> list[Event]:
    """A whole started game's opening log, with players named "player-1".. (for simulations),
    by the current rules unless `rules_version` names an older supported one."""
    entropy = [*entropies, *[""] * seats][:seats]
    log = create_game(
        edition=edition,
        seats=seats,
        modules=modules,
        game_data=game_data,
        server_seed=server_seed,
        player="player-1",
        entropy=entropy[0],
        name="Player 1",
        rules_version=rules_version,
    )
    state = fold(log)
    for number in range(2, seats + 1):
        joined = join_game(state, f"player-{number}", entropy[number - 1], f"Player {number}")
        log += joined
        state = fold(joined, state)
    return log

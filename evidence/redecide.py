"""The heart of the offline audit: every append of a record decided again from nothing, by
the rules the game was created with (its `game_created.rules_version`, which also says the
shape its events were stored in), and the first event that differs told in words.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from domain.board import Board
from domain.decide import canonical, decide_all
from domain.errors import CommandRefused, IllegalCommand, InvalidOptions
from domain.events import Event, GameCreated, SeatJoined, event_decoder
from domain.evolve import fold
from domain.narrate import describe_command, narrate
from domain.setup import cancel_game, create_game, join_game, leave_game
from domain.shapes import stored_bytes
from domain.state import NEW_GAME, State
from evidence.checks import Refusal
from evidence.record import Record, RecordCommand


def redecide(
    record: Record, log: Sequence[Event], seed: bytes, *, to_the_end: bool = True
) -> State:
    """Decide every append again from nothing, each one's events equal to the logged ones
    byte for byte; `to_the_end`, the log must end the game (else a game in play is taken,
    as `patrician check-rules` reads the games of a store)."""
    datas = [entry.data.encode() for entry in record.events]
    state = NEW_GAME
    board = fold(log[:1]).board  # the first event is the creation (`_options`)
    for i, batch in enumerate(record.commands):
        where = f"commands[{i}]"
        if batch.first_version != state.version + 1 or not (
            batch.first_version <= batch.last_version <= len(log)
        ):
            raise Refusal(
                "commands",
                f"{where}: versions {batch.first_version}-{batch.last_version} are not the "
                f"append after version {state.version}",
            )
        if (batch.kind == "create") != (i == 0):
            raise Refusal("commands", f"{where}.kind: a game is created by its first append only")
        logged = log[batch.first_version - 1 : batch.last_version]
        for k, command in enumerate(batch.commands):
            if canonical(board, command) != command:
                raise Refusal(
                    "commands",
                    f"{where}.commands[{k}]: a signpost's cities are written in board order",
                )
        try:
            decided = _decide(state, batch, logged, seed, where)
        except CommandRefused as refused:
            version = _version_of(state, batch, refused.index)
            raise Refusal(
                "commands",
                f"version {version} ({where}, command {refused.index}): the record says seat "
                f"{batch.seat} {describe_command(batch.commands[refused.index])}, but the "
                f"rules refuse it: {refused.error.message}",
            ) from None
        except (IllegalCommand, InvalidOptions) as error:
            raise Refusal("commands", f"{where} ({batch.kind}): refused: {error}") from None
        _same_events(
            board, decided, datas[batch.first_version - 1 : batch.last_version], batch, where
        )
        state = fold(decided, state)
    if state.version != len(log):
        raise Refusal(
            "commands",
            f"commands[{len(record.commands) - 1}]: the commands end at version {state.version}"
            f", the log at {len(log)}: no append explains versions {state.version + 1}-"
            f"{len(log)}",
        )
    if to_the_end and not state.finished:
        raise Refusal("commands", "the log does not end the game")
    return state


def _decide(
    state: State, batch: RecordCommand, logged: Sequence[Event], seed: bytes, where: str
) -> list[Event]:
    if batch.kind in ("create", "join", "leave", "cancel") and batch.seat is not None:
        raise Refusal("commands", f"{where}.seat: a {batch.kind} acts for no seat (null)")
    if batch.kind != "commands" and batch.commands:
        raise Refusal("commands", f"{where}.commands: a {batch.kind} sends no command")
    if batch.kind in ("create", "join"):
        joined = logged[2] if batch.kind == "create" and len(logged) > 2 else logged[0]
        if not isinstance(joined, SeatJoined):
            raise Refusal("commands", f"{where}: no seat_joined where a {batch.kind} takes one")
        if joined.player != batch.player_id:
            raise Refusal(
                "commands",
                f"{where}.player_id: {batch.player_id} is not the player who took that place "
                f"({joined.player})",
            )
        if batch.kind == "join":
            return join_game(state, batch.player_id, joined.entropy, joined.name)
        created = logged[0]
        assert isinstance(created, GameCreated)  # checked by `_options`
        return create_game(
            edition=created.edition,
            seats=created.seats,
            modules=created.modules,
            game_data=created.game_data,
            server_seed=seed,
            player=batch.player_id,
            entropy=joined.entropy,
            name=joined.name,
            rules_version=created.rules_version,
        )
    if batch.kind == "leave":
        return leave_game(state, batch.player_id)
    if batch.kind == "cancel":
        return cancel_game(state, batch.player_id)
    seat = next(
        (s for s, join in enumerate(state.seat_players) if state.players[join] == batch.player_id),
        None,
    )
    if batch.seat is None or seat != batch.seat:
        raise Refusal(
            "commands",
            f"{where}.player_id: {batch.player_id} holds seat {seat}, not seat {batch.seat}",
        )
    return decide_all(state, batch.seat, batch.commands)[0]


def _same_events(
    board: Board,
    decided: Sequence[Event],
    logged: Sequence[bytes],
    batch: RecordCommand,
    where: str,
) -> None:
    """The decided events must be the logged ones byte for byte (the stored text, not a
    decoding of it); the first that differs is told as the record tells it and as the rules
    decide it, in words where the words differ, else as the texts. The decided events are
    encoded in the shape of the game's rules version, as the command path stored them."""
    ours = [stored_bytes(event, board.rules_version) for event in decided]
    for k in range(max(len(ours), len(logged))):
        mine = ours[k] if k < len(ours) else None
        theirs = logged[k] if k < len(logged) else None
        if mine == theirs:
            continue
        said = _told(board, theirs)
        ruled = _told(board, mine)
        if said == ruled:  # the words hide the difference (a salt, the spacing): the texts
            said, ruled = _text(theirs), _text(mine)
        raise Refusal(
            "commands",
            f"version {batch.first_version + k} ({where}): the record says {said}, the rules "
            f"{ruled}",
        )


def _told(board: Board, data: bytes | None) -> str:
    if data is None:
        return "nothing more"
    try:
        line = narrate(board, event_decoder.decode(data))
    except (msgspec.MsgspecError, KeyError, ValueError, IndexError):  # not an event of this game
        line = None
    return f'"{line.rstrip(".")}"' if line else _text(data)


def _text(data: bytes | None) -> str:
    if data is None:
        return "nothing more"
    text = data.decode(errors="replace")
    return text if len(text) <= 160 else text[:157] + "..."


def _version_of(state: State, batch: RecordCommand, index: int) -> int:
    """The version at which command `index` of a batch would have been decided."""
    if index == 0:
        return batch.first_version
    events, _ = decide_all(state, batch.seat or 0, batch.commands[:index])
    return batch.first_version + len(events)

"""The typed errors of the event store, and the one place where Redis errors are translated.

Callers decide what to do by the type alone: a `VersionConflict` means "reload and decide
again", a `DuplicateCommand` means "your command is already in, here is its result", and a
`StoreUnavailable` means "nothing is known about your write; retry it with the same command id".
A lost connection must never look like a conflict, or a caller would re-decide a command that
may already be stored, so every Redis error goes through `translated_errors`.
"""

from __future__ import annotations

from types import TracebackType

from redis import exceptions as redis_errors

from store.stored import AppendResult


class StoreError(Exception):
    """The base of every error the event store raises."""


class VersionConflict(StoreError):
    """The game is not at the expected version: another command got in first."""

    def __init__(self, current: int) -> None:
        super().__init__(current)
        self.current = current

    def __str__(self) -> str:
        return f"the game is at version {self.current}"


class DuplicateCommand(StoreError):
    """This command id was appended before with the same content; nothing was written now."""

    def __init__(self, first_result: AppendResult) -> None:
        super().__init__(first_result)
        self.first_result = first_result

    def __str__(self) -> str:
        first = self.first_result
        return f"already appended as versions {first.first_version}..{first.last_version}"


class CommandIdReused(StoreError):
    """This command id was used before for another request; nothing was written now.
    `first_result` is the first request's append, where it was one."""

    def __init__(self, command_id: str, first_result: AppendResult | None = None) -> None:
        super().__init__(command_id, first_result)
        self.command_id = command_id
        self.first_result = first_result

    def __str__(self) -> str:
        return f"command id {self.command_id!r} was already used for another request"


class HandedOver(StoreError):
    """The append's player handed their seat to a bot for good (`store.handovers`): nothing
    was written. The command path says so as the rules' refusal `seat_handed_over`."""


class GameNotFound(StoreError):
    """No game has this id."""


class NotSeated(StoreError):
    """The player holds no seat in this game, so it cannot act in it."""


class WrongInvite(StoreError):
    """The invite code does not open this game."""


class StoreUnavailable(StoreError):
    """Redis could not be reached or could not serve the request (down, loading, failing over,
    out of memory). Whether a write landed is unknown: retry it with the same command id."""


class CorruptGame(StoreError):
    """A stored game does not read back as written: a broken chain or an undecodable entry."""


# Errors that say "Redis cannot serve this now", as opposed to a bug in a request. Connection
# and timeout errors include BusyLoadingError (AOF still loading after a restart) and
# MaxConnectionsError; the cluster ones come during a failover or resharding.
_UNAVAILABLE: tuple[type[BaseException], ...] = (
    redis_errors.ConnectionError,
    redis_errors.TimeoutError,
    redis_errors.ClusterDownError,
    redis_errors.TryAgainError,
    redis_errors.ReadOnlyError,
    redis_errors.OutOfMemoryError,
    redis_errors.SlotNotCoveredError,
    redis_errors.RedisClusterException,
    ConnectionError,  # the builtin, which some socket paths raise unwrapped
    TimeoutError,
)


class _Translated:
    """Raise Redis and socket failures as `StoreUnavailable`, other Redis errors as
    `StoreError`; the store's own errors pass through unchanged. A class rather than a
    generator-based context manager: it wraps every call, and costs a fifth as much."""

    def __enter__(self) -> None:
        return None

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if error is None or isinstance(error, StoreError):
            return
        if isinstance(error, _UNAVAILABLE):
            raise StoreUnavailable(f"{type(error).__name__}: {error}") from error
        if isinstance(error, redis_errors.RedisError):
            raise StoreError(f"{type(error).__name__}: {error}") from error


translated_errors = _Translated()
"""`with translated_errors:` around every exchange with Redis."""

"""Why a command or an option is refused (R43): a stable code, a ruling, a human message."""

from __future__ import annotations


class IllegalCommand(Exception):
    """A command the rules refuse. `code` is stable and machine-readable; `rule` is the ruling
    id it enforces; nothing was changed."""

    def __init__(self, code: str, rule: str, message: str) -> None:
        super().__init__(f"{message} ({rule})")
        self.code = code
        self.rule = rule
        self.message = f"{message} ({rule})"


class InvalidOptions(ValueError):
    """Options a game cannot be created with; `field` names the offending option."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


class CommandRefused(Exception):
    """Command number `index` of a batch was refused by the rules (`error`); the batch as a
    whole is refused and nothing of it happens."""

    def __init__(self, index: int, error: IllegalCommand) -> None:
        super().__init__(index, error)
        self.index = index
        self.error = error

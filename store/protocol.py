"""The sans-IO protocol of the store: operations as generators of Redis requests.

Each operation yields the Redis requests it needs (`Call`, `Eval`) and is sent their replies;
it does no I/O itself. `EventStore` and `AsyncEventStore` (store.client) only carry requests to
their client and replies back, and throw a Redis error reply into the operation, so every
check, key, hash and multi-step flow exists once. A script that the server does not know
(NOSCRIPT, after a restart or a failover) is loaded and sent again here, in `evaluate`, and
nowhere else.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any, NamedTuple, TypeVar

from redis.exceptions import NoScriptError

from store.scripts import ScriptName, sha, source

T = TypeVar("T")


class Call(NamedTuple):
    """Call the client's method `method` with positional `args`."""

    method: str
    args: tuple[Any, ...]


class Eval(NamedTuple):
    """Run one of the store's scripts by its SHA1. (Named tuples: an append makes one per
    call, and they are cheap.)"""

    script: ScriptName
    numkeys: int
    keys_and_args: tuple[Any, ...]


Request = Call | Eval
Op = Generator[Request, Any, T]
"""An operation: yields requests, is sent each reply, returns its result."""


def reply_text(value: Any) -> str:
    """A reply's string, whether the client gave it as bytes or text."""
    return value.decode() if isinstance(value, bytes) else str(value)


def dispatch(client: Any, request: Request) -> Any:
    """Start `request` on `client`: a reply for a sync client, an awaitable for an async one.
    A store throws an error reply raised here into the operation (`op.throw`)."""
    if isinstance(request, Eval):
        return client.evalsha(sha(request.script), request.numkeys, *request.keys_and_args)
    return getattr(client, request.method)(*request.args)


def evaluate(script: ScriptName, numkeys: int, keys_and_args: tuple[Any, ...]) -> Op[Any]:
    """Run a script by SHA1, loading it first if the server does not know it (NOSCRIPT: it
    did not run, so sending again is safe). Not redis-py's `Script`: that costs more per call
    on the path of every append, and the two stores would each need their own."""
    request = Eval(script, numkeys, keys_and_args)
    try:
        return (yield request)
    except NoScriptError:
        yield Call("script_load", (source(script),))
        return (yield request)

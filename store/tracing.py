"""The request id of the work being done now, so that an append keeps it in its metadata
(`AppendMeta.request_id`) and whatever follows the append (the outbox notice's dispatch, the
jobs, the notifications) can name the request that caused it in its log lines.

Set by whoever starts a piece of work: the server's request hook (`server.transport.request_ids`),
and the workers around each job (`workers.tracing`), from the id its enqueuer gave it. Ambient
rather than passed, because the command path builds the metadata and does not take it as an
argument yet (see `AppendMeta.request_id`).
"""

from __future__ import annotations

from contextvars import ContextVar

import msgspec

current: ContextVar[str] = ContextVar("patrician_request_id", default="")
"""The id of the request being served, or whose consequence is being worked on ("" none)."""


def current_request_id() -> str:
    return current.get()


class _Traced(msgspec.Struct, frozen=True):
    request_id: str = ""


_traced = msgspec.json.Decoder(_Traced)


def request_id_in(metadata: bytes) -> str:
    """The request id an append's metadata keeps ("" for none, or an append made before ids
    were kept): read on its own, never from a decoded `AppendMeta`, whose missing id would be
    filled from the context of the reader."""
    if not metadata:
        return ""
    try:
        return _traced.decode(metadata).request_id
    except msgspec.DecodeError:
        return ""

"""`GET /api/keys`, the server's signing keys, and `POST /api/audit`: the audit of a record
sent by anyone, for the audit page of the browser client, which cannot run Python. The same
checks and the same answer as `patrician audit --json` (docs/record.md), against every key the
server ever used; the server trusts the record no more than the command does."""

from __future__ import annotations

import threading
from typing import Any

import anyio
import msgspec
from litestar import Request, get, post
from litestar.di import NamedDependency
from litestar.exceptions import HTTPException

from evidence.audit import AuditResult, audit_result
from evidence.signatures import KeyList
from evidence.signing_keys import key_list_op
from server.schema.errors import error_responses
from server.services.bundle import Services

_one_at_a_time = threading.Semaphore(1)


def _audited(body: bytes, keys: bytes) -> AuditResult:
    with _one_at_a_time:
        return audit_result(body, keys=keys)


MAX_RECORD = 8 * 1024 * 1024
"""The largest record taken: a finished five-seat game's is about 0.3 MB."""


@post(
    "/api/audit",
    status_code=200,
    tags=["records"],
    operation_id="auditRecord",
    opt={"own_body": True},
    request_max_body_size=MAX_RECORD,
    responses=error_responses(413, 415),
)
async def audit_record(
    request: Request[Any, Any, Any], services: NamedDependency[Services]
) -> AuditResult:
    """Audit a game record (the body: a `patrician-record/1` document, as
    `GET /api/games/{id}/record` gives it): every check in order up to the first that fails,
    each in words. A record that does not hold up is still a 200: the answer says why."""
    media_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if media_type != "application/json":
        raise HTTPException(status_code=415, detail="send the record as application/json")
    body = await request.body()
    # Off the event loop (a large record takes a good part of a second; the live streams,
    # the bots and every other request share the loop), one audit at a time per process.
    # The server's own keys: a record it signed is checked against every key it ever used.
    keys = msgspec.json.encode(
        await services.games.run(key_list_op(services.games.listings.prefix))
    )
    return await anyio.to_thread.run_sync(_audited, body, keys)


@get("/api/keys", tags=["records"], operation_id="listSigningKeys")
async def signing_keys(services: NamedDependency[Services]) -> KeyList:
    """Every key the server ever signed receipts and records with, oldest first, each with
    when it came into use and when a newer one retired it (docs/record.md, "Signatures").
    Save it beside a record: `patrician audit RECORD --keys KEYS.json` checks against it."""
    return await services.games.run(key_list_op(services.games.listings.prefix))

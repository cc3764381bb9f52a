"""Make the OpenAPI document as strict as the server, and tell how its operations connect.

Litestar's schemas of msgspec Structs do not carry `forbid_unknown_fields` nor the fixed length
of a tuple; clients and fuzzers that trust the document would send what the server refuses.
And a created game's id is what every game operation needs: the document says so with
OpenAPI links, so that stateful tools (and people) can follow from one to the next.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import msgspec
from litestar.openapi.spec import (
    Example,
    Link,
    OpenAPI,
    OpenAPIMediaType,
    OpenAPIResponse,
    Reference,
    RequestBody,
    Schema,
)

from domain import commands
from server.schema import answers, errors, limits, requests
from server.transport.edge import BUSY


def _strict_structs() -> set[str]:
    kinds: Iterable[object] = [
        *(kind for shapes in (requests, answers, errors, limits) for kind in vars(shapes).values()),
        *vars(commands).values(),
    ]
    return {
        kind.__name__
        for kind in kinds
        if isinstance(kind, type)
        and issubclass(kind, msgspec.Struct)
        and kind.__struct_config__.forbid_unknown_fields
    }


def _schemas(schema: Schema | Reference | bool | None) -> Iterator[Schema]:
    """`schema` and every schema nested in it."""
    if not isinstance(schema, Schema):
        return
    yield schema
    for nested in (
        *(schema.properties or {}).values(),
        *(schema.prefix_items or ()),
        *(schema.one_of or ()),
        *(schema.any_of or ()),
        *(schema.all_of or ()),
        schema.items,
    ):
        yield from _schemas(nested)


GAME_OPERATIONS = (
    "joinGame",
    "leaveGame",
    "cancelGame",
    "getBoard",
    "sendCommands",
    "previewCommands",
    "listEvents",
    "createStreamTicket",
    "followEvents",
    "getReplay",
    "getRecord",
)
"""The operations that take the `game_id` a creation answers with."""


def _link_games(openapi: OpenAPI) -> None:
    for path in (openapi.paths or {}).values():
        operation = path.post
        if operation is None or operation.operation_id != "createGame":
            continue
        created = (operation.responses or {}).get("201")
        if isinstance(created, OpenAPIResponse):
            created.links = {
                name: Link(
                    operation_id=name,
                    parameters={"game_id": "$response.body#/game_id"},
                    description=f"{name} on the game just created",
                )
                for name in GAME_OPERATIONS
            }


def _audit_body(openapi: OpenAPI) -> None:
    """The audit reads its body itself (a record is audited, not decoded by the app): say
    what it takes."""
    for path in (openapi.paths or {}).values():
        operation = path.post
        if operation is not None and operation.operation_id == "auditRecord":
            record = Schema(  # any JSON at all: what is not a record is answered, not refused
                description="A game record, `patrician-record/1` (docs/record.md): any body "
                "is audited, and what is not a record fails the `shape` check",
            )
            operation.request_body = RequestBody(
                content={"application/json": OpenAPIMediaType(schema=record)}, required=True
            )


def _busy(openapi: OpenAPI) -> None:
    """Any operation may be refused 429 when its client has too many requests in flight in
    the process (`server.transport.edge`): said of each that does not say 429 already."""
    example = msgspec.to_builtins(BUSY)
    for path in (openapi.paths or {}).values():
        for operation in (path.get, path.put, path.post, path.delete, path.patch, path.head):
            if operation is None or operation.responses is None:
                continue
            if "429" in operation.responses:
                continue
            operation.responses["429"] = OpenAPIResponse(
                description="Too many requests of this client in flight at once: try again "
                "after `Retry-After` seconds",
                content={
                    "application/json": OpenAPIMediaType(
                        schema=Reference(ref="#/components/schemas/ErrorBody"),
                        examples={BUSY.error: Example(summary=BUSY.error, value=example)},
                    )
                },
            )


def tighten(openapi: OpenAPI) -> None:
    """Forbid unknown fields where the server does, fix the length of tuples, link the
    creation of a game to the operations on it, describe the bodies read by hand, say the
    refusal any operation may meet."""
    _link_games(openapi)
    _audit_body(openapi)
    _busy(openapi)
    strict = _strict_structs()
    components = openapi.components.schemas or {}
    for name, component in components.items():
        if isinstance(component, Schema) and name in strict:
            component.additional_properties = False
        for schema in _schemas(component):
            if schema.prefix_items is not None:
                schema.min_items = schema.max_items = len(schema.prefix_items)

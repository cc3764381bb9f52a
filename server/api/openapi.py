"""Make the OpenAPI document as strict as the server, and tell how its operations connect.

Litestar's schemas of msgspec Structs do not carry `forbid_unknown_fields` nor the fixed length
of a tuple, and drop some bounds msgspec enforces (a bound of 0 on an optional field, every
bound on the items of a list); clients and fuzzers that trust the document would send what
the server refuses. And a created game's id is what every game operation needs: the document
says so with OpenAPI links, so that stateful tools (and people) can follow from one to the next.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from functools import cache
from typing import Any

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


_BOUNDS = {
    "minimum": "minimum",
    "exclusiveMinimum": "exclusive_minimum",
    "maximum": "maximum",
    "exclusiveMaximum": "exclusive_maximum",
    "minLength": "min_length",
    "maxLength": "max_length",
    "pattern": "pattern",
    "minItems": "min_items",
    "maxItems": "max_items",
}
"""The bounds of a JSON Schema that msgspec enforces, and their names in Litestar's `Schema`."""


@cache
def _own_schemas() -> dict[str, Any]:
    """msgspec's own JSON Schema of every request body (and of what they hold): exactly what
    the server's strict reading of a body enforces."""
    bodies = [
        kind
        for kind in vars(requests).values()
        if isinstance(kind, type)
        and issubclass(kind, msgspec.Struct)
        and kind.__module__ == requests.__name__
    ]
    return msgspec.json.schema_components(bodies)[1]


def _restore_bounds(own: Any, schema: Schema | Reference | bool | None) -> None:
    """Put back into Litestar's `schema` each bound of msgspec's `own` schema of the same
    value that it lost, in its properties and items too."""
    if not isinstance(schema, Schema) or not isinstance(own, dict):
        return
    value = next((b for b in own.get("anyOf", ()) if b.get("type") not in (None, "null")), own)
    for bound, attribute in _BOUNDS.items():
        if bound in value and getattr(schema, attribute) is None:
            setattr(schema, attribute, value[bound])
    for name, member in (own.get("properties") or {}).items():
        _restore_bounds(member, (schema.properties or {}).get(name))
    _restore_bounds(value.get("items"), schema.items)


CLOSED = ("Delegates",)
"""Answers documented as having no members beyond their own, though their Structs do not
forbid more: `Delegates` names its members `A` to `D`, and a Python client generated from the
document (openapi-python-client) reads a model's remaining members from a local variable `d`
that its member `D` overwrites, so that the record it decoded could not be encoded again. A
record's delegates never have other members (the audit refuses a member that the record format
does not have), and with none allowed the generated code keeps no remaining members at all:
the wire name `D`, every stored record and the record format stay as they are."""


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
    "rematchGame",
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
    """Forbid unknown fields where the server does, fix the length of tuples, put back the
    bounds Litestar lost, link the creation of a game to the operations on it, describe the
    bodies read by hand, say the refusal any operation may meet."""
    _link_games(openapi)
    _audit_body(openapi)
    _busy(openapi)
    strict = _strict_structs()
    own = _own_schemas()
    components = openapi.components.schemas or {}
    for name, component in components.items():
        if isinstance(component, Schema) and (name in strict or name in CLOSED):
            component.additional_properties = False
        _restore_bounds(own.get(name), component)
        for schema in _schemas(component):
            if schema.prefix_items is not None:
                schema.min_items = schema.max_items = len(schema.prefix_items)

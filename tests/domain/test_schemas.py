"""The published JSON Schemas in docs/schemas are exactly what the code accepts and emits."""

from __future__ import annotations

from pathlib import Path

from domain.schemas import schema_documents

DOCS = Path(__file__).parents[2] / "docs" / "schemas"


def test_the_documented_schemas_are_up_to_date() -> None:
    for name, content in schema_documents().items():
        path = DOCS / name
        assert path.exists(), f"docs/schemas/{name} is missing"
        assert path.read_bytes() == content, (
            f"docs/schemas/{name} is stale: regenerate with `patrician schemas docs/schemas`"
        )

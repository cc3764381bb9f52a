"""The domain imports only the standard library and msgspec, and no clock, randomness or I/O
(DESIGN.md section 1). import-linter keeps the floors in order; this test keeps the domain's
imports to an explicit list that a reviewer can read."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

DOMAIN = Path(__file__).parents[2] / "domain"
ALLOWED_THIRD_PARTY = {"msgspec"}
FORBIDDEN_STDLIB = {
    "random", "secrets", "time", "datetime", "os", "io", "pathlib", "socket", "subprocess",
    "threading", "asyncio", "importlib", "sqlite3", "urllib", "http", "shutil", "tempfile",
    "logging", "uuid",
}  # fmt: skip


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_the_domain_imports_only_the_standard_library_and_msgspec() -> None:
    files = sorted(DOMAIN.rglob("*.py"))
    assert files
    for path in files:
        for name in _imports(path):
            allowed = (
                name in ("domain", "__future__")
                or name in ALLOWED_THIRD_PARTY
                or (name in sys.stdlib_module_names and name not in FORBIDDEN_STDLIB)
            )
            assert allowed, f"{path.name} imports {name}"

"""Import rules that keep the architecture honest, checked on the source with ``ast`` (no import runs)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import mission_memory

PACKAGE_ROOT = Path(mission_memory.__file__).parent
SOURCE_ROOTS = [PACKAGE_ROOT, PACKAGE_ROOT.parent.parent / "tests", PACKAGE_ROOT.parent.parent / "benchmarks"]


def _imported_modules(path: Path) -> Iterator[str]:
    """Every module ``path`` imports, at any depth (``TYPE_CHECKING`` blocks and functions included)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module
            yield from (f"{node.module}.{alias.name}" for alias in node.names)


def test_the_refresher_never_imports_the_core_api_so_there_is_no_import_cycle() -> None:
    offenders = [
        f"{path.relative_to(PACKAGE_ROOT)} imports {module}"
        for path in sorted((PACKAGE_ROOT / "refresh").rglob("*.py"))
        for module in _imported_modules(path)
        if module == "mission_memory.api" or module.startswith("mission_memory.api.")
    ]
    assert offenders == []


def test_the_refresh_cli_reaches_the_refresher_only_through_memory() -> None:
    cli = PACKAGE_ROOT / "cli" / "refresh_commands.py"
    assert [m for m in _imported_modules(cli) if m.startswith("mission_memory.refresh.orchestrator")] == []


def test_nothing_imports_the_old_ingest_trackers_package() -> None:
    offenders = [
        f"{path} imports {module}"
        for root in SOURCE_ROOTS if root.is_dir()
        for path in sorted(root.rglob("*.py"))
        for module in _imported_modules(path)
        if module == "mission_memory.ingest.trackers" or module.startswith("mission_memory.ingest.trackers.")
    ]
    assert offenders == []

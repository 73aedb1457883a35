"""Boundaries that stay true, read from the source with the ``ast`` module (docs/design.md §11.2: dependencies point inward).

Each rule names the modules it constrains and what they may not import; imports inside functions
(lazy imports) count like any other.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "mission_memory"
STORES = PACKAGE / "stores"
# The store boundary: the protocols, the registry, the filter fields every backend compiles, and export/import
# and the record write path over the protocols; everything else in stores/ is a concrete backend.
STORE_BOUNDARY = {
    "mission_memory.stores",
    "mission_memory.stores.base",
    "mission_memory.stores.registry",
    "mission_memory.stores.filters",
    "mission_memory.stores.transfer",
    "mission_memory.stores.write_path",
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> Iterator[tuple[str, Path]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        yield _module_name(path), path


def _imports(path: Path) -> set[str]:
    """Every module ``path`` imports, with ``from a import b`` counted as both ``a`` and ``a.b``."""
    out: set[str] = set()
    package = _module_name(path).rsplit(".", 1)[0] if path.name != "__init__.py" else _module_name(path)
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            out.add(base)
            out.update(f"{base}.{alias.name}" for alias in node.names)
    return out


def _concrete_backends() -> set[str]:
    names = {_module_name(p) for p in STORES.rglob("*.py")}
    return names - STORE_BOUNDARY


def test_the_rules_below_see_the_whole_package() -> None:
    names = dict(_modules())
    assert "mission_memory.api" in names and "mission_memory.stores.sqlite" in _concrete_backends()
    assert "mission_memory.stores.registry" in _imports(names["mission_memory.api"])


def test_no_module_outside_stores_imports_a_concrete_backend() -> None:
    concrete = _concrete_backends()
    offenders = {
        name: sorted(_imports(path) & concrete)
        for name, path in _modules()
        if not name.startswith("mission_memory.stores") and _imports(path) & concrete
    }
    assert offenders == {}, f"import the store protocols (stores.base) or the registry instead: {offenders}"


def test_only_the_registry_names_a_backend_inside_stores_boundary_modules() -> None:
    concrete = _concrete_backends()
    base = _imports(STORES / "base.py") & concrete
    assert base == set(), f"stores/base.py must not depend on a backend: {sorted(base)}"


def test_retrieval_imports_nothing_from_ingest() -> None:
    offenders = {
        name: sorted(i for i in _imports(path) if i == "mission_memory.ingest" or i.startswith("mission_memory.ingest."))
        for name, path in _modules()
        if name.startswith("mission_memory.retrieval.") or name == "mission_memory.retrieval"
    }
    assert {k: v for k, v in offenders.items() if v} == {}


# -- api <-> refresh -----------------------------------------------------------------------------


def test_the_refresher_never_imports_the_core_api_so_there_is_no_import_cycle() -> None:
    offenders = {
        name: sorted(i for i in _imports(path) if i == "mission_memory.api" or i.startswith("mission_memory.api."))
        for name, path in _modules()
        if name.startswith("mission_memory.refresh.")
    }
    assert {k: v for k, v in offenders.items() if v} == {}


def test_the_refresh_cli_reaches_the_refresher_only_through_memory() -> None:
    cli = _imports(PACKAGE / "cli" / "refresh_commands.py")
    assert sorted(i for i in cli if i.startswith("mission_memory.refresh.orchestrator")) == []


def _absolute_imports(path: Path) -> set[str]:
    """Modules ``path`` imports by absolute name (test and benchmark files are not in the package)."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            out.add(node.module)
            out.update(f"{node.module}.{alias.name}" for alias in node.names)
    return out


def test_nothing_imports_the_old_ingest_trackers_package() -> None:
    roots = [PACKAGE, SRC.parent / "tests", SRC.parent / "benchmarks"]
    offenders = [
        f"{path.relative_to(SRC.parent)} imports {module}"
        for root in roots
        if root.is_dir()
        for path in sorted(root.rglob("*.py"))
        for module in _absolute_imports(path)
        if module == "mission_memory.ingest.trackers" or module.startswith("mission_memory.ingest.trackers.")
    ]
    assert offenders == []

"""docs/architecture.md and docs/design.md are true to the code: every code name they cite in
backticks (a folder, a module path, ``module.function``, ``Class.method``, an identifier) exists in
``src/mission_memory`` (issue 36: the architecture page named a function that did not exist)."""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "mission_memory"
CITED = re.compile(r"`([^`\n]+)`")
IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
DOCS = ("docs/architecture.md", "docs/design.md")
INPUT_PATHS = frozenset({"docs/principles/"})
"""Folders of a *mission's* repository the pages cite (what ingest reads there), not of this one."""


@functools.cache
def _modules() -> dict[str, list[Path]]:
    """Module path relative to the package (``handover/brief``, ``api``) and its bare stem -> files."""
    found: dict[str, list[Path]] = {}
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE).with_suffix("").as_posix()
        if rel.endswith("/__init__"):
            rel = rel.removesuffix("/__init__")
        for key in {rel, rel.rsplit("/", 1)[-1], rel.replace("/", ".")}:
            found.setdefault(key, []).append(path)
    return found


@functools.cache
def _definitions(path: Path) -> dict[str, set[str]]:
    """Top-level names of ``path`` -> their members (a class's methods and attributes; ``set()`` otherwise)."""
    names: dict[str, set[str]] = {}
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.ClassDef):
            names[node.name] = {n.name for n in node.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)} | {
                t.id for n in node.body if isinstance(n, ast.AnnAssign | ast.Assign)
                for t in ([n.target] if isinstance(n, ast.AnnAssign) else n.targets) if isinstance(t, ast.Name)}
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            names[node.name] = set()
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            for target in [node.target] if isinstance(node, ast.AnnAssign) else node.targets:
                if isinstance(target, ast.Name):
                    names[target.id] = set()
    return names


@functools.cache
def _everything() -> tuple[set[str], dict[str, set[str]]]:
    """Every name defined anywhere in the package (and string constants: record kinds, tool names),
    and every class with its members."""
    names: set[str] = set()
    classes: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        for name, members in _definitions(path).items():
            names.add(name)
            if members:
                classes.setdefault(name, set()).update(members)
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and IDENTIFIER.match(node.value):
                names.add(node.value)
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                names.add(node.name)
            elif isinstance(node, ast.ImportFrom):
                names.update(alias.asname or alias.name for alias in node.names)
    for members in classes.values():
        names.update(members)
    return names, classes


def problem(name: str) -> str | None:
    """Why ``name`` (a backticked citation) names nothing in the package, or None when it exists or is
    not a code name (a command line, a flag, a path outside the package)."""
    name = name.strip().removesuffix("()")
    if not name or " " in name or name[0] in "-/.$<" or any(c in name for c in "=*<>") \
            or name.startswith("mission-memory"):
        return None
    modules = _modules()
    names, classes = _everything()
    if name.startswith("MISSION_MEMORY_"):  # a setting: a field of config.Settings
        fields = classes.get("Settings", set())
        return None if name.removeprefix("MISSION_MEMORY_").lower() in fields or name in names \
            else "no such setting in config.Settings"
    if name.endswith("/"):
        return None if name in INPUT_PATHS or (PACKAGE / name).is_dir() or (ROOT / name).is_dir() \
            or any(k.endswith(name.rstrip("/")) for k in modules) else "no such folder"
    if name.endswith(".py"):
        return None if any(p.as_posix().endswith("/" + name) for ps in modules.values() for p in ps) \
            or (ROOT / name).is_file() else "no such module"
    if "/" in name:  # handover/brief or handover/brief.collect_brief_items
        module, _, attribute = name.partition(".")
        if module not in modules:
            return "no such module"
        if attribute and not any(_has(p, attribute) for p in modules[module]):
            return f"{module} defines no {attribute}"
        return None
    if "." in name:  # Memory.query, git_runner.run_git, SqliteStore.ensure_sound
        head, _, attribute = name.partition(".")
        if head in classes:
            return None if attribute.split(".")[0] in classes[head] else f"class {head} has no {attribute}"
        if head in modules:
            return None if any(_has(p, attribute) for p in modules[head]) else f"{head} defines no {attribute}"
        return None  # not ours (json.dumps, os.environ)
    if IDENTIFIER.match(name) and ("_" in name.strip("_") or name[0].isupper()) and name not in names \
            and name not in modules:
        return "defined nowhere in the package"
    return None


def _has(path: Path, dotted: str) -> bool:
    top, _, member = dotted.partition(".")
    defs = _definitions(path)
    return top in defs and (not member or member.split(".")[0] in defs[top])


def test_the_checker_finds_a_name_that_does_not_exist() -> None:
    assert problem("operations/event_intake.record_event") == "operations/event_intake defines no record_event"
    assert problem("operations/event_intake.store_events") is None
    assert problem("Memory.record_events") is None and problem("Memory.no_such_method") is not None
    assert problem("handover/brief.py") is None and problem("handover/briefs.py") is not None
    assert problem("retrieval/") is None and problem("nowhere/") is not None
    assert problem("MISSION_MEMORY_DEFAULT_TOKEN_BUDGET") is None and problem("MISSION_MEMORY_NO_SUCH") is not None
    assert problem("DecisionAttributes") is None and problem("NoSuchClass") is not None


@pytest.mark.parametrize("doc", DOCS)
def test_every_code_name_a_design_page_cites_exists(doc: str) -> None:
    text = (ROOT / doc).read_text()
    missing = sorted({f"{m.group(1)}: {why}" for m in CITED.finditer(text) if (why := problem(m.group(1)))})
    assert missing == []

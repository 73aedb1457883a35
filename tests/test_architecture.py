"""Boundaries that stay true, read from the source with the ``ast`` module (docs/design.md §11.2: dependencies point inward).

Each rule names the modules it constrains and what they may not import; imports inside functions
(lazy imports) count like any other.
"""

from __future__ import annotations

import ast
import functools
import re
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
    "mission_memory.stores.status",  # what `status` reports, over the protocols
    "mission_memory.stores.private_files",  # file modes (0600 files in 0700 folders), not a backend
    "mission_memory.stores.state_change",  # a compare-and-set loop over the StateStore protocol
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
    return _imports_under(SRC, path)


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


# -- the layout (docs/adr/0051) -----------------------------------------------------------------

LAYERS: tuple[frozenset[str], ...] = tuple(frozenset(layer) for layer in (
    {"__main__", "cli", "mcp", "hook"},                          # shells
    {"api", ""},                                                 # the core API (and the package's lazy exports)
    {"corrections", "handover"},                                 # flows over several capabilities
    {"refresh"},                                                 # push refresh
    {"retrieval", "ingest"},                                     # pull, and what fills the memory
    {"operations", "teams", "trackers", "metrics"},              # events and triage, access, trackers, metrics
    {"prompts"},                                                 # the prompt corpus and its cues
    {"stores", "embeddings"},                                    # the store protocols and backends, embedders
    {"config", "mission_scope", "records", "decisions", "retrieval_events", "fence", "front_matter", "tokens"},
    {"errors", "utc", "git_runner", "http_deadline", "capture"},  # shared ground; capture is stdlib-only
))
"""Top-level units (a folder or a module of ``mission_memory``), from the shells down; a unit may import
its own layer and the layers below it, never one above."""

CAPTURE = PACKAGE / "capture"


def _unit(module: str) -> str:
    """The top-level unit of ``mission_memory.x.y`` (``x``); ``""`` for the package itself."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


@functools.lru_cache(maxsize=4)
def _import_graph(package: Path) -> dict[str, set[str]]:
    """``module -> modules of the same package it imports`` for every module under ``package``'s source root."""
    names = {_module_name_under(package.parent, p) for p in package.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for path in sorted(package.rglob("*.py")):
        name = _module_name_under(package.parent, path)
        graph[name] = {i for i in _imports_under(package.parent, path) if i in names and i != name}
    return graph


def _module_name_under(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports_under(root: Path, path: Path) -> set[str]:
    out: set[str] = set()
    name = _module_name_under(root, path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
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


def import_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []
    counter = 0

    def visit(v: str) -> None:
        nonlocal counter
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return circles


def test_no_import_circle_between_modules() -> None:
    assert import_circles(_import_graph(PACKAGE)) == []


def test_no_import_circle_between_folders() -> None:
    units: dict[str, set[str]] = {}
    for module, imported in _import_graph(PACKAGE).items():
        units.setdefault(_unit(module), set()).update(_unit(i) for i in imported if _unit(i) != _unit(module))
    assert import_circles(units) == []


def test_the_circle_check_finds_a_planted_circle(tmp_path: Path) -> None:
    planted = tmp_path / "planted"
    (planted / "inner").mkdir(parents=True)
    (planted / "__init__.py").write_text("")
    (planted / "inner" / "__init__.py").write_text("")
    (planted / "a.py").write_text("def f() -> None:\n    from planted.inner import b  # a lazy import counts too\n")
    (planted / "inner" / "b.py").write_text("from .. import a\n")
    (planted / "c.py").write_text("import planted.a\n")
    assert import_circles(_import_graph(planted)) == [["planted.a", "planted.inner.b"]]


def test_every_top_level_unit_has_a_layer() -> None:
    units = {_unit(m) for m in _import_graph(PACKAGE)}
    layered = set().union(*LAYERS)
    assert units - layered == set(), "add the new unit to LAYERS (and docs/architecture.md)"
    assert layered - units == set(), "LAYERS names a unit that no longer exists"


def test_imports_point_down_the_layers() -> None:
    layer_of = {unit: depth for depth, layer in enumerate(LAYERS) for unit in layer}
    upward = sorted(
        f"{module} imports {imported}"
        for module, deps in _import_graph(PACKAGE).items()
        for imported in deps
        if layer_of[_unit(imported)] < layer_of[_unit(module)]
    )
    assert upward == []


def test_the_capture_library_imports_only_the_standard_library() -> None:
    import sys

    own = {p.stem for p in CAPTURE.glob("*.py")}
    offenders = sorted(
        f"{path.name} imports {name}"
        for path in CAPTURE.glob("*.py")
        for name in _imports_under(SRC, path)
        if name
        and name.split(".")[0] not in sys.stdlib_module_names
        and name.split(".")[0] not in own
        and not name.startswith("mission_memory.capture")
    )
    assert offenders == []


def test_at_most_fifteen_top_level_modules() -> None:
    assert len(list(PACKAGE.glob("*.py"))) <= 15


# -- one rule, one home (issue 36) ----------------------------------------------------------------

CONFIG = PACKAGE / "config.py"
CLI = PACKAGE / "cli"


def environment_reads(root: Path) -> list[str]:
    """``path:line`` of every read of the process environment under ``root``, outside ``config.py`` and the
    stdlib-only ``capture/`` library (the prompt hook reads its own variables before any package import):
    ``os.environ`` (other than ``setdefault``) and ``os.getenv`` under any name ``os`` is imported as,
    ``from os import environ``/``getenv``, and a second settings model (a ``BaseSettings`` import)."""
    found = []
    for path in sorted(root.rglob("*.py")):
        if path.name == "config.py" or "capture" in path.relative_to(root).parts:
            continue
        tree = ast.parse(path.read_text())
        setting = {  # os.environ.setdefault(...) sets a variable for a library (OMP_WAIT_POLICY): no setting read
            node.lineno for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "setdefault"
        }
        os_names = {"os", "_os"} | {alias.asname for node in ast.walk(tree) if isinstance(node, ast.Import)
                                    for alias in node.names if alias.name == "os" and alias.asname}
        found += [
            f"{path.relative_to(root)}:{node.lineno}" for node in ast.walk(tree)
            if (isinstance(node, ast.Attribute) and node.attr in {"environ", "getenv"}
                and isinstance(node.value, ast.Name) and node.value.id in os_names and node.lineno not in setting)
            or (isinstance(node, ast.ImportFrom) and (
                (node.module == "os" and {a.name for a in node.names} & {"environ", "getenv"})
                or (node.module or "").startswith("pydantic_settings")))
        ]
    return found


def test_settings_are_read_only_through_config() -> None:
    assert environment_reads(PACKAGE) == []


def test_the_settings_rule_finds_a_planted_read(tmp_path: Path) -> None:
    (tmp_path / "config.py").write_text("import os\nX = os.environ.get('MISSION_MEMORY_X')\n")
    (tmp_path / "elsewhere.py").write_text("import os\n\n\ndef f():\n    return os.getenv('MISSION_MEMORY_X')\n")
    assert environment_reads(tmp_path) == ["elsewhere.py:5"]


def _package_copy(tmp_path: Path) -> Path:
    copy = tmp_path / "mission_memory"
    for path in PACKAGE.rglob("*.py"):
        (copy / path.relative_to(PACKAGE)).parent.mkdir(parents=True, exist_ok=True)
        (copy / path.relative_to(PACKAGE)).write_text(path.read_text())
    return copy


def test_the_settings_rule_fails_on_reads_planted_in_a_copy_of_the_package(tmp_path: Path) -> None:
    copy = _package_copy(tmp_path)
    assert environment_reads(copy) == []
    (copy / "stores" / "planted.py").write_text(
        "import os as o\nfrom os import environ\nfrom pydantic_settings import BaseSettings\n\n\n"
        "def f() -> None:\n    return o.environ['MISSION_MEMORY_X'] or environ.get('Y') or o.getenv('Z')\n")
    (copy / "retrieval" / "planted_too.py").write_text("import os\nX = os.environ.get('MISSION_MEMORY_X')\n")
    assert environment_reads(copy) == ["retrieval/planted_too.py:2", "stores/planted.py:2", "stores/planted.py:3",
                                       "stores/planted.py:7", "stores/planted.py:7"]


def memory_openers(root: Path) -> list[str]:
    """``path:function`` of every function under ``root`` (the CLI) that opens the memory: calls
    ``Memory.open`` or ``Memory(...)``, under whatever name ``Memory`` is imported as."""
    found = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text())
        names = {"Memory"} | {alias.asname for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                              for alias in node.names if alias.name == "Memory" and alias.asname}
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                for call in ast.walk(node):
                    if isinstance(call, ast.Call) and (
                        (isinstance(call.func, ast.Attribute) and call.func.attr == "open"
                         and isinstance(call.func.value, ast.Name) and call.func.value.id in names)
                        or (isinstance(call.func, ast.Name) and call.func.id in names)
                    ):
                        found.append(f"{path.relative_to(root)}:{node.name}")
                        break
    return found


def test_the_cli_opens_the_memory_in_one_place() -> None:
    assert memory_openers(CLI) == ["opening.py:open_memory"]


def test_the_opener_rule_finds_a_planted_second_opener(tmp_path: Path) -> None:
    for src in CLI.glob("*.py"):
        (tmp_path / src.name).write_text(src.read_text())
    (tmp_path / "planted.py").write_text(
        "def _open_memory():\n    from mission_memory.api import Memory\n\n    return Memory.open()\n")
    assert memory_openers(tmp_path) == ["opening.py:open_memory", "planted.py:_open_memory"]


def test_the_opener_rule_finds_an_opener_that_builds_memory_under_another_name(tmp_path: Path) -> None:
    for src in CLI.glob("*.py"):
        (tmp_path / src.name).write_text(src.read_text())
    (tmp_path / "planted.py").write_text(
        "def _memory():\n    from mission_memory.api import Memory as M\n    from mission_memory.config import load_settings"
        "\n\n    return M(load_settings())\n")
    assert memory_openers(tmp_path) == ["opening.py:open_memory", "planted.py:_memory"]


def _any_annotations(path: Path, names: set[str]) -> list[str]:
    """``name: annotation`` for parameters and returns in ``path`` named in ``names`` annotated ``Any``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            args = node.args.args + node.args.kwonlyargs
            for arg in args:
                if arg.arg in names and arg.annotation is not None and "Any" in ast.unparse(arg.annotation):
                    found.append(f"{path.name}:{node.name}({arg.arg})")
            if node.returns is not None and "Any" in ast.unparse(node.returns) and "open" in node.name:
                found.append(f"{path.name}:{node.name} -> {ast.unparse(node.returns)}")
    return found


def test_no_any_on_the_cli_s_path_to_memory() -> None:
    """The CLI's opener returns a ``Memory`` and no command takes the memory as ``Any``, so
    ``mypy --strict`` checks every call the CLI makes into the core."""
    offenders = [hit for path in sorted(CLI.glob("*.py")) for hit in _any_annotations(path, {"memory"})]
    assert offenders == []
    opener = next(n for n in ast.walk(ast.parse((CLI / "opening.py").read_text()))
                  if isinstance(n, ast.FunctionDef) and n.name == "open_memory")
    assert opener.returns is not None and ast.unparse(opener.returns) == "Memory"


def test_public_return_types_of_memory_are_not_erased() -> None:
    api = ast.parse((PACKAGE / "api.py").read_text())
    memory = next(n for n in api.body if isinstance(n, ast.ClassDef) and n.name == "Memory")
    erased = sorted(
        f"{f.name} -> {ast.unparse(f.returns)}" for f in memory.body
        if isinstance(f, ast.FunctionDef) and not f.name.startswith("_") and f.returns is not None
        and ast.unparse(f.returns) in {"Any", "list[Any]", "dict[str, Any] | Any"}
    )
    assert erased == []


def test_no_two_classes_share_a_name() -> None:
    """One class per meaning, named for it (two ``PruneReport`` classes meant two different things)."""
    seen: dict[str, list[str]] = {}
    for name, path in _modules():
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                seen.setdefault(node.name, []).append(name)
    assert {k: v for k, v in seen.items() if len(v) > 1} == {}


SOURCE_KEY_BY_HAND = re.compile(r"""f["']\{[^}]*\}:\{(?:RecordKind\.[A-Z_]+|kind)\.value\}:""")


def test_source_keys_are_built_by_one_function_beside_record() -> None:
    """``mission:kind:ref`` is written once (:func:`mission_memory.records.source_key_for`); a copy
    elsewhere drifts from it unnoticed and the lookup finds nothing."""
    offenders = sorted(
        f"{path.relative_to(PACKAGE)}:{number}"
        for path in PACKAGE.rglob("*.py") if path.name != "records.py"
        for number, line in enumerate(path.read_text().splitlines(), 1) if SOURCE_KEY_BY_HAND.search(line)
    )
    assert offenders == []


RULE_CONSTANTS = (
    ("config.py", "DEFAULT_TOKEN_BUDGET", 8000, "budget"),
    ("config.py", "MAX_TOKEN_BUDGET", 200_000, "budget"),
    ("handover/__init__.py", "DEFAULT_BRIEF_TOKEN_BUDGET", 4000, "budget"),
)
"""A rule's constant, where it is defined, its value and the word that marks a use of the rule."""


def rule_literal_copies(root: Path, name: str, value: int, word: str, home: str) -> list[str]:
    """``path:line`` of every line under ``root`` (outside the constant's home line) that writes ``value``
    as a literal (``8000``, ``8_000``, ``8,000``) within three lines after a mention of ``word``."""
    spellings = re.compile(rf"(?<![\w.,]){value}(?![\w.])|(?<![\w.,]){value:_}(?![\w.])|(?<![\w.,]){value:,}(?![\w.])")
    found = []
    for path in sorted(root.rglob("*.py")):
        lines = path.read_text().splitlines()
        for number, line in enumerate(lines, 1):
            if not spellings.search(line):
                continue
            if path.relative_to(root).as_posix() == home and line.startswith(f"{name} ="):
                continue
            if any(word in lines[i].lower() for i in range(max(0, number - 4), number)):
                found.append(f"{path.relative_to(root)}:{number}")
    return found


def test_a_rule_s_constant_is_written_once() -> None:
    """The budget defaults were written in four places each; the MCP tool's own 8000 kept the setting
    from ever reaching an agent (issue 36). Uses name the constant."""
    offenders = {name: hits for home, name, value, word in RULE_CONSTANTS
                 if (hits := rule_literal_copies(PACKAGE, name, value, word, home))}
    assert offenders == {}


def test_the_literal_rule_finds_a_planted_copy(tmp_path: Path) -> None:
    (tmp_path / "config.py").write_text("DEFAULT_TOKEN_BUDGET = 8000\n")
    (tmp_path / "tool.py").write_text("def tool(\n    token_budget: int\n    = 8_000,\n) -> None: ...\n")
    assert rule_literal_copies(tmp_path, "DEFAULT_TOKEN_BUDGET", 8000, "budget", "config.py") == ["tool.py:3"]


# -- Memory is dispatch (issue 36) ----------------------------------------------------------------

MEMORY_METHOD_LINES = 16
"""Lines of code (docstring and lazy imports not counted) a ``Memory`` method may hold: enough to open,
check an argument's type and call the room that owns the rule, too few to hold the rule itself."""
DELEGATING = {"record_events": 8, "record_decision": 6, "status": 1, "record_correction": 5}
"""Methods whose body is one call into the room that owns their rules (record_events also wakes its
embedding queue; status's rules live in stores/status.py, record_correction's in corrections/recording.py)."""


def memory_method_lines(source: str) -> dict[str, int]:
    """Lines of code of each method of class ``Memory`` in ``source`` (docstring and imports excluded)."""
    cls = next(n for n in ast.parse(source).body if isinstance(n, ast.ClassDef) and n.name == "Memory")
    sizes = {}
    for method in cls.body:
        if not isinstance(method, ast.FunctionDef):
            continue
        body = method.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            body = body[1:]
        lines: set[int] = set()
        for statement in body:
            if not isinstance(statement, ast.Import | ast.ImportFrom):
                lines.update(range(statement.lineno, (statement.end_lineno or statement.lineno) + 1))
        sizes[method.name] = len(lines)
    return sizes


def test_memory_methods_dispatch_and_hold_no_feature_rules() -> None:
    """``Memory`` held ~200 lines of feature rules (record_events' typo refusal, attribution and time
    checks, record_decision's mission and operator rules, query's handover branch); they live in
    operations/, ingest/ and handover/ now, and must not grow back into the dispatcher."""
    sizes = memory_method_lines((PACKAGE / "api.py").read_text())
    limits = DELEGATING
    too_long = {name: n for name, n in sizes.items() if n > limits.get(name, MEMORY_METHOD_LINES)}
    assert too_long == {}


def test_the_dispatch_rule_finds_a_planted_rule() -> None:
    planted = "class Memory:\n    def record_events(self):\n        '''doc'''\n" + "        x = 1\n" * 7
    assert memory_method_lines(planted) == {"record_events": 7}

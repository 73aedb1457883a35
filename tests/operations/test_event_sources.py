"""Event sources: one module of ``operations/sources/`` per sender, registered in one place and served
by the real HTTP server with no source-specific code outside its module (issue 37 item 7)."""

from __future__ import annotations

import ast
import pkgutil
from pathlib import Path

import httpx

from mission_memory.operations import sources as sources_package
from mission_memory.operations.sources import Source, source_named, sources
from tests.mcp_http_server import http_mcp_server

SRC = Path(__file__).resolve().parents[2] / "src" / "mission_memory"
SOURCES_DIR = SRC / "operations" / "sources"

GENERIC_NAMES = {"events", "events_csv"}
"""Source names that are plain words of the event model (``/events`` takes events as they are)."""

ALLOWED = {
    Path("config.py"): "settings live in config.py: MISSION_MEMORY_ALERTMANAGER_MAPPING names its source",
    Path("operations", "scenarios.py"): "seeded scenarios post Alertmanager payloads: a client of that source",
}


def test_every_module_of_the_package_registers_one_source_with_its_own_name_and_path() -> None:
    modules = sorted(m.name for m in pkgutil.iter_modules(sources_package.__path__))
    registered = sources()
    assert [s.name for s in registered] == modules  # one file, one source, named like the file
    assert {"alertmanager", "pagerduty", "opsgenie", "events"} <= set(modules)
    assert len({s.path for s in registered}) == len(registered)
    assert all(isinstance(s, Source) and s.methods and s.media_types for s in registered)
    assert source_named("pagerduty").path == "/alerts/pagerduty"


def code_names(path: Path) -> list[tuple[int, str]]:
    """Identifiers, imported names and string constants of a module with their lines; prose (docstrings
    and other bare string statements) left out, as prose may name a source."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    prose = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)}
    out: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in prose:
            out.append((node.lineno, node.value))
        elif isinstance(node, ast.Name):
            out.append((node.lineno, node.id))
        elif isinstance(node, ast.Attribute):
            out.append((node.lineno, node.attr))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.append((node.lineno, node.name))
        elif isinstance(node, ast.ImportFrom):
            out.extend((node.lineno, f"{node.module}.{a.name}") for a in node.names)
        elif isinstance(node, ast.Import):
            out.extend((node.lineno, a.name) for a in node.names)
    return out


def source_names_in_code(root: Path, names: set[str], paths: set[str]) -> list[str]:
    """Where code under ``root`` (outside ``operations/sources/`` and :data:`ALLOWED`) names a source."""
    found = []
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root)
        if relative.parts[:2] == ("operations", "sources") or relative in ALLOWED:
            continue
        for line, text in code_names(path):
            hit = next((n for n in names if n in text.lower()), None) or next((p for p in paths if p in text), None)
            if hit:
                found.append(f"{relative}:{line}: {text[:80]!r} names {hit!r}")
    return found


def test_no_source_specific_name_appears_in_code_outside_its_module() -> None:
    """Routing, intake, alert state and views serve every source alike: none names one in its code."""
    names = {s.name for s in sources()} - GENERIC_NAMES
    assert source_names_in_code(SRC, names, {s.path for s in sources()}) == []


def test_the_real_server_serves_every_registered_source_on_its_path(data_dir: Path) -> None:
    """Each route answers as its source: a body of the wrong type is 415 naming the source, nothing stored."""
    with http_mcp_server(data_dir) as url, httpx.Client(base_url=url.removesuffix("/mcp"), timeout=60) as http:
        for source in sources():
            for method in source.methods:
                answer = http.request(method, f"{source.path}?mission=shop", content=b"x",
                                      headers={"content-type": "text/plain"})
                assert answer.status_code == 415, (source.name, method, answer.text)
                assert answer.json()["error"].startswith(source.label), answer.text
            assert http.get(source.path).status_code == 405


def test_csv_events_are_received_and_a_bad_row_is_400_naming_its_line(data_dir: Path) -> None:
    header = "id,time,sector,type,criticality,source,text\n"
    good = header + "csv-1,2026-03-01T11:58:00Z,north,shelling,0.9,post-7,Shelling near the bridge\n"
    bad = header + "csv-2,2026-03-01T11:59:00Z,north,shelling,high,post-7,Second report\n"
    with http_mcp_server(data_dir) as url, httpx.Client(base_url=url.removesuffix("/mcp"), timeout=60) as http:
        csv = {"content-type": "text/csv; charset=utf-8"}
        refused = http.post("/events/csv?mission=ops&new_mission=1", content=bad, headers=csv)
        assert refused.status_code == 400 and "line 2" in refused.json()["error"], refused.text
        assert http.post("/events/csv?mission=ops", content=good, headers={"content-type": "text/plain"}).status_code == 415
        stored = http.post("/events/csv?mission=ops&new_mission=1", content=good, headers=csv)
        assert stored.status_code == 200 and stored.json()["added"] == 1, stored.text


def test_a_body_holding_no_events_is_400_naming_it_and_starts_no_mission(data_dir: Path) -> None:
    """An empty body, a blank one, an empty JSON array and a CSV header alone are refused over HTTP as
    `feed` refuses an empty file (docs/on-call.md), instead of "received 0"."""
    header = "id,time,sector,type,criticality,source,text\n"
    with http_mcp_server(data_dir) as url, httpx.Client(base_url=url.removesuffix("/mcp"), timeout=60) as http:
        for path, body, media in (("/events", b"", "application/x-ndjson"), ("/events", b"\n \n", "application/json"),
                                  ("/events", b"[]", "application/json"), ("/events/csv", header.encode(), "text/csv")):
            answer = http.post(f"{path}?mission=ops&new_mission=1", content=body, headers={"content-type": media})
            assert answer.status_code == 400, (path, body, answer.text)
            assert "request body holds no events" in answer.json()["error"], answer.text

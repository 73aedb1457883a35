"""Tool lineage: the agent tools a repository defines, read at a commit, and their delta between two commits.

The second refresh artifact of docs/design.md §5 (the paper's "tool-lineage delta": new, modified and
retired tools with their parameter-schema diffs, so a returning operator sees at once how the
available tools changed). Two declarations are recognised:

* Python functions decorated ``@<x>.tool``, ``@<x>.tool(...)``, ``@tool`` or ``@tool(...)`` — the
  MCP SDK's ``@mcp.tool()``, ``@server.tool(name="...")``, ``@app.tool`` — anywhere in a module,
  including inside a ``build_server()`` factory. The tool's name is the decorator's ``name=`` (or
  first positional string), else the function's; its description the decorator's
  ``description=``, else the docstring. Parameters keep their annotation and default as source
  text; a ``Context`` parameter (annotated ``Context``/``Context[...]``, or an unannotated ``ctx``/
  ``context``), ``self``/``cls`` and ``*args``/``**kwargs`` are not part of the tool's schema.
* JSON manifests in the MCP ``tools/list`` shape: ``{"tools": [{"name", "description",
  "inputSchema"}]}``, the JSON-RPC response around it (``{"result": {"tools": [...]}}``), or a bare
  list of such tool objects.

Files are read at a commit through git (``git ls-tree -r -z -l`` then one ``git cat-file --batch``),
never from the work tree, so the delta compares exactly the two commits.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mission_memory.errors import BackendUnavailable, InputError
from mission_memory.git_runner import run_git

__all__ = [
    "MAX_FILE_BYTES",
    "ToolChange",
    "ToolDelta",
    "ToolParameter",
    "ToolSpec",
    "diff_tools",
    "extract_tools",
    "render_tool_delta",
    "tools_at_commit",
]

MAX_FILE_BYTES = 512 * 1024
"""Blobs larger than this (bytes) are not read: generated code and lock files, not tool declarations."""

_CONTEXT_NAMES = frozenset({"ctx", "context"})
_CONTEXT_TEXT = re.compile(r"\bContext\b")
_SKIPPED_NAMES = frozenset({"self", "cls"})
_PY_TYPES = {
    "str": "string",
    "int": "integer",
    "float": "number",
    "bool": "boolean",
    "None": "null",
    "NoneType": "null",
    "bytes": "string",
    "datetime": "string",
    "date": "string",
    "Path": "string",
    "list": "array",
    "tuple": "array",
    "set": "array",
    "frozenset": "array",
    "Sequence": "array",
    "Iterable": "array",
    "dict": "object",
    "Mapping": "object",
}


@dataclass(frozen=True)
class ToolParameter:
    """One parameter of a tool.

    Attributes:
        name: the parameter name.
        annotation: the Python annotation as source text (``int | None``), or for a manifest the
            JSON-schema type (``integer``, ``array[string]``, ``string | null``); None when absent.
        default: the default as source text (``10``, ``'all'``) or, for a manifest, as JSON; None
            when there is none.
        required: True when a caller must pass it.
    """

    name: str
    annotation: str | None
    default: str | None
    required: bool


@dataclass(frozen=True)
class ToolSpec:
    """One agent tool as a repository declares it.

    Attributes:
        name: the name the agent calls it by.
        path: the repository-relative file that declares it.
        parameters: in declaration order.
        description: the tool's description, or None.
        input_schema: a JSON-schema view of the parameters (``{"type": "object", "properties":
            {...}, "required": [...]}``): a manifest's own ``inputSchema``, or one derived from the
            Python annotations and defaults.
    """

    name: str
    path: str
    parameters: tuple[ToolParameter, ...]
    description: str | None
    input_schema: dict[str, Any] = field(default_factory=dict, compare=True, hash=False)


@dataclass(frozen=True)
class ToolChange:
    """A tool present in both snapshots whose interface changed.

    Attributes:
        before, after: the two versions.
        schema_diff: ``{"added": [param...], "removed": [param...], "changed": [{"name", "changes":
            {"annotation"|"default"|"required": {"before", "after"}}}]}`` where ``param`` is
            ``{"name", "annotation", "default", "required"}``; plus ``"description": {"before",
            "after"}`` when the description changed, ``"path": {"before", "after"}`` when the tool
            moved, and ``"input_schema": {"before", "after"}`` when the schema changed in a way the
            parameters do not show (an enum, a nested property).
    """

    before: ToolSpec
    after: ToolSpec
    schema_diff: dict[str, Any]


@dataclass(frozen=True)
class ToolDelta:
    """Tools added, modified and retired between two snapshots, each sorted by name."""

    added: tuple[ToolSpec, ...]
    modified: tuple[ToolChange, ...]
    retired: tuple[ToolSpec, ...]

    @property
    def is_empty(self) -> bool:
        """True when nothing was added, modified or retired."""
        return not (self.added or self.modified or self.retired)


# --- Python declarations ---------------------------------------------------------------------


def _tool_decorator(decorator: ast.expr) -> tuple[bool, ast.Call | None]:
    """(is a tool decorator, its call node if called)."""
    call = decorator if isinstance(decorator, ast.Call) else None
    target = call.func if call is not None else decorator
    if isinstance(target, ast.Attribute) and target.attr == "tool":
        return True, call
    if isinstance(target, ast.Name) and target.id == "tool":
        return True, call
    return False, None


def _string_arg(call: ast.Call | None, keyword: str, position: int | None) -> str | None:
    if call is None:
        return None
    for kw in call.keywords:
        if kw.arg == keyword and isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, str):
            return kw.value.value
    if position is not None and len(call.args) > position:
        arg = call.args[position]
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            return arg.value
    return None


def _is_context(name: str, annotation: ast.expr | None) -> bool:
    """True for the MCP ``Context`` parameter: an annotation naming ``Context`` anywhere
    (``Context``, ``Context[...]``, ``Context | None``, ``"Context"``), or an unannotated ``ctx``."""
    if annotation is None:
        return name in _CONTEXT_NAMES
    for node in ast.walk(annotation):
        if isinstance(node, ast.Name) and node.id == "Context":
            return True
        if isinstance(node, ast.Attribute) and node.attr == "Context":
            return True
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and _CONTEXT_TEXT.search(node.value):
            return True
    return False


def _annotation_schema(node: ast.expr | None) -> dict[str, Any]:
    """A best-effort JSON schema for a Python annotation (``{}`` when unknown)."""
    if node is None:
        return {}
    if isinstance(node, ast.Constant) and node.value is None:
        return {"type": "null"}
    if isinstance(node, ast.Constant) and isinstance(node.value, str):  # a string annotation: "int | None"
        try:
            return _annotation_schema(ast.parse(node.value, mode="eval").body)
        except (SyntaxError, ValueError, RecursionError):
            return {}
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _union_schema([node.left, node.right])
    if isinstance(node, ast.Name | ast.Attribute):
        name = node.id if isinstance(node, ast.Name) else node.attr
        return {"type": _PY_TYPES[name]} if name in _PY_TYPES else {}
    if isinstance(node, ast.Subscript):
        head = node.value.id if isinstance(node.value, ast.Name) else (
            node.value.attr if isinstance(node.value, ast.Attribute) else ""
        )
        args = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
        if head == "Optional":
            return _union_schema([*args, ast.Constant(None)])
        if head == "Union":
            return _union_schema(args)
        if head == "Annotated":
            return _annotation_schema(args[0])
        if head == "Literal":
            values = [a.value for a in args if isinstance(a, ast.Constant)]
            return {"enum": values}
        base = _PY_TYPES.get(head)
        if base == "array":
            items = _annotation_schema(args[0])
            return {"type": "array", "items": items} if items else {"type": "array"}
        if base:
            return {"type": base}
    return {}


def _union_schema(members: Iterable[ast.expr]) -> dict[str, Any]:
    schemas = [_annotation_schema(m) for m in _flatten_union(members)]
    if any(not s for s in schemas):
        return {}
    return {"anyOf": schemas}


def _flatten_union(members: Iterable[ast.expr]) -> list[ast.expr]:
    out: list[ast.expr] = []
    for member in members:
        if isinstance(member, ast.BinOp) and isinstance(member.op, ast.BitOr):
            out.extend(_flatten_union([member.left, member.right]))
        else:
            out.append(member)
    return out


def _default_value(node: ast.expr) -> Any:
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return ast.unparse(node)


def _python_tool(fn: ast.FunctionDef | ast.AsyncFunctionDef, call: ast.Call | None, path: str) -> ToolSpec:
    args = fn.args
    positional = [*args.posonlyargs, *args.args]
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    pairs = [*zip(positional, defaults, strict=True), *zip(args.kwonlyargs, args.kw_defaults, strict=True)]
    parameters: list[ToolParameter] = []
    properties: dict[str, Any] = {}
    required: list[str] = []
    for arg, default in pairs:
        if arg.arg in _SKIPPED_NAMES or _is_context(arg.arg, arg.annotation):
            continue
        annotation = ast.unparse(arg.annotation) if arg.annotation is not None else None
        parameters.append(
            ToolParameter(
                name=arg.arg,
                annotation=annotation,
                default=ast.unparse(default) if default is not None else None,
                required=default is None,
            )
        )
        prop = dict(_annotation_schema(arg.annotation))
        if default is not None:
            prop["default"] = _default_value(default)
        properties[arg.arg] = prop
        if default is None:
            required.append(arg.arg)
    description = _string_arg(call, "description", None) or ast.get_docstring(fn)
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return ToolSpec(
        name=_string_arg(call, "name", 0) or fn.name,
        path=path,
        parameters=tuple(parameters),
        description=description.strip() if description else None,
        input_schema=schema,
    )


def _python_tools(path: str, source: str) -> list[ToolSpec]:
    if "tool" not in source:
        return []
    try:
        tree = ast.parse(source, filename=path)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    found: list[tuple[int, ToolSpec]] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for decorator in node.decorator_list:
            is_tool, call = _tool_decorator(decorator)
            if is_tool:
                found.append((node.lineno, _python_tool(node, call, path)))
                break
    found.sort(key=lambda item: item[0])
    return [tool for _, tool in found]


# --- JSON manifests --------------------------------------------------------------------------


def _schema_type(prop: Any) -> str | None:
    """A short type text for a JSON-schema property: ``integer``, ``array[string]``, ``string | null``."""
    if not isinstance(prop, dict):
        return None
    kind = prop.get("type")
    if isinstance(kind, list):
        return " | ".join(str(k) for k in kind)
    if kind == "array":
        items = _schema_type(prop.get("items"))
        return f"array[{items}]" if items else "array"
    if isinstance(kind, str):
        return kind
    for combinator in ("anyOf", "oneOf"):
        members = prop.get(combinator)
        if isinstance(members, list):
            texts = [_schema_type(m) for m in members]
            return " | ".join(t or "any" for t in texts)
    if "enum" in prop:
        return "enum" + json.dumps(prop["enum"], ensure_ascii=False)
    return None


def _manifest_tool(item: Any, path: str) -> ToolSpec | None:
    if not isinstance(item, dict):
        return None
    name, schema = item.get("name"), item.get("inputSchema", item.get("input_schema"))
    if not isinstance(name, str) or not name or not isinstance(schema, dict):
        return None
    properties = schema.get("properties")
    properties = properties if isinstance(properties, dict) else {}
    required_raw = schema.get("required")
    required = {r for r in required_raw if isinstance(r, str)} if isinstance(required_raw, list) else set()
    parameters = tuple(
        ToolParameter(
            name=str(pname),
            annotation=_schema_type(prop),
            default=(
                json.dumps(prop["default"], ensure_ascii=False, sort_keys=True)
                if isinstance(prop, dict) and "default" in prop
                else None
            ),
            required=pname in required,
        )
        for pname, prop in properties.items()
    )
    description = item.get("description")
    return ToolSpec(
        name=name,
        path=path,
        parameters=parameters,
        description=description.strip() if isinstance(description, str) and description.strip() else None,
        input_schema=schema,
    )


def _manifest_tools(path: str, text: str) -> list[ToolSpec]:
    if "inputSchema" not in text and "input_schema" not in text:
        return []
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return []
    if isinstance(data, dict) and isinstance(data.get("result"), dict):
        data = data["result"]
    items = data.get("tools") if isinstance(data, dict) else data
    if not isinstance(items, list):
        return []
    return [tool for tool in (_manifest_tool(item, path) for item in items) if tool is not None]


def extract_tools(files: Mapping[str, str]) -> dict[str, ToolSpec]:
    """The agent tools declared in ``files``.

    Args:
        files: repository-relative path -> file text; ``*.py`` files are parsed as Python, ``*.json``
            files as manifests, anything else is ignored.

    Returns:
        Tool name -> spec. When two files declare the same name, the first path in sorted order
        wins (a Python declaration and its exported manifest usually agree). Never raises: a file
        that does not parse, or is not a manifest, declares no tools.
    """
    tools: dict[str, ToolSpec] = {}
    for path in sorted(files):
        text = files[path]
        if path.endswith(".py"):
            found = _python_tools(path, text)
        elif path.endswith(".json"):
            found = _manifest_tools(path, text)
        else:
            continue
        for tool in found:
            tools.setdefault(tool.name, tool)
    return tools


# --- reading a commit ------------------------------------------------------------------------


def _read_blobs(repo_root: Path, oids: list[str]) -> list[bytes]:
    """The contents of ``oids`` through one ``git cat-file --batch``, in order."""
    if not oids:
        return []
    out = run_git(repo_root, "cat-file", "--batch", stdin=("\n".join(oids) + "\n").encode("ascii"))
    blobs: list[bytes] = []
    pos = 0
    for oid in oids:
        end = out.index(b"\n", pos)
        header = out[pos:end].split(b" ")
        if len(header) != 3 or header[1] == b"missing":
            raise BackendUnavailable(f"git cat-file could not read blob {oid} in {repo_root}")
        size = int(header[2])
        blobs.append(out[end + 1 : end + 1 + size])
        pos = end + 1 + size + 1
    return blobs


def tools_at_commit(repo_root: Path, commit: str) -> dict[str, ToolSpec]:
    """The tools declared in the ``*.py`` and ``*.json`` files of ``commit``.

    Args:
        repo_root: a folder inside the repository's work tree.
        commit: a sha or any revision git resolves to a commit (``HEAD``, a branch).

    Returns:
        As :func:`extract_tools`. Blobs over :data:`MAX_FILE_BYTES`, symlinks and submodules are
        skipped; text is decoded as UTF-8 with replacement.

    Raises:
        InputError: ``repo_root`` is not a folder, or ``commit`` does not name a commit there.
        BackendUnavailable: git is missing or fails.
    """
    if not repo_root.is_dir():
        raise InputError(f"repository path {repo_root} is not a folder")
    try:
        sha = run_git(repo_root, "rev-parse", "--verify", "-q", f"{commit}^{{commit}}").decode().strip()
    except BackendUnavailable as exc:
        raise InputError(f"{commit!r} is not a commit in {repo_root}") from exc
    listing = run_git(repo_root, "ls-tree", "-r", "-z", "-l", "--full-tree", sha)
    paths: list[str] = []
    oids: list[str] = []
    for entry in listing.split(b"\0"):
        if not entry:
            continue
        meta, _, raw_path = entry.partition(b"\t")
        mode, kind, oid, size = meta.split()
        path = raw_path.decode("utf-8", "replace")
        if kind != b"blob" or mode == b"120000" or not path.endswith((".py", ".json")):
            continue
        if size == b"-" or int(size) > MAX_FILE_BYTES:
            continue
        paths.append(path)
        oids.append(oid.decode("ascii"))
    blobs = _read_blobs(repo_root, oids)
    return extract_tools({p: b.decode("utf-8", "replace") for p, b in zip(paths, blobs, strict=True)})


# --- the delta -------------------------------------------------------------------------------


def _param_dict(param: ToolParameter) -> dict[str, Any]:
    return {
        "name": param.name,
        "annotation": param.annotation,
        "default": param.default,
        "required": param.required,
    }


def _schema_diff(before: ToolSpec, after: ToolSpec) -> dict[str, Any]:
    old = {p.name: p for p in before.parameters}
    new = {p.name: p for p in after.parameters}
    changed: list[dict[str, Any]] = []
    for name in (n for n in new if n in old):
        changes = {
            attr: {"before": getattr(old[name], attr), "after": getattr(new[name], attr)}
            for attr in ("annotation", "default", "required")
            if getattr(old[name], attr) != getattr(new[name], attr)
        }
        if changes:
            changed.append({"name": name, "changes": changes})
    diff: dict[str, Any] = {
        "added": [_param_dict(new[n]) for n in new if n not in old],
        "removed": [_param_dict(old[n]) for n in old if n not in new],
        "changed": changed,
    }
    if before.description != after.description:
        diff["description"] = {"before": before.description, "after": after.description}
    if before.path != after.path:
        diff["path"] = {"before": before.path, "after": after.path}
    if not (diff["added"] or diff["removed"] or changed) and before.input_schema != after.input_schema:
        diff["input_schema"] = {"before": before.input_schema, "after": after.input_schema}
    return diff


def diff_tools(before: Mapping[str, ToolSpec], after: Mapping[str, ToolSpec]) -> ToolDelta:
    """Compare two snapshots (name -> spec) of a repository's tools.

    A tool is *modified* when its parameters, description or input schema changed; a tool that
    only moved to another file is not (the agent sees no difference), though a move is recorded in
    ``schema_diff["path"]`` when the tool also changed.

    Returns:
        The delta; each part sorted by tool name.
    """
    added = tuple(after[n] for n in sorted(after) if n not in before)
    retired = tuple(before[n] for n in sorted(before) if n not in after)
    modified: list[ToolChange] = []
    for name in sorted(n for n in after if n in before):
        old, new = before[name], after[name]
        if (old.parameters, old.description, old.input_schema) == (new.parameters, new.description, new.input_schema):
            continue
        modified.append(ToolChange(before=old, after=new, schema_diff=_schema_diff(old, new)))
    return ToolDelta(added=added, modified=tuple(modified), retired=retired)


def _param_text(param: Mapping[str, Any] | ToolParameter) -> str:
    p = _param_dict(param) if isinstance(param, ToolParameter) else param
    text = str(p["name"])
    if p["annotation"]:
        text += f": {p['annotation']}"
    if p["default"] is not None:
        text += f" = {p['default']}"
    return f"`{text}`" + ("" if p["required"] else " (optional)")


def _first_line(text: str | None) -> str:
    return text.strip().splitlines()[0].strip() if text and text.strip() else ""


def _tool_line(tool: ToolSpec) -> str:
    summary = _first_line(tool.description)
    line = f"- `{tool.name}` ({tool.path})" + (f" — {summary}" if summary else "")
    params = ", ".join(_param_text(p) for p in tool.parameters) or "none"
    return f"{line}\n  - parameters: {params}"


def _change_lines(change: ToolChange) -> list[str]:
    diff = change.schema_diff
    lines = [f"- `{change.after.name}` ({change.after.path})"]
    lines.extend(f"  - added parameter {_param_text(p)}" for p in diff.get("added", []))
    lines.extend(f"  - removed parameter {_param_text(p)}" for p in diff.get("removed", []))
    labels = {"annotation": "type", "default": "default", "required": "required"}
    for item in diff.get("changed", []):
        parts = [
            f"{labels[attr]} `{values['before']}` → `{values['after']}`"
            for attr, values in item["changes"].items()
        ]
        lines.append(f"  - parameter `{item['name']}`: " + "; ".join(parts))
    if "description" in diff:
        lines.append(
            f"  - description: “{_first_line(diff['description']['before'])}” → "
            f"“{_first_line(diff['description']['after'])}”"
        )
    if "path" in diff:
        lines.append(f"  - moved from {diff['path']['before']}")
    if "input_schema" in diff:
        lines.append("  - input schema changed (beyond the parameter list)")
    return lines


def render_tool_delta(delta: ToolDelta) -> str:
    """The delta as Markdown: ``Added``, ``Modified`` (with the parameter diff) and ``Retired`` lists."""
    if delta.is_empty:
        return "No agent tools were added, modified or retired in this period."
    sections: list[str] = []
    if delta.added:
        sections.append(f"**Added tools ({len(delta.added)})**\n" + "\n".join(_tool_line(t) for t in delta.added))
    if delta.modified:
        body = "\n".join(line for change in delta.modified for line in _change_lines(change))
        sections.append(f"**Modified tools ({len(delta.modified)})**\n{body}")
    if delta.retired:
        body = "\n".join(f"- `{t.name}` (was in {t.path})" for t in delta.retired)
        sections.append(f"**Retired tools ({len(delta.retired)})**\n{body}")
    return "\n\n".join(sections)

"""Front matter: finding the block at the top of a document, and a YAML loader that keeps numbers as written.

Shared by ingest (ADRs, documents, access levels) and the local task-folder tracker.

PyYAML implements YAML 1.1, whose implicit resolvers turn ``0020`` into the octal number 16,
``1.10`` into 1.1 and ``1_000`` into 1000. In an ADR's front matter (``supersedes: 0020``) or a
user story (``version: 1.10``) those are labels, not numbers: read as numbers they silently name the
wrong decision. :class:`TextScalarLoader` is PyYAML's safe loader without the int and float
resolvers, so such scalars stay the text the author wrote; booleans, nulls, dates, lists and mappings
resolve as before.

YAML aliases make a few lines stand for an exponential tree (the "billion laughs": nine lines, nine
anchors of nine aliases each, 9^9 leaves). PyYAML composes it as a small graph of shared nodes, but
whatever walks the parsed value (front matter flattened to text, a document split into chunks) visits
every leaf: at depth 7 that took 47 s and 803 MB, at depth 8 a ``MemoryError`` aborted the whole ingest
(issue 22 item 6). The loader therefore counts the nodes a document stands for once its aliases are
expanded, before anything is constructed, and refuses a document above :data:`MAX_EXPANDED_NODES`
(a ``yaml.YAMLError``, so callers report it as invalid YAML); aliases within that bound (CI files,
OpenAPI specs) load as before (docs/adr/0056).
"""

from __future__ import annotations

from typing import Any

import yaml

__all__ = ["MAX_EXPANDED_NODES", "TextScalarLoader", "load_all_text_yaml", "load_text_yaml", "split_front_matter"]

_NUMBER_TAGS = frozenset({"tag:yaml.org,2002:int", "tag:yaml.org,2002:float"})

MAX_EXPANDED_NODES = 100_000
"""The most nodes (scalars, sequences, mappings) one YAML document may stand for with its aliases expanded.
A 1 MB YAML file without aliases has well under 100,000 nodes, so only alias expansion reaches it."""


def _expanded_size(root: yaml.Node, limit: int) -> int:
    """How many nodes ``root`` stands for with every alias expanded, counted without expanding them
    (each shared node's size is computed once); stops counting past ``limit``."""
    sizes: dict[int, int] = {}
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        if id(node) in sizes:
            continue
        if isinstance(node, yaml.SequenceNode):
            children: list[yaml.Node] = list(node.value)
        elif isinstance(node, yaml.MappingNode):
            children = [part for pair in node.value for part in pair]
        else:
            sizes[id(node)] = 1
            continue
        if children_done:
            sizes[id(node)] = min(limit + 1, 1 + sum(sizes.get(id(child), 0) for child in children))
            continue
        stack.append((node, True))
        stack.extend((child, False) for child in children if id(child) not in sizes)
    return sizes[id(root)]


class TextScalarLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that leaves plain scalars looking like numbers as strings and refuses a document
    whose aliases expand to more than :data:`MAX_EXPANDED_NODES` nodes (``yaml.composer.ComposerError``)."""

    def compose_document(self) -> yaml.Node | None:
        """The next document's node graph, refused when its aliases expand it past the bound."""
        start = self.peek_event().start_mark if self.check_event(yaml.DocumentStartEvent) else None  # type: ignore[no-untyped-call]
        node: yaml.Node | None = super().compose_document()
        if node is not None and _expanded_size(node, MAX_EXPANDED_NODES) > MAX_EXPANDED_NODES:
            raise yaml.composer.ComposerError(
                None, None,
                f"its aliases expand it to more than {MAX_EXPANDED_NODES:,} nodes (an alias bomb); not loaded",
                start,
            )
        return node


TextScalarLoader.yaml_implicit_resolvers = {
    first: [(tag, pattern) for tag, pattern in resolvers if tag not in _NUMBER_TAGS]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def load_text_yaml(text: str) -> Any:
    """One YAML document, numbers kept as text (see module docstring).

    Raises:
        yaml.YAMLError: the text is not valid YAML.
    """
    return yaml.load(text, Loader=TextScalarLoader)  # noqa: S506 - a subclass of SafeLoader


def load_all_text_yaml(text: str) -> list[Any]:
    """Every YAML document of a stream, numbers kept as text.

    Raises:
        yaml.YAMLError: the text is not valid YAML.
    """
    return list(yaml.load_all(text, Loader=TextScalarLoader))  # noqa: S506 - a subclass of SafeLoader


def split_front_matter(text: str) -> tuple[str | None, int]:
    """Find a YAML (``---``) or TOML (``+++``) front matter block at the very start of ``text``.

    Args:
        text: the whole document.

    Returns:
        ``(front_matter_body, lines_consumed)``: the block's inner text (None when absent) and how many
        lines (delimiters included) it occupies, so callers can keep 1-based line numbers right.
    """
    lines = text.split("\n")
    if not lines or lines[0].strip() not in ("---", "+++"):
        return None, 0
    fence = lines[0].strip()
    for index in range(1, min(len(lines), 400)):
        if lines[index].strip() in (fence, "..." if fence == "---" else fence):
            return "\n".join(lines[1:index]), index + 1
    return None, 0

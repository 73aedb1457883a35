"""Front matter: finding the block at the top of a document, and a YAML loader that keeps numbers as written.

Shared by ingest (ADRs, documents, access levels) and the local task-folder tracker.

PyYAML implements YAML 1.1, whose implicit resolvers turn ``0020`` into the octal number 16,
``1.10`` into 1.1 and ``1_000`` into 1000. In an ADR's front matter (``supersedes: 0020``) or a
user story (``version: 1.10``) those are labels, not numbers: read as numbers they silently name the
wrong decision. :class:`TextScalarLoader` is PyYAML's safe loader without the int and float
resolvers, so such scalars stay the text the author wrote; booleans, nulls, dates, lists and mappings
resolve as before.
"""

from __future__ import annotations

from typing import Any

import yaml

__all__ = ["TextScalarLoader", "load_all_text_yaml", "load_text_yaml", "split_front_matter"]

_NUMBER_TAGS = frozenset({"tag:yaml.org,2002:int", "tag:yaml.org,2002:float"})


class TextScalarLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that leaves plain scalars looking like numbers as strings."""


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

"""Where the corpora the tests and benchmarks read live: ``tests/corpora/`` in this repository.

One home for that path: tests get it through the ``corpora`` fixture (tests/conftest.py), benchmarks
and helper modules through :func:`corpus_path`. The folder's README.md gives each file's provenance
and licence.
"""

from __future__ import annotations

from pathlib import Path

CORPORA = Path(__file__).resolve().parent / "corpora"


def corpus_path(name: str = "") -> Path:
    """The file or folder ``name`` of ``tests/corpora/`` (the folder itself when ``name`` is empty),
    e.g. ``corpus_path("tdr-docs.bundle")`` or ``corpus_path("transcripts")``.

    Raises FileNotFoundError naming the path when it is missing: a missing fixture is a failure,
    never a reason to skip.
    """
    path = CORPORA / name if name else CORPORA
    if not path.exists():
        raise FileNotFoundError(f"corpus file {path} is missing from the repository (see tests/corpora/README.md)")
    return path

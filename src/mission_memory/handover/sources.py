"""Watch items about sources outside the store: is memory behind the mission's repository? (docs/design.md §6)

A brief built from a store that has not seen the repository's latest commits would hand over a
stale picture; the watch item says so and by how much. The ingest bookmark is the state key
``git_head:<repository root>`` the repository ingest keeps per mission.
"""

from __future__ import annotations

from pathlib import Path

from mission_memory.git_runner import run_git_text
from mission_memory.handover.brief import BriefItem, BriefSection
from mission_memory.stores.base import MemoryStore

__all__ = ["repository_watch_items"]


def repository_watch_items(store: MemoryStore, mission: str, repository: Path) -> list[BriefItem]:
    """A watch item when ``repository``'s HEAD holds commits memory has not ingested; else none.

    Args:
        store: the memory's store.
        mission: the mission the repository was ingested as.
        repository: a folder inside the repository's work tree.

    Returns:
        Zero or one item. A folder that is not a git work tree, or another repository than the
        mission's (never ingested as it, and named otherwise), gives none.
    """
    top = run_git_text(repository, "rev-parse", "--show-toplevel", check=False)
    if not top:
        return []
    root = Path(top.strip())
    head = (run_git_text(root, "rev-parse", "HEAD", check=False) or "").strip()
    if not head:
        return []
    ingested = store.get_state(mission, f"git_head:{root}")
    if ingested == head:
        return []
    if ingested is None and root.name != mission:
        return []  # another repository than the mission's: nothing to compare
    if ingested is None:
        text = f"this checkout ({root.name}) was never ingested; HEAD is {head[:12]}"
    else:
        behind = (run_git_text(root, "rev-list", "--count", f"{ingested}..{head}", check=False) or "").strip()
        text = (f"memory is behind the repository: {behind or 'some'} commits after {ingested[:12]} are not "
                f"ingested (HEAD {head[:12]}); an ingest of {root} brings them in")
    return [BriefItem(BriefSection.WATCH, "stale source", f"{text}\nsource: ingest state `git_head`",
                      (head,), (), 100)]

"""Severity thresholds and flood capacity live in the operations policy (``operations/escalation.py``) alone.

On 6adcb71 "critical means ≥ 0.8" was written four times (``query._CRITICAL``, ``scenarios.CRITICAL``,
``crisis_timeline.CRITICAL_EVENT``, the incident block's ``_severity``) and the flood capacity was
computed three times beside ``FloodPolicy.capacity`` (``Memory.plot_event_rate``, ``escalation status``,
the scenarios' defaults): two homes of one rule drift apart.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import mission_memory
from mission_memory.operations.escalation import (
    CRITICAL_CRITICALITY,
    SEVERE_CRITICALITY,
    FloodPolicy,
    severity_level,
)

PACKAGE = Path(mission_memory.__file__).parent
HOME = PACKAGE / "operations" / "escalation.py"


def _sources() -> list[tuple[Path, str]]:
    return [(p, p.read_text(encoding="utf-8")) for p in sorted(PACKAGE.rglob("*.py")) if p != HOME]


def test_no_module_but_the_policy_writes_a_severity_threshold() -> None:
    offenders = []
    for path, text in _sources():
        for node in ast.walk(ast.parse(text)):
            # a constant named for criticality or severity holding 0.8 or 0.9, or a comparison with them
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and node.value.value in (
                    CRITICAL_CRITICALITY, SEVERE_CRITICALITY):
                names = [t.id for t in node.targets if isinstance(t, ast.Name)]
                if any(re.search(r"CRITICAL|SEVER", n) and "_CRITICALITY" not in n[1:] for n in names):
                    offenders.append(f"{path.relative_to(PACKAGE)}:{node.lineno} {names}")
            if isinstance(node, ast.Compare) and any(
                    isinstance(c, ast.Constant) and c.value in (CRITICAL_CRITICALITY, SEVERE_CRITICALITY)
                    for c in node.comparators):
                offenders.append(f"{path.relative_to(PACKAGE)}:{node.lineno} compares with a literal threshold")
    assert offenders == []


def test_no_module_but_the_policy_computes_the_flood_capacity() -> None:
    offenders = [f"{path.relative_to(PACKAGE)}: {m.group(0)}" for path, text in _sources()
                 for m in re.finditer(r"flood_(?:start|end)\s*\*|(?:capacity|release): float = \d", text)]
    assert offenders == []


def test_the_policy_names_the_levels() -> None:
    assert [severity_level(c) for c in (0.95, 0.9, 0.85, 0.8, 0.79)] == ["critical"] * 2 + ["high"] * 2 + ["elevated"]
    assert FloodPolicy(operators_on_duty=3).capacity == 30 and FloodPolicy(operators_on_duty=3).release == 15

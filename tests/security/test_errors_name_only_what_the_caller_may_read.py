"""Errors and listings name only the missions and components the caller may read; writes refuse what
the caller cannot see (issue 35 item 6).

On the starting code a token scoped to missions learnt every stored mission's name from a
``record_decision`` (and ``record_correction``) error, and ``record_correction`` accepted a component
holding only records above the caller's clearance, which the correction record then made visible to
readers the query path hides it from.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from mission_memory.api import Memory
from mission_memory.config import load_settings
from mission_memory.errors import InputError
from mission_memory.records import AccessLevel, Provenance, Record, RecordKind, SourceKind
from mission_memory.teams.access_control import AccessContext

HIDDEN_MISSIONS = ("payroll-merger", "acquisition-kestrel")


def _record(mission: str, n: int, component: str, level: AccessLevel) -> Record:
    return Record.build(
        kind=RecordKind.DOC_CHUNK, title=f"{component} note {n}", text=f"Notes on the {component} procedure, part {n}.",
        provenance=Provenance(kind=SourceKind.DOC, ref=f"{component}/{n}.md", uri=f"file:///{component}/{n}.md",
                              mission=mission, time=datetime(2025, 1, 1, tzinfo=UTC)),
        component=component, access_level=level)


@pytest.fixture
def memory(data_dir: Path) -> Memory:
    memory = Memory(load_settings(data_dir=data_dir))
    records = [_record("ops", n, "uploads", AccessLevel.INTERNAL) for n in range(3)]
    records += [_record("ops", n, "vault-keys", AccessLevel.RESTRICTED) for n in range(3)]  # restricted only
    records += [_record("ops", n, "hsm-ceremony", AccessLevel.SECRET) for n in range(2)]
    records += [_record(m, n, "ledger", AccessLevel.INTERNAL) for m in ("ops-training", *HIDDEN_MISSIONS) for n in range(2)]
    memory.store.upsert_records(records)
    return memory


def _refusal(call: object) -> str:
    with pytest.raises(InputError) as caught:
        call()  # type: ignore[operator]
    return str(caught.value)


def test_a_scoped_callers_decision_errors_name_none_of_the_other_missions(memory: Memory) -> None:
    scoped = AccessContext("bob", AccessLevel.INTERNAL, missions=frozenset({"ops", "ops-training", "ops-archive"}))
    messages = [
        _refusal(lambda: memory.record_decision("Retry uploads twice", decision="Two retries.", rationale="Cost.",
                                                mission=None, access=scoped)),  # two stored in scope: name one
        _refusal(lambda: memory.record_decision("Retry uploads twice", decision="Two retries.", rationale="Cost.",
                                                mission="ops-archive", access=scoped)),  # in scope, not stored
        _refusal(lambda: memory.record_correction(correction_class="wrong-approach", category="data",
                                                  outcome="rejected", summary="Used the wrong retry count.",
                                                  mission="ops-archive", access=scoped)),
    ]
    for message in messages:
        assert not any(hidden in message for hidden in HIDDEN_MISSIONS), message
    assert "ops-training" in messages[0], messages[0]  # the missions the caller may read are still named
    memory.close()


def test_a_correction_refuses_a_component_holding_only_records_the_caller_cannot_read(memory: Memory) -> None:
    bob = AccessContext("bob", AccessLevel.INTERNAL)
    message = _refusal(lambda: memory.record_correction(
        correction_class="wrong-approach", category="security", outcome="rejected",
        summary="Rotated the keys without the second officer.", component="vault-keys", mission="ops", access=bob))
    assert "vault-keys" in message and "hsm-ceremony" not in message, message  # the listing: what bob may read
    assert "uploads" in message
    # nothing was stored, so the query path still knows no such component for bob
    hidden = _refusal(lambda: memory.query("key rotation", filters={"component": "vault-keys"}, access=bob))
    assert "no component named" in hidden and "vault-keys" not in hidden.split("components, most records first")[1]
    # a reader who may see it records the correction
    alice = AccessContext("alice", AccessLevel.RESTRICTED)
    stored = memory.record_correction(correction_class="wrong-approach", category="security", outcome="rejected",
                                      summary="Rotated the keys without the second officer.", component="vault-keys",
                                      mission="ops", access=alice)
    assert stored.component == "vault-keys"
    memory.close()

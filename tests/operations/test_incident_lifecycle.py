"""The stored incident: opened by the first critical alert or a flood, severity from its open alerts (held
after the event rate falls), closed when its alerts resolve or by an operator (docs/adr/0091).

On 6adcb71 the incident was a view of the moment: when the event rate fell, the severity went with it
although a P1 was still open, and nothing held a status, a commander, a start or a next update time.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mission_memory.api import Memory
from mission_memory.errors import InputError
from mission_memory.operations.incident_state import (
    STATUSES,
    Incident,
    IncidentAlert,
    IncidentChange,
    next_update_time,
)
from mission_memory.operations.sources.alertmanager import events_from_alertmanager
from mission_memory.operations.sources.opsgenie import events_from_opsgenie
from mission_memory.operations.sources.pagerduty import events_from_pagerduty

T0 = datetime(2026, 3, 1, 11, 55, tzinfo=UTC)
PAYLOADS = Path(__file__).parent / "webhook_payloads"


def _alert(name: str, severity: str, status: str, started: datetime, ended: datetime | None = None) -> dict[str, Any]:
    payload = {"status": status, "labels": {"alertname": name, "severity": severity, "service": "checkout",
                                            "instance": "api-7:9102"},
               "annotations": {"summary": f"{name} on api-7"},
               "startsAt": started.isoformat().replace("+00:00", "Z"),
               "endsAt": (ended or datetime(1, 1, 1, tzinfo=UTC)).isoformat().replace("+00:00", "Z"),
               "fingerprint": f"fp-{name}"}
    return {"version": "4", "status": status, "receiver": "mission-memory", "alerts": [payload]}


def _logs(n: int, end: datetime, prefix: str) -> list[dict[str, Any]]:
    step = timedelta(minutes=8) / n
    return [{"id": f"{prefix}-{i}", "time": (end - i * step).isoformat(), "sector": "checkout", "type": "WARN",
             "criticality": 0.4, "source": "app-log", "text": f"GC pause of {100 + i} ms"} for i in range(n)]


def test_a_critical_alert_opens_an_incident_that_keeps_its_severity_after_the_rate_falls_and_closes_when_it_resolves(
    data_dir: Path,
) -> None:
    with Memory.open() as memory:
        memory.record_events(list(events_from_alertmanager(_alert("CheckoutDown", "critical", "firing", T0))),
                             mission="shop", now=T0, embed=False)
        opened = memory.incident("shop")
        assert opened is not None and opened.is_open
        assert (opened.status, opened.opened_by, opened.started, opened.severity) == ("investigating", "alert", T0, "critical")
        assert opened.title == "CheckoutDown on api-7" and opened.id == "INC-20260301-115500"
        # a flood an hour later, then the rate falls
        flood_at = T0 + timedelta(hours=1)
        memory.record_events(_logs(400, flood_at, "flood"), mission="shop", now=flood_at, embed=False)
        assert memory.escalation_status("shop", now=flood_at).mode.value == "degraded"
        quiet = T0 + timedelta(hours=3)
        assert memory.escalation_status("shop", now=quiet).mode.value == "normal"
        held = memory.incident("shop")
        assert held is not None and held.is_open and held.severity == "critical", held
        assert held.id == opened.id  # the flood did not open a second incident
        # the alert resolves: the incident closes with the time
        resolved_at = quiet + timedelta(minutes=5)
        memory.record_events(list(events_from_alertmanager(
            _alert("CheckoutDown", "critical", "resolved", T0, resolved_at))), mission="shop", now=resolved_at, embed=False)
        closed = memory.incident("shop")
    assert closed is not None and not closed.is_open
    assert (closed.status, closed.resolved_at) == ("resolved", resolved_at)
    assert closed.alerts[0].resolved_at == resolved_at and closed.peak_severity == "critical"
    assert "alerts resolved" in closed.closed_by


def test_the_severity_follows_the_open_alerts_not_the_event_rate(data_dir: Path) -> None:
    with Memory.open() as memory:
        for name, severity in (("Disk", "warning"), ("Api", "critical")):
            memory.record_events(list(events_from_alertmanager(_alert(name, severity, "firing", T0))),
                                 mission="shop", now=T0, embed=False)
        assert memory.incident("shop").severity == "critical"  # type: ignore[union-attr]
        later = T0 + timedelta(minutes=30)
        memory.record_events(list(events_from_alertmanager(_alert("Api", "critical", "resolved", T0, later))),
                             mission="shop", now=later, embed=False)
        incident = memory.incident("shop")
    assert incident is not None and incident.is_open  # the warning alert is still open
    assert incident.severity == "elevated" and incident.peak_severity == "critical"
    assert [a.type for a in incident.open_alerts] == ["Disk"]


def test_pagerduty_and_opsgenie_ids_acknowledgements_and_assignees_are_kept(data_dir: Path) -> None:
    triggered = json.loads((PAYLOADS / "pagerduty_v3_incident_triggered.json").read_text(encoding="utf-8"))
    created = json.loads((PAYLOADS / "opsgenie_create.json").read_text(encoding="utf-8"))
    with Memory.open() as memory:
        memory.record_events(list(events_from_pagerduty(triggered)), mission="shop", now=T0, embed=False)
        memory.record_events(list(events_from_opsgenie(created)), mission="shop", now=T0 + timedelta(minutes=1),
                             embed=False)
        incident = memory.incident("shop")
    assert incident is not None
    by_id = {a.event_id: a for a in incident.alerts}
    assert "pagerduty:Q1INC42" in by_id and by_id["pagerduty:Q1INC42"].assignees == ("On-call A",)
    assert any(e.startswith("opsgenie:") for e in by_id)
    assert incident.title == "Checkout 5xx above 20% in eu-prod-2"


def test_a_flood_opens_an_incident_and_its_end_closes_it(data_dir: Path) -> None:
    with Memory.open() as memory:
        memory.record_events(_logs(400, T0, "flood"), mission="shop", now=T0, embed=False)
        opened = memory.incident("shop")
        assert opened is not None and opened.opened_by == "flood" and opened.is_open
        later = T0 + timedelta(hours=2)
        memory.record_events(_logs(1, later, "quiet"), mission="shop", now=later, embed=False)
        closed = memory.incident("shop")
    assert closed is not None and closed.id == opened.id and closed.resolved_at == later


def test_an_operator_sets_the_fields_and_closes_it_and_its_alerts_do_not_reopen_it(data_dir: Path) -> None:
    with Memory.open() as memory:
        with pytest.raises(InputError, match="no open incident"):
            memory.change_incident("status", "identified", mission="shop", now=T0)
        memory.record_events(list(events_from_alertmanager(_alert("CheckoutDown", "critical", "firing", T0))),
                             mission="shop", now=T0, embed=False)
        at = T0 + timedelta(minutes=10)
        memory.change_incident("status", "identified", mission="shop", operator="bob@x", now=at)
        memory.change_incident("commander", "bob@x", mission="shop", operator="bob@x", now=at)
        memory.change_incident("next-update", "12:30", mission="shop", operator="bob@x", now=at)
        memory.change_incident("contingency", "if the replica lags past 60 s then fail over", mission="shop",
                               operator="bob@x", now=at)
        with pytest.raises(InputError, match="'fixed'"):
            memory.change_incident("status", "fixed", mission="shop", now=at)
        with pytest.raises(InputError, match="is open since"):
            memory.change_incident("open", "Another", mission="shop", now=at)
        incident = memory.incident("shop")
        assert incident is not None
        assert (incident.status, incident.commander, incident.next_update) == (
            "identified", "bob@x", datetime(2026, 3, 1, 12, 30, tzinfo=UTC))
        assert [c[0] for c in incident.contingencies] == ["if the replica lags past 60 s then fail over"]
        assert [(c.by, c.field) for c in incident.log][1:] == [
            ("bob@x", "status"), ("bob@x", "commander"), ("bob@x", "next-update"), ("bob@x", "contingency")]
        memory.change_incident("close", "mitigated by failover", mission="shop", operator="bob@x", now=at)
        # the same alert notifies again: the closed incident is not reopened, nor a new one opened for it
        memory.record_events(list(events_from_alertmanager(_alert("CheckoutDown", "critical", "firing", T0))),
                             mission="shop", now=at + timedelta(minutes=1), embed=False)
        closed = memory.incident("shop")
        assert closed is not None and closed.status == "resolved" and closed.resolved_at == at
        assert closed.closed_by == "bob@x: mitigated by failover"
        # an operator opens a new one; it has no alerts, so intake never closes it
        memory.change_incident("open", "Payments slow for EU users", mission="shop", operator="ann@x", now=at + timedelta(minutes=2))
        memory.record_events(_logs(1, at + timedelta(minutes=3), "x"), mission="shop", now=at + timedelta(minutes=3), embed=False)
        manual = memory.incident("shop")
        assert manual is not None and manual.is_open and manual.opened_by == "operator"
        assert memory.store.get_state("shop", f"incident:{closed.id}") is not None  # the closed one is kept


@pytest.mark.parametrize(("typed", "due"), [
    ("15:30", datetime(2026, 3, 1, 15, 30, tzinfo=UTC)), ("09:00", datetime(2026, 3, 2, 9, 0, tzinfo=UTC)),
    ("30m", datetime(2026, 3, 1, 12, 25, tzinfo=UTC)), ("+2h", datetime(2026, 3, 1, 13, 55, tzinfo=UTC)),
    ("2026-03-01T14:00:00+01:00", datetime(2026, 3, 1, 13, 0, tzinfo=UTC)),
])
def test_the_next_update_time_is_read_as_an_operator_types_it(typed: str, due: datetime) -> None:
    assert next_update_time(typed, T0) == due


@pytest.mark.parametrize("typed", ["25:00", "soon", "0m", "2026-03-01T10:00:00Z", "nan", ""])
def test_a_bad_next_update_time_is_refused_naming_it(typed: str) -> None:
    with pytest.raises(InputError, match="next-update"):
        next_update_time(typed, T0)


def test_the_crisis_timeline_reads_the_stored_incident(data_dir: Path) -> None:
    from mission_memory.operations.crisis_timeline import crisis_report, render_timeline

    with Memory.open() as memory:
        memory.record_events(list(events_from_alertmanager(_alert("CheckoutDown", "critical", "firing", T0))),
                             mission="shop", now=T0, embed=False)
        at = T0 + timedelta(minutes=5)
        memory.record_events(_logs(400, at, "flood"), mission="shop", now=at, embed=False)
        memory.change_incident("commander", "bob@x", mission="shop", operator="bob@x", now=at)
        memory.change_incident("next-update", "12:30", mission="shop", operator="bob@x", now=at)
        memory.change_incident("contingency", "if the replica lags then fail over", mission="shop",
                               operator="bob@x", now=at)
        state = memory.escalation_status("shop", now=at)
        report = crisis_report(memory.store, "shop", state, at)
        tight = render_timeline(report, memory.tokenizer, 400)
    lines = tight.splitlines()
    assert lines[1] == ("Incident INC-20260301-115500: CheckoutDown on api-7 · status investigating · severity critical"
                        " · since 11:55 UTC (alert) · commander bob@x · next update 12:30 UTC (in 30 min)"), tight
    assert lines[2] == "  contingency - if the replica lags then fail over (bob@x, 12:00 UTC)"


def test_incident_show_lists_the_notes_and_decisions_recorded_while_it_was_open(data_dir: Path) -> None:
    import json as json_module

    from typer.testing import CliRunner

    from mission_memory.cli.app import app

    with Memory.open() as memory:
        memory.record_events(list(events_from_alertmanager(_alert("CheckoutDown", "critical", "firing", T0))),
                             mission="shop", now=T0, embed=False)
        memory.handover_note("Before the incident: tidy the runbook index", "next-step", mission="shop",
                             operator="ann@x", now=T0 - timedelta(hours=1))
        memory.handover_note("Replica lag is the suspect", "hypothesis", mission="shop", operator="bob@x",
                             now=T0 + timedelta(minutes=3))
    shown = CliRunner().invoke(app, ["incident", "--mission", "shop", "--json", "--now", (T0 + timedelta(minutes=5)).isoformat()])
    assert shown.exit_code == 0, shown.output
    payload = json_module.loads(shown.output)
    assert [(r["kind"], r["operator"]) for r in payload["records"]] == [("handover_note", "bob@x")]
    assert payload["records_left_out"] is False
    text = CliRunner().invoke(app, ["incident", "--mission", "shop", "--now", (T0 + timedelta(minutes=5)).isoformat()])
    assert "Notes and decisions recorded while it was open (1):" in text.output and "by bob@x" in text.output


_texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)
_times = st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(UTC))


@settings(max_examples=60, deadline=None)
@given(title=_texts, commander=_texts, contingencies=st.lists(st.tuples(_texts, _texts, _times), max_size=3),
       started=_times, next_update=st.none() | _times, status=st.sampled_from(STATUSES))
def test_an_incident_reads_back_as_it_was_stored(title: str, commander: str, contingencies: list[tuple[str, str, datetime]],
                                                 started: datetime, next_update: datetime | None, status: str) -> None:
    incident = Incident(id="INC-1", mission="m", title=title, opened_by="operator", started=started, status=status,
                        commander=commander, next_update=next_update, contingencies=tuple(contingencies),
                        alerts=(IncidentAlert("fp", "pagerduty:Q1", "T", title, "", "s", 0.9, started, commander, ("a",)),),
                        log=(IncidentChange(started, commander, "status", status),))
    assert Incident.from_json(json.loads(json.dumps(incident.to_json()))) == incident


@settings(max_examples=200, deadline=None)
@given(typed=st.text(max_size=30))
def test_any_typed_next_update_is_a_later_time_or_a_clear_error(typed: str) -> None:
    try:
        due = next_update_time(typed, T0)
    except InputError as exc:
        assert "next-update" in str(exc)
    else:
        assert due > T0 and due.tzinfo is not None

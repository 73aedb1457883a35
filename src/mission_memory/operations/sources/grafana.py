"""Grafana Alerting's webhook contact point: ``POST`` or ``PUT /alerts/grafana``.

Grafana posts Alertmanager's webhook shape (grafana.com/docs, "Configure the webhook notifier for
Alerting": ``receiver``, ``status``, ``alerts`` with ``labels``, ``annotations``, ``startsAt``,
``fingerprint`` …), read by :func:`~mission_memory.operations.sources.alertmanager.events_from_alertmanager`
with the same mapping, plus per alert the links an on-call engineer opens first: ``dashboardURL``,
``panelURL`` and ``silenceURL``, kept as the labels ``dashboard_url``, ``panel_url`` and ``silence_url``
(empty ones dropped) and shown with the open alert. Grafana's rules are commonly labelled by ``team``
and ``zone`` rather than ``service``: its sector labels default to ``service``, ``namespace``, ``team``,
``zone``, ``job``, ``instance`` (setting ``MISSION_MEMORY_SECTOR_LABELS["grafana"]``). The contact
point's "HTTP method" setting may be ``PUT``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from mission_memory.operations.domain_events import DomainEvent
from mission_memory.operations.sources import Source, body_json, sector_labels
from mission_memory.operations.sources.alertmanager import events_from_alertmanager

if TYPE_CHECKING:
    from mission_memory.config import Settings

__all__ = ["LINKS", "SOURCE", "events_from_grafana"]

LINKS = {"dashboardURL": "dashboard_url", "panelURL": "panel_url", "silenceURL": "silence_url"}
"""Grafana's per-alert links -> the labels they are kept as (a label ending ``_url`` is shown as a link)."""


def _links(alert: Mapping[str, Any]) -> dict[str, str]:
    return {label: " ".join(str(alert[field]).split()) for field, label in LINKS.items()
            if isinstance(alert.get(field), str) and alert[field].strip()}


def events_from_grafana(payload: Any, settings: Settings, source: str = "grafana webhook") -> list[DomainEvent]:
    """Events from one Grafana webhook payload (see the module docstring).

    Raises:
        InputError: as :func:`~mission_memory.operations.sources.alertmanager.events_from_alertmanager`.
    """
    return events_from_alertmanager(payload, settings.alertmanager_mapping, source,
                                    sector_labels=sector_labels(settings, SOURCE), sender="grafana", extras=_links)


def _parse(body: bytes, settings: Settings) -> list[DomainEvent]:
    return events_from_grafana(body_json(body, SOURCE.label), settings, SOURCE.label)


SOURCE = Source(
    name="grafana", path="/alerts/grafana", parse=_parse, methods=("POST", "PUT"),
    sector_labels=("service", "namespace", "team", "zone", "job", "instance"), title="grafana webhook",
)
"""Grafana Alerting's webhook contact point."""

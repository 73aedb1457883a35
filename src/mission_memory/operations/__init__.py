"""Operations: domain events, their intake, escalation (degraded mode) and the crisis timeline.

``domain_events`` (the event model, its JSON Lines and CSV readers and its record), ``sources`` (one
module per sender of events: its payload parser and its HTTP route), ``event_intake`` (posting events and
the vector queue), ``escalation`` and ``escalation_state`` (flood detection with hysteresis and the
saved mode, docs/adr/0022), ``crisis_timeline`` (cascades and trends, docs/adr/0023, 0040) and
``scenarios`` (seeded incident streams for demos and evaluation).
"""

"""Measuring the problem memory solves (docs/design.md §9): session-start cost, instructions growth, effects.

Modules, one concern each:

* :mod:`~mission_memory.metrics.transcripts` — one Claude Code JSONL transcript into typed events.
* :mod:`~mission_memory.metrics.transcript_sessions` — finding transcripts, joining subagent files to sessions.
* :mod:`~mission_memory.metrics.session_metrics` — T, K, W per session and their aggregates.
* :mod:`~mission_memory.metrics.session_comparison` — two groups of sessions compared.
* :mod:`~mission_memory.metrics.transcript_corrections` — operator corrections seen in transcripts.
* :mod:`~mission_memory.metrics.instructions_growth` — CLAUDE.md / AGENTS.md size over git history.
* :mod:`~mission_memory.metrics.stats` — distributions, Hedges' g, Pearson r, bootstrap intervals.
* :mod:`~mission_memory.metrics.plots` — PNG figures (imports matplotlib when called).

Import from the modules directly; this package module imports nothing, so importing one
submodule does not pull in numpy or pydantic for the others.
"""

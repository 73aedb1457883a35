"""Corrections: operator corrections in from three sources, stored as practitioner records, labelled.

docs/design.md §3 (practitioner record) and §6 (retrieval-correction signal). The modules, in pipeline
order: :mod:`.detector` finds corrections in prompts and transcripts, :mod:`.pipeline` turns each
source into :class:`~.practitioner_records.Correction` values, :mod:`.practitioner_records` builds the
records (abstractions only, docs/adr/0025), :mod:`.signal` links each to the retrieval event it
follows and labels it (docs/adr/0024), :mod:`.rate` and :mod:`.pairs` read the labels back.
Submodules are imported where used, so the CLI and the hook stay fast.
"""

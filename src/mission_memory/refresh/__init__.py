"""Push mode (docs/design.md §5): a background refresher that keeps idle ``LONG-TERM`` tasks fresh.

A pass discovers the labelled tasks of a tracker, measures each task's activity since its last
refresh (``signals``), decides which are due by a pure schedule with an injected clock
(``schedule``), and for each due task, most active first, builds three refresh artifacts — an
executive summary (``summarizers``: an LLM when configured, else extractive), a tool-lineage delta
(``tool_lineage``) and open questions (``open_questions``) — and stores them in the workflow layer
in one transaction (``orchestrator``), through the narrow store view of ``refresh_store``. LLM spend is
capped per day (``ledger``) and every pass has a wall-clock budget (``pass_budget``); settings are part
of :class:`mission_memory.config.Settings`. ``cron_loop`` runs passes on a schedule. Nothing is
imported here, so importing the package costs nothing; import the submodules you need.
"""

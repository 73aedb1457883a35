"""The ``mission-memory`` command line: thin typer shells over :class:`mission_memory.api.Memory`."""

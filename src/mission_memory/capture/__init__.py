"""Prompt capture: the standard-library-only library behind the ``UserPromptSubmit`` hook.

One operator prompt becomes one orphan commit in the prompt repository (``prompt_commit``), written as
loose git objects by hand (``loose_objects``, docs/adr/0010), after redaction (``redaction``, docs/adr/0011);
a prompt that cannot be stored is counted (``dropped_prompts``, docs/adr/0020). The hook runs these
modules by plain name with ``python -S -E``, so they import only the standard library (held by
tests/test_architecture.py). This ``__init__`` imports nothing on purpose.
"""

"""Claude Code hooks: prompt capture (``UserPromptSubmit``) and the pull digest (``SessionStart``).

``prompt_capture`` and the modules it loads (``redaction``, ``loose_objects``) are stdlib-only and are
run by absolute path as ``python -S -E .../prompt_capture.py``, so they never import this package's
dependencies (DESIGN.md §8). ``installer`` edits Claude Code's settings JSON; ``session_start`` is the
optional digest hook that does import the core API. This ``__init__`` imports nothing on purpose.
"""

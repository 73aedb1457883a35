"""Claude Code hooks: the entry scripts and their installer.

``prompt_capture`` (``UserPromptSubmit``) is run by absolute path as ``python -S -E
.../hook/prompt_capture.py``; users' settings hold that path, so the script stays here while the
standard-library-only capture library it loads lives in :mod:`mission_memory.capture`.
``session_start`` is the optional digest hook that does import the core API; ``installer`` edits
Claude Code's settings JSON. This ``__init__`` imports nothing on purpose.
"""

"""Claude Code ``UserPromptSubmit`` hook entry point: capture the operator prompt, print nothing, exit 0.

Registered by ``mission-memory hook install`` and run by absolute path, never through the package::

    /abs/python3.11 -S -E /abs/.../mission_memory/hook/prompt_capture.py [--data-dir DIR]

The work happens in :mod:`mission_memory.capture.prompt_commit`, loaded by plain name from the sibling
``capture/`` folder (from cached bytecode); this file stays where users' settings point and stays tiny
because a script run by path is recompiled on every run. Whatever goes wrong, stdout stays empty and the
exit code is 0 (docs/design.md §8).
"""

if __name__ == "__main__":
    try:
        import sys

        # sys.path[0] is this folder (.../mission_memory/hook); the library is its sibling capture/.
        _here = sys.path[0]
        sys.path[0] = _here[: len(_here) - len("hook")] + "capture"
        from prompt_commit import main  # type: ignore[import-not-found]

        main()
    except BaseException:  # noqa: BLE001, S110 - fail open; prompt_commit logs what it can
        pass
    import posix

    posix._exit(0)  # skip interpreter teardown: nothing is buffered on stdout

"""The prompt hook's entry script stays where users' Claude Code settings point (docs/adr/0051).

``mission-memory hook install`` writes ``<python> -S -E <site-packages>/mission_memory/hook/prompt_capture.py``
into settings files that outlive upgrades; the capture library moved to ``mission_memory/capture/``,
so the script must keep its path and still find the library when run by that path.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import mission_memory
from mission_memory.hook import installer


def test_the_installed_command_names_the_script_at_its_settled_path() -> None:
    settled = Path(mission_memory.__file__).resolve().parent / "hook" / "prompt_capture.py"
    assert installer.PROMPT_HOOK_SCRIPT.resolve() == settled
    assert str(settled) in installer.prompt_hook_command()


def test_the_script_run_by_that_path_with_s_and_e_stores_the_prompt(
    data_dir: Path, payload: Callable[..., bytes], stored_documents: Callable[[Path], list[dict[str, object]]],
) -> None:
    settled = Path(mission_memory.__file__).resolve().parent / "hook" / "prompt_capture.py"
    interpreter = installer.hook_interpreter()
    done = subprocess.run(
        [str(interpreter), "-S", "-E", str(settled), "--data-dir", str(data_dir)],
        input=payload("keep the upload retries at three"), capture_output=True, timeout=60, check=False,
    )
    assert (done.returncode, done.stdout) == (0, b"")
    [document] = stored_documents(data_dir / "prompts.git")
    assert document["prompt"] == "keep the upload retries at three"

"""A JSON-valued setting holding text that is not JSON is reported like every other bad setting.

Every field of :class:`~mission_memory.config.Settings` that the environment gives as JSON (a model,
a mapping, a list) is found from the model itself, so a new JSON-valued setting is covered without
editing this file. The command runs as the console script does (``main()``), in a real process for
one case, and must say ``invalid setting (...; set by MISSION_MEMORY_<NAME>)``, exit 1, no traceback.
"""

from __future__ import annotations

import os
import subprocess
import sys
import types
import typing
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest
from pydantic import BaseModel

from mission_memory.cli.app import main
from mission_memory.config import Settings, load_settings
from mission_memory.errors import ConfigError

NOT_JSON = "{not json"


def _json_valued(annotation: object) -> bool:
    """Whether the environment gives a field of this type as JSON: a model, a mapping or a sequence
    (not text), also inside ``X | None`` and ``Annotated``."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _json_valued(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        return any(_json_valued(a) for a in typing.get_args(annotation) if a is not type(None))
    if isinstance(annotation, type):
        return issubclass(annotation, BaseModel | Mapping) or (
            issubclass(annotation, Sequence) and not issubclass(annotation, str | bytes))
    return isinstance(origin, type) and _json_valued(origin)


JSON_SETTINGS = sorted(name for name, field in Settings.model_fields.items() if _json_valued(field.annotation))


def test_the_json_valued_settings_are_found_from_the_model() -> None:
    # a floor, not the list: the ones a user met in the trial are among those found
    assert {"alertmanager_mapping", "receiver_auth", "sector_labels", "event_retention_kinds",
            "access_paths"} <= set(JSON_SETTINGS)


@pytest.mark.parametrize("name", JSON_SETTINGS)
def test_load_settings_names_the_variable_of_a_json_setting_that_is_not_json(
        name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(f"MISSION_MEMORY_{name.upper()}", NOT_JSON)
    with pytest.raises(ConfigError) as raised:
        load_settings()
    message = str(raised.value)
    assert message.startswith("invalid setting (")
    assert f"{name}: not JSON" in message
    assert f"set by MISSION_MEMORY_{name.upper()}" in message


@pytest.mark.parametrize("name", JSON_SETTINGS)
@pytest.mark.parametrize("command", [["status"], ["query", "anything"]])
def test_commands_report_a_json_setting_that_is_not_json(
        name: str, command: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("MISSION_MEMORY_DATA_DIR", str(tmp_path))
    monkeypatch.setenv(f"MISSION_MEMORY_{name.upper()}", NOT_JSON)
    monkeypatch.setattr(sys, "argv", ["mission-memory", *command])
    with pytest.raises(SystemExit) as exited:
        main()
    assert exited.value.code == 1
    err = capsys.readouterr().err
    assert "invalid setting (" in err and f"set by MISSION_MEMORY_{name.upper()}" in err


def test_a_real_process_reports_it_without_a_traceback(tmp_path: Path) -> None:
    env = {**os.environ, "MISSION_MEMORY_DATA_DIR": str(tmp_path),
           "MISSION_MEMORY_ALERTMANAGER_MAPPING": NOT_JSON}
    done = subprocess.run([sys.executable, "-m", "mission_memory", "status"], env=env, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert done.stderr.startswith("Error: invalid setting (alertmanager_mapping: not JSON")
    assert "set by MISSION_MEMORY_ALERTMANAGER_MAPPING" in done.stderr

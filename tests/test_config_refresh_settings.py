"""One settings loader: the refresher's settings are part of ``config.Settings``, read by ``load_settings``
from the same ``MISSION_MEMORY_*`` variables as before, with one error translation."""

from __future__ import annotations

import pytest

from mission_memory.config import load_settings
from mission_memory.errors import ConfigError

REFRESH_VARIABLES = {
    "MISSION_MEMORY_LLM_BASE_URL": ("llm_base_url", "http://localhost:11434/v1"),
    "MISSION_MEMORY_LLM_MODEL": ("llm_model", "qwen2.5:7b"),
    "MISSION_MEMORY_LLM_API_KEY": ("llm_api_key", "sk-1"),
    "MISSION_MEMORY_LLM_DAILY_TOKEN_CAP": ("llm_daily_token_cap", 5000),
    "MISSION_MEMORY_LLM_DEADLINE_SECONDS": ("llm_deadline_seconds", 45.0),
    "MISSION_MEMORY_REFRESH_LABEL": ("refresh_label", "ДОВГОСТРОК"),
    "MISSION_MEMORY_REFRESH_PASS_BUDGET_SECONDS": ("refresh_pass_budget_seconds", 600.0),
    "MISSION_MEMORY_PLANE_API_KEY": ("plane_api_key", "plane-key"),
    "MISSION_MEMORY_GITHUB_TOKEN": ("github_token", "ghp-1"),
    "MISSION_MEMORY_TRACKER_DEADLINE_SECONDS": ("tracker_deadline_seconds", 90.0),
}


def test_every_refresher_variable_is_read_by_the_one_loader(monkeypatch: pytest.MonkeyPatch) -> None:
    for variable, (_, value) in REFRESH_VARIABLES.items():
        monkeypatch.setenv(variable, str(value))
    settings = load_settings()

    assert {field: getattr(settings, field) for field, _ in REFRESH_VARIABLES.values()} == {
        field: value for field, value in REFRESH_VARIABLES.values()
    }
    assert settings.llm_configured is True


def test_the_refresher_defaults_are_extractive_long_term_and_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    for variable in REFRESH_VARIABLES:
        monkeypatch.delenv(variable, raising=False)
    settings = load_settings()

    assert settings.llm_configured is False and settings.refresh_label == "LONG-TERM"
    assert (settings.llm_deadline_seconds, settings.tracker_deadline_seconds, settings.refresh_pass_budget_seconds) == (
        60.0, 300.0, 900.0
    )


@pytest.mark.parametrize(
    ("variable", "value"),
    [("MISSION_MEMORY_LLM_DAILY_TOKEN_CAP", "-1"), ("MISSION_MEMORY_TRACKER_DEADLINE_SECONDS", "0"),
     ("MISSION_MEMORY_REFRESH_PASS_BUDGET_SECONDS", "soon")],
)
def test_a_bad_refresher_variable_is_a_config_error_naming_it(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str
) -> None:
    monkeypatch.setenv(variable, value)
    field = variable.removeprefix("MISSION_MEMORY_").lower()
    with pytest.raises(ConfigError, match=f"invalid setting \\({field}: ") as caught:
        load_settings()
    assert f"set by {variable}" in str(caught.value)


def test_a_bad_access_ceiling_names_the_variable_to_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MISSION_MEMORY_LLM_MAX_ACCESS", "bogus")
    with pytest.raises(ConfigError, match=r"llm_max_access: .*'secret'.*set by MISSION_MEMORY_LLM_MAX_ACCESS"):
        load_settings()
    monkeypatch.delenv("MISSION_MEMORY_LLM_MAX_ACCESS")
    with pytest.raises(ConfigError) as caught:  # an override is not an environment variable
        load_settings(llm_max_access="bogus")
    assert "MISSION_MEMORY_" not in str(caught.value)

"""Instructions-file growth measured on real git repositories with fixed commit dates."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from mission_memory.errors import InputError
from mission_memory.metrics.instructions_growth import fit_line, measure_instructions_growth


def test_size_is_measured_at_every_commit_that_changed_the_file_and_fit_per_day(
    make_git_repo: Callable[[str], Any],
) -> None:
    repo = make_git_repo("project")
    repo.commit("start", date="2025-01-01T00:00:00+00:00", files={"CLAUDE.md": "a" * 100})
    repo.commit("unrelated", date="2025-01-01T12:00:00+00:00", files={"src/app.py": "print()\n"})
    repo.commit("grow", date="2025-01-02T00:00:00+00:00", files={"CLAUDE.md": "a" * 400})
    repo.commit("grow again", date="2025-01-04T00:00:00+00:00", files={"CLAUDE.md": "a" * 500})
    growth = measure_instructions_growth(repo.root)
    assert growth.path == "CLAUDE.md"
    assert [v.chars for v in growth.versions] == [100, 400, 500]
    assert growth.days == 3.0
    # by hand: x = [0, 1, 3], y = [100, 400, 500]; Sxy = 5100/9, Sxx = 42/9, Syy = 780000/9
    assert growth.chars_per_day == pytest.approx(5100 / 42)
    assert growth.r2 == pytest.approx(5100**2 / (42 * 780_000))
    assert (growth.first_chars, growth.last_chars) == (100, 500)


def test_size_counts_characters_not_bytes(make_git_repo: Callable[[str], Any]) -> None:
    repo = make_git_repo("ua")
    repo.commit("uk", date="2025-03-01T00:00:00+00:00", files={"CLAUDE.md": "Правила проєкту\n"})
    repo.commit(
        "uk 2", date="2025-03-02T00:00:00+00:00", files={"CLAUDE.md": "Правила проєкту\nЗавжди тести\n"}
    )
    growth = measure_instructions_growth(repo.root)
    assert [v.chars for v in growth.versions] == [16, 29]
    assert [v.lines for v in growth.versions] == [1, 2]
    assert growth.chars_per_day == pytest.approx(13.0)
    assert growth.r2 == pytest.approx(1.0)


def test_agents_md_is_measured_when_there_is_no_claude_md(make_git_repo: Callable[[str], Any]) -> None:
    repo = make_git_repo("agents")
    repo.commit("one", date="2025-02-01T00:00:00+00:00", files={"AGENTS.md": "x" * 10})
    growth = measure_instructions_growth(repo.root)
    assert growth.path == "AGENTS.md"
    assert (growth.chars_per_day, growth.r2) == (None, None)


def test_an_explicit_path_in_a_subfolder_is_measured(make_git_repo: Callable[[str], Any]) -> None:
    repo = make_git_repo("nested")
    repo.commit("a", date="2025-02-01T00:00:00+00:00", files={"docs/CLAUDE.md": "x" * 10, "CLAUDE.md": "y"})
    repo.commit("b", date="2025-02-03T00:00:00+00:00", files={"docs/CLAUDE.md": "x" * 30})
    growth = measure_instructions_growth(repo.root / "docs", "docs/CLAUDE.md")
    assert growth.chars_per_day == pytest.approx(10.0)


def test_a_commit_that_deletes_the_file_records_size_zero(make_git_repo: Callable[[str], Any]) -> None:
    repo = make_git_repo("deleted")
    repo.commit("a", date="2025-02-01T00:00:00+00:00", files={"CLAUDE.md": "x" * 10})
    (repo.root / "CLAUDE.md").unlink()
    repo.commit("rm", date="2025-02-02T00:00:00+00:00")
    growth = measure_instructions_growth(repo.root)
    assert [v.chars for v in growth.versions] == [10, 0]


def test_a_repository_without_instructions_file_is_an_input_error(
    make_git_repo: Callable[[str], Any],
) -> None:
    repo = make_git_repo("bare-project")
    repo.commit("a", date="2025-02-01T00:00:00+00:00", files={"README.md": "x"})
    with pytest.raises(InputError, match=r"CLAUDE\.md or AGENTS\.md"):
        measure_instructions_growth(repo.root)


def test_a_folder_that_is_not_a_git_repository_is_an_input_error(tmp_path: Path) -> None:
    folder = tmp_path / "plain"
    folder.mkdir()
    with pytest.raises(InputError, match="not a git repository"):
        measure_instructions_growth(folder)


def test_the_fit_of_a_constant_series_has_no_r2_and_a_flat_slope() -> None:
    fit = fit_line([0.0, 1.0, 2.0], [5.0, 5.0, 5.0])
    assert fit is not None
    assert (fit.slope, fit.r2) == (0.0, None)
    assert fit_line([1.0, 1.0], [2.0, 3.0]) is None

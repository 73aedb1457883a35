"""``--budget`` below what any digest needs is refused with the real floor in the stated range.

A user read ``--budget 0 is outside 1..200000`` while any budget under about 115 was refused anyway
("too small for the digest header"). The range now starts at the digest's floor
(:func:`mission_memory.retrieval.digest.least_digest_budget`, the one place that knows the header and
closing line), and the floor is never above what the shortest question needs.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from mission_memory.api import Memory
from mission_memory.cli.app import main
from mission_memory.config import MAX_TOKEN_BUDGET, load_settings
from mission_memory.errors import BudgetError
from mission_memory.retrieval.digest import least_digest_budget


def _err(argv: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> str:
    monkeypatch.setattr(sys, "argv", ["mission-memory", *argv])
    with pytest.raises(SystemExit) as exited:
        main()
    assert exited.value.code == 1
    return capsys.readouterr().err


def test_the_range_states_the_floor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    with Memory(load_settings()) as memory:
        floor = least_digest_budget(memory.tokenizer)
        with pytest.raises(BudgetError) as raised:  # the shortest question needs at least the floor
            memory.query("x", token_budget=floor - 1)
        assert raised.value.needed >= floor
    assert floor > 50
    for budget in ("0", str(floor - 1)):
        err = _err(["query", "x", "--budget", budget], monkeypatch, capsys)
        assert f"--budget {budget} is outside {floor}..{MAX_TOKEN_BUDGET} tokens" in err, err
        assert "digest" in err
    err = _err(["demo", "--budget", "0"], monkeypatch, capsys)
    assert f"outside {floor}..{MAX_TOKEN_BUDGET}" in err, err

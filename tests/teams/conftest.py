"""The team mission is built once per module: ingesting with the real embedder takes seconds."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.teams.scenario import TeamMission, build_team_mission


@pytest.fixture(scope="module")
def team(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TeamMission]:
    """The mission with planted restricted records and alice's, bob's and an expired token."""
    yield build_team_mission(tmp_path_factory.mktemp("team"))

"""make_tracker: kind -> configured tracker, and its refusals."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer

from mission_memory.config import Settings
from mission_memory.errors import ConfigError
from mission_memory.trackers.base import Tracker
from mission_memory.trackers.github import GitHubTracker
from mission_memory.trackers.local_files import LocalFolderTracker
from mission_memory.trackers.plane import PlaneTracker
from mission_memory.trackers.registry import TRACKER_KINDS, make_tracker


def test_each_kind_builds_its_tracker(tmp_path: Path) -> None:
    plane = make_tracker(
        "plane", base_url="https://api.plane.so", workspace="ops", project_id="p-1", api_key="k"
    )
    github = make_tracker("GitHub", repo="owner/name", token=None)
    local = make_tracker("local", folder=tmp_path)

    assert isinstance(plane, PlaneTracker) and plane.kind == "plane"
    assert isinstance(github, GitHubTracker) and github.kind == "github"
    assert isinstance(local, LocalFolderTracker) and local.kind == "local"
    assert TRACKER_KINDS == ("plane", "github", "local")


def test_an_unknown_kind_is_a_config_error_listing_the_kinds() -> None:
    with pytest.raises(ConfigError, match="plane, github, local"):
        make_tracker("jira")


def test_missing_or_unexpected_options_are_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="'plane'"):
        make_tracker("plane", base_url="https://api.plane.so", workspace="ops")
    with pytest.raises(ConfigError, match="'local'"):
        make_tracker("local", folder=tmp_path, label="LONG-TERM")


def test_choosing_the_local_tracker_imports_neither_httpx_nor_the_http_trackers(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from mission_memory.trackers.registry import make_tracker\n"
        f"make_tracker('local', folder={str(tmp_path)!r})\n"
        "print(sorted(m for m in ('httpx', 'mission_memory.trackers.plane',"
        " 'mission_memory.trackers.github') if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)

    assert done.stdout.strip() == "[]"


def test_every_tracker_satisfies_the_tracker_protocol(tmp_path: Path) -> None:
    trackers: list[Tracker] = [
        PlaneTracker("https://api.plane.so", "ops", "p-1", "k"),
        GitHubTracker("owner/name", None),
        LocalFolderTracker(tmp_path),
    ]
    assert [tracker.kind for tracker in trackers] == ["plane", "github", "local"]


def test_plane_without_an_api_key_is_a_config_error_of_the_registry_naming_the_variable() -> None:
    with pytest.raises(ConfigError, match="MISSION_MEMORY_PLANE_API_KEY"):
        make_tracker("plane", settings=Settings(plane_api_key=None), base_url="https://api.plane.so",
                     workspace="ops", project_id="p-1")


def test_the_registry_sends_the_github_token_of_the_settings(httpserver: HTTPServer) -> None:
    httpserver.expect_request(
        "/repos/owner/name/issues", headers={"Authorization": "Bearer ghp-from-settings"}
    ).respond_with_json([])
    tracker = make_tracker("github", settings=Settings(github_token="ghp-from-settings"), repo="owner/name",
                           base_url=httpserver.url_for("").rstrip("/"))

    assert tracker.list_tasks() == []
    httpserver.check_assertions()


def test_a_private_github_repository_without_a_token_is_a_config_error_naming_the_variable(
    httpserver: HTTPServer,
) -> None:
    httpserver.expect_request("/repos/owner/private/issues").respond_with_json({"message": "Not Found"}, status=404)
    tracker = make_tracker("github", settings=Settings(github_token=None), repo="owner/private",
                           base_url=httpserver.url_for("").rstrip("/"))

    with pytest.raises(ConfigError, match="MISSION_MEMORY_GITHUB_TOKEN"):
        tracker.list_tasks()

"""docs/teams.md gives the commands that run PostgreSQL as root, the ones the tests' own fixture runs.

A user following the guide as root met ``initdb: error: cannot be run as root`` and the guide only said
to use an ordinary user. The guide's root steps must create the same unprivileged user and run
``initdb``/``pg_ctl`` through ``setpriv`` as :mod:`tests.postgres_server` does (tested there, on every
run as root).
"""

from __future__ import annotations

from pathlib import Path

from tests.postgres_server import SERVER_USER

GUIDE = Path(__file__).resolve().parents[1] / "docs" / "teams.md"


def test_the_team_guide_runs_postgres_as_root_as_the_fixture_does() -> None:
    text = GUIDE.read_text(encoding="utf-8")
    assert "cannot be run as root" in text
    assert f"useradd --system --no-create-home --shell /usr/sbin/nologin {SERVER_USER}" in text
    assert f"chown {SERVER_USER}:" in text
    assert f"setpriv --reuid={SERVER_USER} --regid={SERVER_USER} --clear-groups --" in text
    assert '$AS_PG "$PGBIN/initdb"' in text and '$AS_PG "$PGBIN/pg_ctl"' in text

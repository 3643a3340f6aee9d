"""Opening appdb: the URL, SQLite's settings, migrations that match the models, and several
processes opening (and migrating) the same fresh database at once."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import inspect, text

from tansaku.appdb import AppDBError, open_appdb, resolve_url
from tansaku.appdb.migrate import HEAD, head_revision
from tansaku.appdb.models import Base


def test_sqlite_file_in_the_workspace_with_wal_busy_timeout_and_foreign_keys(tmp_path) -> None:
    with open_appdb(tmp_path / "ws") as db:
        assert db.backend == "sqlite"
        assert (tmp_path / "ws" / "app.db").is_file()
        with db.engine.connect() as c:
            assert c.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
            assert c.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
            assert c.exec_driver_sql("PRAGMA busy_timeout").scalar() == 30000
        assert db.ping()


def test_default_is_the_workspace_of_tansaku_home(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("TANSAKU_HOME", str(tmp_path / "envhome"))
    url, home = resolve_url(None)
    assert home == (tmp_path / "envhome").resolve()
    assert url.database == str(home / "app.db")


def test_database_url_env_wins_over_the_workspace_file(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("TANSAKU_DATABASE_URL", f"sqlite:///{tmp_path / 'elsewhere.db'}")
    with open_appdb(tmp_path / "ws") as db:
        assert db.engine.url.database == str(tmp_path / "elsewhere.db")
        assert db.home == (tmp_path / "ws").resolve()
    assert not (tmp_path / "ws" / "app.db").exists()


def test_postgres_urls_use_psycopg_3() -> None:
    url, home = resolve_url("postgresql://u:secret@db.example:5432/tansaku")
    assert url.drivername == "postgresql+psycopg" and home is None
    assert resolve_url("postgres://u@h/x")[0].drivername == "postgresql+psycopg"


def test_unsupported_or_unreadable_urls_are_clear_errors() -> None:
    with pytest.raises(AppDBError, match="SQLite と PostgreSQL"):
        resolve_url("mysql://u:p@h/db")
    with pytest.raises(AppDBError, match="解釈できません") as info:
        resolve_url("postgresql://u:secret@h:notaport/db")
    assert "secret" not in str(info.value)


def test_migrated_schema_is_exactly_the_models(db) -> None:
    with db.engine.connect() as c:
        ctx = MigrationContext.configure(c, opts={"compare_type": True})
        assert ctx.get_current_revision() == head_revision()
        assert compare_metadata(ctx, Base.metadata) == []
        tables = set(inspect(c).get_table_names())
    assert {"search_events", "feedback", "api_keys", "jobs", "unanswered"} <= tables
    assert {"conversations", "messages", "alembic_version"} <= tables


def test_the_fast_head_check_names_alembic_s_head() -> None:
    assert head_revision() == HEAD  # a new migration: set migrate.HEAD to its revision


def test_reopening_does_not_migrate_again(db_target) -> None:
    open_appdb(db_target).close()
    with open_appdb(db_target) as db, db.engine.connect() as c:
        rows = c.execute(text("SELECT version_num FROM alembic_version")).all()
    assert rows == [(head_revision(),)]


def test_a_database_from_a_newer_tansaku_is_refused(db_target) -> None:
    with open_appdb(db_target) as db, db.engine.begin() as c:
        c.execute(text("UPDATE alembic_version SET version_num = '9999'"))
    with pytest.raises(AppDBError, match="新しい版"):
        open_appdb(db_target)


OPENER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from tansaku.appdb import open_appdb
    target, go = sys.argv[1], Path(sys.argv[2])
    Path(f"{go}.{sys.argv[3]}.ready").touch()
    while not go.exists():
        time.sleep(0.005)
    db = open_appdb(target)
    db.unanswered.add("default", collection="manual", question=sys.argv[3], reason="r")
    print(db.unanswered.count("default"))
    """
)


@pytest.mark.integration
def test_several_processes_open_a_fresh_database_at_once(db_target, tmp_path) -> None:
    go = tmp_path / "go"
    n = 4
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", OPENER, str(db_target), str(go), f"質問{i}"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(n)
    ]
    while len(list(tmp_path.glob("go.*.ready"))) < n:  # every opener imported, at the barrier
        assert all(p.poll() is None for p in procs), [p.communicate() for p in procs]
        time.sleep(0.05)
    go.touch()
    outs = [p.communicate(timeout=120) for p in procs]
    for p, (_, err) in zip(procs, outs, strict=True):
        assert p.returncode == 0, err
    with open_appdb(db_target) as db:
        assert sorted(q.question for q in db.unanswered.find("default")) == [
            f"質問{i}" for i in range(n)
        ]
        with db.engine.connect() as c:
            assert c.execute(text("SELECT count(*) FROM alembic_version")).scalar() == 1


def test_a_workspace_path_is_not_mistaken_for_a_url(tmp_path) -> None:
    url, home = resolve_url(Path(tmp_path / "a:b"))
    assert url.get_backend_name() == "sqlite" and home is not None

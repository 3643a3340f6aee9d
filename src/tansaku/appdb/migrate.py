"""Alembic migrations, run from the package (no alembic.ini): on open, safely, by one process.

The scripts live in ``tansaku/appdb/migrations``. :func:`upgrade` reads the database's revision
first; when it is already the newest (the usual case, compared with :data:`HEAD` in plain SQL)
nothing is locked and alembic is not even imported. Otherwise one opener
migrates while the others wait: on PostgreSQL under an advisory lock held for the migration, on
SQLite under an exclusive ``flock`` on ``<app.db>.migrate.lock``. Whoever gets the lock
re-reads the revision, so a database migrated meanwhile is not migrated twice.
"""

from __future__ import annotations

import fcntl
import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Connection, text

from tansaku.appdb.errors import AppDBError

if TYPE_CHECKING:
    from alembic.config import Config

    from tansaku.appdb.db import AppDB

log = logging.getLogger("tansaku.appdb")

MIGRATIONS = Path(__file__).parent / "migrations"
#: The newest revision in ``migrations/versions`` (``tests/appdb/test_open.py`` checks it
#: against alembic's own head; a stale value only costs the alembic check).
HEAD = "0001"
#: ``pg_advisory_lock`` key of the migration (the ASCII of "tnskmig" as an integer).
PG_LOCK_KEY = 0x746E736B6D6967


def alembic_config() -> Config:
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    return cfg


def head_revision() -> str:
    from alembic.script import ScriptDirectory

    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    if head is None:  # pragma: no cover - the package always ships revisions
        raise AppDBError("appdb のマイグレーションが見つかりません(パッケージが壊れています)")
    return head


def current_revision(conn: Connection) -> str | None:
    from alembic.runtime.migration import MigrationContext

    return MigrationContext.configure(conn).get_current_revision()


def _run(conn: Connection, target: str) -> None:
    from alembic import command

    cfg = alembic_config()
    cfg.attributes["connection"] = conn
    command.upgrade(cfg, target)


def _stored_revision(db: AppDB) -> str | None:
    """The revision in ``alembic_version`` (None: no such table yet, or no row)."""
    try:
        with db.engine.connect() as conn:
            value = conn.execute(text("SELECT version_num FROM alembic_version")).scalar()
            conn.rollback()
    except Exception:  # a new database: alembic creates the table
        return None
    return str(value) if value is not None else None


@contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # blocks until the migrating process is done
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def upgrade(db: AppDB, target: str = "head") -> None:
    """Bring ``db`` to ``target`` (default: the newest schema); safe with concurrent openers."""
    if target == "head" and _stored_revision(db) == HEAD:
        return
    from alembic.script import ScriptDirectory

    head = head_revision() if target == "head" else target
    with db.engine.connect() as conn:
        current = current_revision(conn)
        conn.rollback()
    if current == head:
        return
    known = {s.revision for s in ScriptDirectory.from_config(alembic_config()).walk_revisions()}
    if current is not None and current not in known:
        raise AppDBError(
            f"appdb のスキーマ版 {current} はこの tansaku より新しい版です。"
            "tansaku を更新してから開いてください"
        )
    with _migration_lock(db) as conn:
        if current_revision(conn) != head:  # a database migrated meanwhile is left alone
            log.info("appdb: migrating %s to %s", db.url, head)
            _run(conn, target)
            conn.commit()


@contextmanager
def _migration_lock(db: AppDB) -> Iterator[Connection]:
    """A connection held while no other process migrates: under an advisory lock on
    PostgreSQL, an exclusive ``flock`` on ``<app.db>.migrate.lock`` on SQLite (none for an
    in-memory database)."""
    if db.backend == "postgresql":
        with db.engine.connect() as conn:
            conn.execute(text("SELECT pg_advisory_lock(:k)"), {"k": PG_LOCK_KEY})
            conn.commit()
            try:
                yield conn
            finally:
                conn.rollback()
                conn.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": PG_LOCK_KEY})
                conn.commit()
        return
    database = db.engine.url.database
    lock = Path(f"{database}.migrate.lock") if database and database != ":memory:" else None
    with _file_lock(lock) if lock else nullcontext(), db.engine.connect() as conn:
        yield conn

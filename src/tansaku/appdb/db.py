"""Opening the application database: the URL, the engine, sessions and migrations.

``open_appdb()`` picks the database, in this order: an explicit URL, ``$TANSAKU_DATABASE_URL``,
else the SQLite file ``<home>/app.db`` of the workspace. SQLite runs in WAL mode with a busy
timeout and foreign keys on; write transactions start with ``BEGIN IMMEDIATE`` so that several
processes and threads writing at once queue up instead of failing. PostgreSQL URLs
(``postgresql://``, ``postgres://``) are driven by psycopg 3.

Migrations run on open (``tansaku.appdb.migrate``): one opener migrates, the others wait.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from tansaku.errors import MissingExtra
from tansaku.workspace import Workspace

try:
    from sqlalchemy import Engine, create_engine, event, text
    from sqlalchemy.engine import URL, make_url
    from sqlalchemy.orm import Session, sessionmaker
except ImportError as exc:  # pragma: no cover - the server extra is missing
    raise MissingExtra("sqlalchemy と alembic", "server", "アプリケーション DB (appdb)") from exc

from tansaku.appdb.conversations import ConversationRepo
from tansaku.appdb.errors import AppDBError
from tansaku.appdb.events import EventRepo
from tansaku.appdb.feedback import FeedbackRepo
from tansaku.appdb.jobs import JobRepo
from tansaku.appdb.keys import KeyRepo
from tansaku.appdb.unanswered import UnansweredRepo

ENV_DATABASE_URL = "TANSAKU_DATABASE_URL"
SQLITE_FILE = "app.db"
BUSY_TIMEOUT_MS = 30_000


def _is_url(value: str) -> bool:
    return "://" in value


def resolve_url(home_or_url: str | Path | None = None) -> tuple[URL, Path | None]:
    """The database URL and the workspace home (``None`` when only a URL was given)."""
    if isinstance(home_or_url, str) and _is_url(home_or_url):
        return _normalise(home_or_url), None
    home = Workspace.from_env(home_or_url).home
    env = os.environ.get(ENV_DATABASE_URL, "").strip()
    if env:
        return _normalise(env), home
    return make_url(f"sqlite:///{home / SQLITE_FILE}"), home


def _normalise(raw: str) -> URL:
    try:
        url = make_url(raw)
    except Exception as exc:
        raise AppDBError(
            f"データベース URL を解釈できません({_redact(raw)}): {exc}。"
            "例: postgresql://user:pass@host:5432/tansaku または sqlite:////path/app.db"
        ) from None
    if url.drivername in ("postgresql", "postgres", "postgresql+psycopg2"):
        url = url.set(drivername="postgresql+psycopg")
    if url.get_backend_name() not in ("sqlite", "postgresql"):
        raise AppDBError(
            f"appdb は SQLite と PostgreSQL に対応しています(指定: {url.get_backend_name()})"
        )
    return url


def _redact(raw: str) -> str:
    try:
        return make_url(raw).render_as_string(hide_password=True)
    except Exception:
        return "<URL>"


def _sqlite_engine(url: URL) -> Engine:
    path = url.database
    if path and path != ":memory:":
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(
        url,
        connect_args={"timeout": BUSY_TIMEOUT_MS / 1000, "check_same_thread": False},
        pool_pre_ping=False,
    )

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_con: Any, _record: Any) -> None:
        dbapi_con.isolation_level = None  # we emit BEGIN ourselves (below)
        cur = dbapi_con.cursor()
        cur.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        cur.execute("PRAGMA journal_mode = WAL")
        cur.execute("PRAGMA synchronous = NORMAL")
        cur.execute("PRAGMA foreign_keys = ON")
        cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Any) -> None:
        immediate = conn.get_execution_options().get("tansaku_write", False)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")

    return engine


def _postgres_engine(url: URL) -> Engine:
    try:
        import psycopg  # noqa: F401
    except ImportError as exc:
        raise MissingExtra("psycopg", "postgres", "PostgreSQL の appdb") from exc
    return create_engine(url, pool_pre_ping=True, pool_size=5, max_overflow=10)


@dataclass(frozen=True)
class AppDB:
    """The application database: an engine shared by threads, sessions, and the repositories
    (``db.events``, ``db.feedback``, ``db.keys``, ``db.jobs``, ``db.unanswered``,
    ``db.conversations``). Open it with :func:`open_appdb`."""

    engine: Engine
    home: Path | None = None

    @property
    def url(self) -> str:
        return self.engine.url.render_as_string(hide_password=True)

    @property
    def backend(self) -> str:
        """``"sqlite"`` or ``"postgresql"``."""
        return self.engine.dialect.name

    @cached_property
    def _sessions(self) -> sessionmaker[Session]:
        return sessionmaker(self.engine, expire_on_commit=False)

    @contextmanager
    def read(self) -> Iterator[Session]:
        """A session for reads (a plain transaction, rolled back at the end)."""
        with self._sessions() as session:
            yield session

    @contextmanager
    def write(self) -> Iterator[Session]:
        """A write transaction, committed at the end: ``BEGIN IMMEDIATE`` on SQLite (writers
        queue on the busy timeout instead of failing half-way)."""
        with self.engine.connect() as conn:
            conn = conn.execution_options(tansaku_write=True)
            with Session(bind=conn, expire_on_commit=False) as session, session.begin():
                yield session

    def lock_in(self, session: Session, name: str) -> None:
        """Serialise write transactions on ``name`` until ``session``'s transaction ends:
        a transaction-level advisory lock on PostgreSQL; on SQLite every write transaction
        (``BEGIN IMMEDIATE``) is serialised already."""
        if self.backend == "postgresql":
            session.execute(
                text("SELECT pg_advisory_xact_lock(hashtextextended(:name, 0))"), {"name": name}
            )

    def ping(self) -> bool:
        """Whether the database answers (for health checks); errors propagate."""
        with self.engine.connect() as conn:
            return conn.exec_driver_sql("SELECT 1").scalar() == 1

    def close(self) -> None:
        self.engine.dispose()

    def __enter__(self) -> AppDB:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- repositories: each built on first use, one per database ---------------------------
    events = cached_property(EventRepo)
    feedback = cached_property(FeedbackRepo)
    keys = cached_property(KeyRepo)
    jobs = cached_property(JobRepo)
    unanswered = cached_property(UnansweredRepo)
    conversations = cached_property(ConversationRepo)


LEGACY_FILE = "appdb.sqlite"


def import_legacy(db: AppDB) -> None:
    """Copy the unanswered questions and conversations of the raw-SQLite file of earlier
    versions (``<home>/appdb.sqlite``) into ``db``, once (the file is left untouched)."""
    if db.home is None:
        return
    legacy = db.home / LEGACY_FILE
    if legacy.is_file():
        from tansaku.appdb.legacy_history import import_legacy_conversations

        db.unanswered.import_legacy(legacy)
        import_legacy_conversations(db, legacy)


def open_appdb(home_or_url: str | Path | None = None, *, migrate: bool = True) -> AppDB:
    """Open (and migrate to the newest schema) the application database; the rows of an
    earlier version's ``<home>/appdb.sqlite`` are copied in on the first open.

    ``home_or_url``: a workspace folder (SQLite ``<home>/app.db`` unless
    ``$TANSAKU_DATABASE_URL`` is set) or a database URL; ``None`` is the workspace of
    ``$TANSAKU_HOME``.
    """
    url, home = resolve_url(home_or_url)
    engine = _sqlite_engine(url) if url.get_backend_name() == "sqlite" else _postgres_engine(url)
    db = AppDB(engine=engine, home=home)
    if migrate:
        from tansaku.appdb.migrate import upgrade

        try:
            upgrade(db)
            import_legacy(db)
        except BaseException:
            engine.dispose()
            raise
    return db


_shared: dict[str, AppDB] = {}
_shared_lock = threading.Lock()


def shared_appdb(home_or_url: str | Path | None = None) -> AppDB:
    """One open (migrated) :class:`AppDB` per database per process, shared by threads: what
    short-lived callers (the agent's unanswered log, conversation history) use instead of
    opening an engine per call. Do not ``close()`` it; :func:`close_shared` does."""
    url, _home = resolve_url(home_or_url)
    key = url.render_as_string(hide_password=False)
    with _shared_lock:
        db = _shared.get(key)
        if db is None:
            db = _shared[key] = open_appdb(home_or_url)
        return db


def close_shared() -> None:
    """Dispose of every shared engine (tests, or a process that forks)."""
    with _shared_lock:
        for db in _shared.values():
            db.close()
        _shared.clear()

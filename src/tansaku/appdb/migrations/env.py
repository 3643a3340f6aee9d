"""Alembic environment for appdb: always run programmatically on a connection handed in by
``tansaku.appdb.migrate`` (``config.attributes["connection"]``)."""

from __future__ import annotations

from alembic import context

from tansaku.appdb.models import Base

connection = context.config.attributes.get("connection")
if connection is None:
    raise RuntimeError("appdb migrations run through tansaku.appdb.migrate.upgrade(), not the CLI")

context.configure(
    connection=connection,
    target_metadata=Base.metadata,
    render_as_batch=connection.dialect.name == "sqlite",
    compare_type=True,
)
with context.begin_transaction():
    context.run_migrations()

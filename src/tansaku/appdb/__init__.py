"""The application database: search events, feedback, API keys, jobs, the unanswered log and
conversations, through SQLAlchemy 2 with Alembic migrations.

SQLite ``<home>/app.db`` by default, PostgreSQL when ``$TANSAKU_DATABASE_URL`` is set::

    from tansaku.appdb import open_appdb

    db = open_appdb("./.tansaku")            # migrated to the newest schema on open
    db.events.record_result("default", result)
    db.feedback.submit("default", query_id=result.query_id, rating=-1,
                       reason="ヒールカードが出ない", client="ip:127.0.0.1")
    key, record = db.keys.create_key("cards", "ci")
    db.keys.verify(key)                      # → "cards"

Every read and write of a team's data takes the team and filters by it in the query.
"""

from __future__ import annotations

from tansaku.appdb.db import (
    ENV_DATABASE_URL,
    AppDB,
    close_shared,
    open_appdb,
    resolve_url,
    shared_appdb,
)
from tansaku.appdb.errors import (
    AppDBError,
    InvalidInput,
    InvalidTransition,
    NotFound,
    RateLimited,
)

__all__ = [
    "ENV_DATABASE_URL",
    "AppDB",
    "AppDBError",
    "InvalidInput",
    "InvalidTransition",
    "NotFound",
    "RateLimited",
    "close_shared",
    "open_appdb",
    "resolve_url",
    "shared_appdb",
]

"""The appdb schema as typed SQLAlchemy 2 ORM classes (``Mapped[...]``).

Every table that holds a team's data has a ``team`` column, and every repository query filters
by it. Times are stored in UTC (``UTCDateTime``): aware ``datetime`` in, aware ``datetime`` out,
on SQLite (ISO text) as on PostgreSQL (``timestamptz``). JSON columns are ``JSONB`` on
PostgreSQL and JSON text on SQLite.

The Alembic migrations in ``tansaku/appdb/migrations/versions`` create exactly these tables; a
test compares the migrated schema with this metadata, so the two cannot drift.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    CheckConstraint,
    DateTime,
    Dialect,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    SmallInteger,
    String,
    Text,
    TypeDecorator,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

NAMING = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

JSONType = JSON().with_variant(JSONB(), "postgresql")


class UTCDateTime(TypeDecorator[datetime]):
    """An aware UTC ``datetime``; naive values are refused (they are a bug, not a time)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError(f"appdb stores aware datetimes only (got naive {value!r})")
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def utcnow() -> datetime:
    return datetime.now(UTC)


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)
    type_annotation_map = {datetime: UTCDateTime(), dict[str, Any]: JSONType}  # noqa: RUF012


class SearchEvent(Base):
    """One search (the SEARCH_EVENT): what feedback and the dashboard are rebuilt from."""

    __tablename__ = "search_events"
    __table_args__ = (Index(None, "team", "created_at"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    query_id: Mapped[str] = mapped_column(String(64), unique=True)
    team: Mapped[str] = mapped_column(String(64))
    collection: Mapped[str] = mapped_column(String(64))
    query: Mapped[str] = mapped_column(Text)
    normalized_query: Mapped[str] = mapped_column(Text, default="")
    query_type: Mapped[str] = mapped_column(String(32), default="")
    expanded_queries: Mapped[list[str]] = mapped_column(JSONType, default=list)
    axes: Mapped[list[dict[str, Any]]] = mapped_column(JSONType, default=list)
    namespaces: Mapped[list[str]] = mapped_column(JSONType, default=list)
    stage: Mapped[int] = mapped_column(Integer, default=0)
    min_score: Mapped[float | None] = mapped_column(Float, nullable=True)
    top_k: Mapped[int | None] = mapped_column(Integer, nullable=True)
    top_doc_ids: Mapped[list[str]] = mapped_column(JSONType, default=list)
    top_titles: Mapped[list[str]] = mapped_column(JSONType, default=list)
    top_scores: Mapped[list[float]] = mapped_column(JSONType, default=list)
    hit_count: Mapped[int] = mapped_column(Integer, default=0)
    zero_hit: Mapped[bool] = mapped_column(Boolean, default=False)
    timings_ms: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    extra: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class Feedback(Base):
    """👍/👎 on a search; ``meta`` is rebuilt from the stored event, never sent by a client."""

    __tablename__ = "feedback"
    __table_args__ = (
        CheckConstraint("rating IN (-1, 1)", name="rating"),
        Index(None, "team", "created_at"),
        Index(None, "client", "created_at"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    query_id: Mapped[str] = mapped_column(
        String(64), ForeignKey("search_events.query_id", ondelete="CASCADE"), index=True
    )
    team: Mapped[str] = mapped_column(String(64))
    rating: Mapped[int] = mapped_column(SmallInteger)
    reason: Mapped[str | None] = mapped_column(Text, nullable=True)
    client: Mapped[str] = mapped_column(String(128))
    meta: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class ApiKey(Base):
    """An API key's hash and display prefix; the key itself is shown once and never stored."""

    __tablename__ = "api_keys"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    team: Mapped[str] = mapped_column(String(64), index=True)
    name: Mapped[str] = mapped_column(String(100), default="")
    prefix: Mapped[str] = mapped_column(String(32), unique=True)
    key_hash: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    last_used_at: Mapped[datetime | None] = mapped_column(nullable=True)
    revoked_at: Mapped[datetime | None] = mapped_column(nullable=True)


class Job(Base):
    """A background job (ingest, Q/A generation); it outlives the request that started it."""

    __tablename__ = "jobs"
    __table_args__ = (
        CheckConstraint(
            "status IN ('queued', 'running', 'done', 'failed', 'cancelled')", name="status"
        ),
        Index(None, "team", "created_at"),
        Index(None, "status"),
    )

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    team: Mapped[str] = mapped_column(String(64))
    kind: Mapped[str] = mapped_column(String(32))
    collection: Mapped[str | None] = mapped_column(String(64), nullable=True)
    status: Mapped[str] = mapped_column(String(16), default="queued")
    params: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    progress: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    error_code: Mapped[str | None] = mapped_column(String(32), nullable=True)
    resumable: Mapped[bool] = mapped_column(Boolean, default=False)
    worker: Mapped[str | None] = mapped_column(String(128), nullable=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)


class UnansweredQuestion(Base):
    """A question no source supported, kept until the team fills the gap (resolves it)."""

    __tablename__ = "unanswered"
    __table_args__ = (Index(None, "team", "asked_at"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    asked_at: Mapped[datetime] = mapped_column(default=utcnow)
    team: Mapped[str] = mapped_column(String(64))
    collection: Mapped[str] = mapped_column(String(64))
    question: Mapped[str] = mapped_column(Text)
    reason: Mapped[str] = mapped_column(Text)
    tools: Mapped[list[str]] = mapped_column(JSONType, default=list)
    resolved_at: Mapped[datetime | None] = mapped_column(nullable=True)
    resolution: Mapped[str | None] = mapped_column(Text, nullable=True)


class Conversation(Base):
    __tablename__ = "conversations"
    __table_args__ = (Index(None, "team", "updated_at"),)

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    team: Mapped[str] = mapped_column(String(64))
    title: Mapped[str] = mapped_column(Text, default="")
    meta: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)
    messages: Mapped[list[Message]] = relationship(
        back_populates="conversation",
        cascade="all, delete-orphan",
        passive_deletes=True,
        order_by="Message.id",
    )


class Message(Base):
    __tablename__ = "messages"
    __table_args__ = (Index(None, "team", "conversation_id", "id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    conversation_id: Mapped[str] = mapped_column(
        String(64), ForeignKey("conversations.id", ondelete="CASCADE")
    )
    team: Mapped[str] = mapped_column(String(64))
    role: Mapped[str] = mapped_column(String(16))
    content: Mapped[str] = mapped_column(Text)
    data: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    conversation: Mapped[Conversation] = relationship(back_populates="messages")


class Setting(Base):
    """Small key/value facts about the database itself (e.g. a legacy file already imported)."""

    __tablename__ = "appdb_settings"

    key: Mapped[str] = mapped_column(String(200), primary_key=True)
    value: Mapped[str] = mapped_column(Text)

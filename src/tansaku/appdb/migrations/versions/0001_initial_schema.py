"""initial schema

Revision ID: 0001
Revises:
Create Date: 2026-11-23

The tables of the application (`tansaku serve`): search events, feedback, API keys, jobs, the
unanswered log, conversations and messages. Types are spelled out here (not imported from
models.py) so that this revision stays what it was when models change.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

TS = sa.DateTime(timezone=True)
JSON_ = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "api_keys",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("team", sa.String(length=64), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("prefix", sa.String(length=32), nullable=False),
        sa.Column("key_hash", sa.String(length=64), nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("last_used_at", TS, nullable=True),
        sa.Column("revoked_at", TS, nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_api_keys")),
        sa.UniqueConstraint("prefix", name=op.f("uq_api_keys_prefix")),
    )
    with op.batch_alter_table("api_keys", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_api_keys_team"), ["team"], unique=False)

    op.create_table(
        "appdb_settings",
        sa.Column("key", sa.String(length=200), nullable=False),
        sa.Column("value", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("key", name=op.f("pk_appdb_settings")),
    )
    op.create_table(
        "conversations",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("team", sa.String(length=64), nullable=False),
        sa.Column("title", sa.Text(), nullable=False),
        sa.Column("meta", JSON_, nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("updated_at", TS, nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_conversations")),
    )
    with op.batch_alter_table("conversations", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_conversations_team_updated_at"), ["team", "updated_at"], unique=False
        )

    op.create_table(
        "jobs",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("team", sa.String(length=64), nullable=False),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("collection", sa.String(length=64), nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("params", JSON_, nullable=False),
        sa.Column("progress", JSON_, nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("error_code", sa.String(length=32), nullable=True),
        sa.Column("resumable", sa.Boolean(), nullable=False),
        sa.Column("worker", sa.String(length=128), nullable=True),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("updated_at", TS, nullable=False),
        sa.CheckConstraint(
            "status IN ('queued', 'running', 'done', 'failed', 'cancelled')",
            name=op.f("ck_jobs_status"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_jobs")),
    )
    with op.batch_alter_table("jobs", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_jobs_status"), ["status"], unique=False)
        batch_op.create_index(
            batch_op.f("ix_jobs_team_created_at"), ["team", "created_at"], unique=False
        )

    op.create_table(
        "search_events",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("query_id", sa.String(length=64), nullable=False),
        sa.Column("team", sa.String(length=64), nullable=False),
        sa.Column("collection", sa.String(length=64), nullable=False),
        sa.Column("query", sa.Text(), nullable=False),
        sa.Column("normalized_query", sa.Text(), nullable=False),
        sa.Column("query_type", sa.String(length=32), nullable=False),
        sa.Column("expanded_queries", JSON_, nullable=False),
        sa.Column("axes", JSON_, nullable=False),
        sa.Column("namespaces", JSON_, nullable=False),
        sa.Column("stage", sa.Integer(), nullable=False),
        sa.Column("min_score", sa.Float(), nullable=True),
        sa.Column("top_k", sa.Integer(), nullable=True),
        sa.Column("top_doc_ids", JSON_, nullable=False),
        sa.Column("top_titles", JSON_, nullable=False),
        sa.Column("top_scores", JSON_, nullable=False),
        sa.Column("hit_count", sa.Integer(), nullable=False),
        sa.Column("zero_hit", sa.Boolean(), nullable=False),
        sa.Column("timings_ms", JSON_, nullable=False),
        sa.Column("extra", JSON_, nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_search_events")),
        sa.UniqueConstraint("query_id", name=op.f("uq_search_events_query_id")),
    )
    with op.batch_alter_table("search_events", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_search_events_team_created_at"), ["team", "created_at"], unique=False
        )

    op.create_table(
        "unanswered",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("asked_at", TS, nullable=False),
        sa.Column("team", sa.String(length=64), nullable=False),
        sa.Column("collection", sa.String(length=64), nullable=False),
        sa.Column("question", sa.Text(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("tools", JSON_, nullable=False),
        sa.Column("resolved_at", TS, nullable=True),
        sa.Column("resolution", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_unanswered")),
    )
    with op.batch_alter_table("unanswered", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_unanswered_team_asked_at"), ["team", "asked_at"], unique=False
        )

    op.create_table(
        "feedback",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("query_id", sa.String(length=64), nullable=False),
        sa.Column("team", sa.String(length=64), nullable=False),
        sa.Column("rating", sa.SmallInteger(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("client", sa.String(length=128), nullable=False),
        sa.Column("meta", JSON_, nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.CheckConstraint("rating IN (-1, 1)", name=op.f("ck_feedback_rating")),
        sa.ForeignKeyConstraint(
            ["query_id"],
            ["search_events.query_id"],
            name=op.f("fk_feedback_query_id_search_events"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_feedback")),
    )
    with op.batch_alter_table("feedback", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_feedback_client_created_at"), ["client", "created_at"], unique=False
        )
        batch_op.create_index(batch_op.f("ix_feedback_query_id"), ["query_id"], unique=False)
        batch_op.create_index(
            batch_op.f("ix_feedback_team_created_at"), ["team", "created_at"], unique=False
        )

    op.create_table(
        "messages",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("conversation_id", sa.String(length=64), nullable=False),
        sa.Column("team", sa.String(length=64), nullable=False),
        sa.Column("role", sa.String(length=16), nullable=False),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("data", JSON_, nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.ForeignKeyConstraint(
            ["conversation_id"],
            ["conversations.id"],
            name=op.f("fk_messages_conversation_id_conversations"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_messages")),
    )
    with op.batch_alter_table("messages", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_messages_team_conversation_id_id"),
            ["team", "conversation_id", "id"],
            unique=False,
        )


def downgrade() -> None:
    with op.batch_alter_table("messages", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_messages_team_conversation_id_id"))

    op.drop_table("messages")
    with op.batch_alter_table("feedback", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_feedback_team_created_at"))
        batch_op.drop_index(batch_op.f("ix_feedback_query_id"))
        batch_op.drop_index(batch_op.f("ix_feedback_client_created_at"))

    op.drop_table("feedback")
    with op.batch_alter_table("unanswered", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_unanswered_team_asked_at"))

    op.drop_table("unanswered")
    with op.batch_alter_table("search_events", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_search_events_team_created_at"))

    op.drop_table("search_events")
    with op.batch_alter_table("jobs", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_jobs_team_created_at"))
        batch_op.drop_index(batch_op.f("ix_jobs_status"))

    op.drop_table("jobs")
    with op.batch_alter_table("conversations", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_conversations_team_updated_at"))

    op.drop_table("conversations")
    op.drop_table("appdb_settings")
    with op.batch_alter_table("api_keys", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_api_keys_team"))

    op.drop_table("api_keys")

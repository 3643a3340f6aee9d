"""Scope decided on what DuckDB binds: the tables a query really reads, from its plan.

The sqlglot check (``validate.py``) reads names in the text; DuckDB decides what a name means.
They can disagree: in ``WITH RECURSIVE daily_reports AS (SELECT * FROM daily_reports) …`` the
inner name is not the CTE but the real table, and ``pg_settings`` or ``duckdb_tables`` named the
same way reach DuckDB's catalogs (paths under the home directory, every table's DDL). So before a
tool's query runs, the engine asks DuckDB for the query's *unoptimized logical plan* (``EXPLAIN
(FORMAT JSON)`` with ``explain_output = 'all'``; the optimized plan can fold a read away, e.g.
``count(*)`` answered from statistics) and walks it:

- every ``SEQ_SCAN`` must read a table of the tool's scope (``memory.main.<name>``);
- every other operator must be a relational one from :data:`RELATIONAL` — a table function or a
  catalog (``DUCKDB_SETTINGS``, ``DUCKDB_TABLES``, ``READ_CSV`` …) is not, and neither is any
  operator this list does not know: unknown means refused. ``CHUNK_GET`` is not on it: it is
  data the binder already fetched (``FROM (DESCRIBE daily_reports)`` binds to a CHUNK_GET of the
  hidden table's columns), and no query an agent needs produces one.

A tool's query also runs in a database that holds only its tables (``engine.py``), so this check
is the second wall, not the only one; it is the one that keeps the catalogs and settings out.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterator
from typing import Any

SCHEMA_PREFIX = "memory.main."
# fmt: off
RELATIONAL = frozenset({
    "PROJECTION", "FILTER", "AGGREGATE", "WINDOW", "DISTINCT", "ORDER_BY", "TOP_N", "LIMIT",
    "SAMPLE", "UNNEST", "PIVOT", "UNION", "EXCEPT", "INTERSECT", "CROSS_PRODUCT",
    "COMPARISON_JOIN", "ANY_JOIN", "ASOF_JOIN", "POSITIONAL_JOIN", "DEPENDENT_JOIN",
    "DELIM_JOIN", "DELIM_GET", "EXPRESSION_GET", "DUMMY_SCAN", "EMPTY_RESULT",
    "CTE", "MATERIALIZED_CTE", "REC_CTE", "RECURSIVE_CTE", "CTE_SCAN", "CTE_REF",
})
# fmt: on


class OutOfScope(Exception):
    """The plan reads something outside the tool's tables; ``reason`` is Japanese."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


def _nodes(plan: Any) -> Iterator[dict[str, Any]]:
    stack = list(plan) if isinstance(plan, list) else [plan]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            yield node
            stack.extend(node.get("children") or [])


def logical_plan(rows: list[tuple[Any, ...]]) -> Any:
    """The unoptimized logical plan from the rows of ``EXPLAIN (FORMAT JSON)``."""
    for kind, text in rows:
        if str(kind) == "logical_plan":
            return json.loads(text)
    raise OutOfScope("クエリの実行計画を確かめられません")


def check_plan(plan: Any, allowed: Collection[str]) -> frozenset[str]:
    """The scope's tables the plan reads; raises :class:`OutOfScope` for anything else."""
    scope = {t.lower() for t in allowed}
    used: set[str] = set()
    for node in _nodes(plan):
        name = str(node.get("name", "")).upper()
        if name == "SEQ_SCAN":
            info = node.get("extra_info") or {}
            table = str(info.get("Table", "")).lower()
            short = table.removeprefix(SCHEMA_PREFIX)
            if not table.startswith(SCHEMA_PREFIX) or short not in scope:
                raise OutOfScope(
                    f"テーブル「{short or '?'}」は使えません。"
                    f"使えるテーブル: {', '.join(sorted(scope)) or '(なし)'}"
                )
            used.add(short)
        elif name not in RELATIONAL:
            raise OutOfScope(
                f"{name.lower()} は使えません(登録済みのテーブル以外の情報・関数は読めません)"
            )
    return frozenset(used)

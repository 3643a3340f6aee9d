"""SQL validation by walking the sqlglot AST (DuckDB dialect) — never by grepping the text.

A query passes when it is exactly one query expression (SELECT, WITH … SELECT, UNION/INTERSECT/
EXCEPT) and, anywhere in its tree:

- no statement or clause that writes or changes state (INSERT/UPDATE/DELETE/MERGE, CREATE/DROP/
  ALTER, COPY, ATTACH/DETACH, INSTALL/LOAD, PRAGMA, SET, CALL, EXPORT, SELECT … INTO, unparsed
  ``Command``s …);
- every table is a plain, unqualified name that is either registered for this tool or a CTE
  visible at that point as DuckDB resolves it (a CTE elsewhere, a later sibling, or a recursive
  CTE's name outside its recursive term cannot whitelist a hidden table or a catalog name); no
  table functions (``read_csv``, ``read_text``, ``glob``, ``query`` …) and no string
  or path tables (``FROM '/etc/passwd'``) — but a registered table's own file name
  (``FROM 'stores.csv'``, as the store-search design writes it) is an alias of that table: the
  tree is rewritten to the table's name (``FROM stores``) before anything runs;
- no function on the deny list of file, system, sleep and SQL-executing functions, nor of
  functions that change the connection's state for later queries (``setseed``);
- no non-ASCII character outside string literals and quoted identifiers (full-width look-alikes
  such as ``ＳＥＬＥＣＴ`` or ``ｒｅａｄ＿ｔｅｘｔ`` are rejected, not normalised: the SQL an agent
  wrote is either run as written or refused), and no control characters at all.

The LIMIT of the outermost query is added when absent and clamped when above ``max_rows``. The
SQL that runs is regenerated from the checked tree without comments, then checked once more.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

from tansaku.errors import TansakuError
from tansaku.tables import _deps

MAX_SQL_CHARS = 20_000

# Table functions are rejected by shape (a table that is not a plain name); these names are
# rejected wherever they appear, including as scalars. From duckdb_functions() in DuckDB 2.0 plus
# the common extensions (httpfs, sqlite, postgres, mysql, iceberg, delta, spatial, excel).
# fmt: off
DENIED_FUNCTIONS = frozenset({
    "glob", "query", "query_table", "sniff_csv", "checkpoint", "force_checkpoint",
    "getenv", "current_setting", "getvariable", "set_variable", "write_log", "sleep_ms",
    "pg_sleep", "json_execute_serialized_sql", "json_serialize_sql", "json_deserialize_sql",
    "json_serialize_plan", "parse_duckdb_log_message", "load_aws_credentials", "which_secret",
    "enable_logging", "disable_logging", "truncate_duckdb_logs", "enable_profiling",
    "disable_profiling", "nextval", "currval", "setval", "import_database", "copy_database",
    "export_database", "install", "load", "test_all_types", "test_vector_types", "repeat_row",
    "seq_scan", "summary", "st_read", "st_readosm", "st_read_meta", "st_write", "excel_scan",
    "http_get", "http_post", "create_external_resource", "register_external_resource",
    "register_external_resource_type", "deregister_external_resource",
    "destroy_external_resource", "python_map_function", "current_query",
    "setseed",  # seeds the connection's random(): later queries (another caller's) would repeat
})
DENIED_PREFIXES = (
    "read_", "write_", "pragma_", "duckdb_", "parquet_", "sqlite_", "postgres_", "mysql_",
    "iceberg_", "delta_", "arrow_", "pandas_", "python_", "http", "s3", "gcs", "azure",
    "ducklake_", "icu_calendar",
)
DENIED_SUFFIXES = ("_scan", "_secret", "_secrets", "_attach", "_query", "_execute")

# Statement and clause node types rejected anywhere in the tree (looked up by name, so a
# sqlglot version without one of them still works).
_STATEMENTS = (
    "Insert", "Update", "Delete", "Merge", "Create", "Drop", "Alter", "Command", "Copy",
    "Attach", "Detach", "Use", "Pragma", "Set", "Transaction", "Commit", "Rollback", "LoadData",
    "Install", "Into", "Summarize", "Describe", "Show", "TruncateTable", "Analyze", "Cache",
    "Uncache", "Refresh", "Grant", "Revoke", "Comment", "Export", "Returning", "Kill", "Declare",
    "Execute", "ReadCSV", "ReadParquet", "Lock",
)
_LITERAL_TOKENS = frozenset({
    "STRING", "IDENTIFIER", "BIT_STRING", "HEX_STRING", "BYTE_STRING", "NATIONAL_STRING",
    "NATIONAL_RAW_STRING", "RAW_STRING", "HEREDOC_STRING", "UNICODE_STRING",
})
# fmt: on
_ALLOWED_CONTROL = frozenset("\t\n\r")


class QueryRejected(TansakuError):
    """The SQL is not a single safe SELECT over registered tables. ``reason`` is Japanese."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


@dataclass(frozen=True)
class CheckedSql:
    sql: str
    """The SQL to run: regenerated from the checked tree, comments dropped, LIMIT enforced."""
    tables: frozenset[str]
    """Registered tables the query reads."""
    limit: int


class _CommandFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return "Falling back to parsing as a 'Command'" not in record.getMessage()


_FILTER = _CommandFilter()


def _quiet_sqlglot() -> None:
    logger = logging.getLogger("sqlglot")
    if _FILTER not in logger.filters:
        logger.addFilter(_FILTER)


def _check_characters(sql: str, sqlglot: Any) -> None:
    bad = sorted({c for c in sql if (ord(c) < 32 and c not in _ALLOWED_CONTROL) or ord(c) == 127})
    if bad:
        codes = ", ".join(f"U+{ord(c):04X}" for c in bad)
        raise QueryRejected(f"制御文字({codes})は使えません")
    try:
        tokens = sqlglot.Dialect.get_or_raise("duckdb").tokenize(sql)
    except sqlglot.errors.TokenError as e:
        raise QueryRejected(f"SQLを字句解析できません: {str(e).splitlines()[0]}") from None
    for token in tokens:
        if token.token_type.name in _LITERAL_TOKENS or token.text.isascii():
            continue
        raise QueryRejected(
            f"「{token.text}」に全角文字・非ASCII文字が含まれています。日本語などは文字列('...')か"
            '二重引用符で囲んだ識別子("...")の中にだけ書いてください'
        )


def _parse(sql: str, sqlglot: Any) -> Any:
    try:
        statements = [s for s in sqlglot.parse(sql, read="duckdb") if s is not None]
    except sqlglot.errors.ParseError as e:
        first = str(e).splitlines()[0] if str(e) else "構文エラー"
        raise QueryRejected(f"SQLを解析できません: {first}") from None
    except RecursionError:
        raise QueryRejected("SQLの入れ子が深すぎます") from None
    if len(statements) != 1:
        raise QueryRejected(
            f"SQLは1回に1文だけです({len(statements)}文が渡されました)。セミコロンで複数の文をつなげないでください"
        )
    return statements[0]


def _func_names(node: Any, exp: Any) -> set[str]:
    if isinstance(node, exp.Anonymous):
        return {str(node.name).lower()}
    names = {n.lower() for n in type(node).sql_names()}
    names.add(type(node).__name__.lower())
    return names


def _denied(name: str) -> bool:
    return (
        name in DENIED_FUNCTIONS
        or name.startswith(DENIED_PREFIXES)
        or name.endswith(DENIED_SUFFIXES)
    )


def _with_of(node: Any, exp: Any) -> Any:
    value = node.args.get("with_") or node.args.get("with")
    return value if isinstance(value, exp.With) else None


def _recursive_term(cte: Any, exp: Any) -> Any:
    """The part of a recursive CTE's body where its own name means the CTE: the right operand of
    a top-level UNION [ALL] (DuckDB binds the name anywhere else — the anchor, a lone SELECT, an
    INTERSECT — to a real table of that name)."""
    body = cte.this
    while isinstance(body, exp.Subquery):
        body = body.this
    return body.expression if isinstance(body, exp.Union) else None


def _visible_ctes(table: Any, exp: Any) -> set[str]:
    """CTE names DuckDB resolves at ``table``: earlier siblings inside a WITH (RECURSIVE or not),
    a recursive CTE's own name only inside its recursive term, every CTE of a WITH in its body.
    A name not visible here is a real table (or catalog) to DuckDB, so it is checked as one."""
    visible: set[str] = set()
    path: list[Any] = [table]
    child, parent = table, table.parent
    while parent is not None:
        if isinstance(parent, exp.With) and isinstance(child, exp.CTE):
            ctes = list(parent.expressions)
            index = next(i for i, c in enumerate(ctes) if c is child)
            visible.update(c.alias.lower() for c in ctes[:index])
            term = _recursive_term(child, exp) if parent.args.get("recursive") else None
            if term is not None and any(node is term for node in path):
                visible.add(child.alias.lower())
        else:
            with_ = _with_of(parent, exp)
            if with_ is not None and child is not with_:
                visible.update(c.alias.lower() for c in with_.expressions)
        path.append(parent)
        child, parent = parent, parent.parent
    return visible


def _check_table(
    node: Any, exp: Any, allowed: frozenset[str], used: set[str], aliases: dict[str, str]
) -> None:
    if not isinstance(node.this, exp.Identifier):
        fn = node.this.sql(dialect="duckdb").lower() if node.this is not None else "?"
        raise QueryRejected(
            f"テーブル関数({fn.split('(')[0]})は使えません。FROM句には登録済みのテーブル名だけを書いてください"
        )
    name = str(node.name)
    if node.args.get("db") or node.args.get("catalog"):
        raise QueryRejected(
            f"スキーマやデータベースで修飾したテーブル名({node.sql(dialect='duckdb')})は使えません"
        )
    lowered = name.lower()
    if lowered in _visible_ctes(node, exp):
        return
    if lowered in allowed:
        used.add(lowered)
        return
    if aliases.get(lowered) in allowed:  # 'stores.csv': the file of a registered table
        node.set("this", exp.to_identifier(aliases[lowered]))
        used.add(aliases[lowered])
        return
    if any(ch in name for ch in "/\\.:~") or name.endswith(".csv"):
        raise QueryRejected(
            f"ファイルパスやファイル名({name})はテーブルとして使えません。"
            f"テーブル名を書いてください: {', '.join(sorted(allowed))}"
        )
    raise QueryRejected(
        f"テーブル「{name}」は使えません。使えるテーブル: {', '.join(sorted(allowed)) or '(なし)'}"
    )


def _kind(node: Any, exp: Any) -> str:
    if isinstance(node, exp.Command):
        return str(node.this).split()[0].upper() if node.this else "COMMAND"
    if isinstance(node, exp.Into):
        return "SELECT … INTO"
    name = type(node).__name__
    return {"TruncateTable": "TRUNCATE", "Column": "不明なキーワード"}.get(name, name.upper())


def _inspect(
    tree: Any, exp: Any, allowed: frozenset[str], aliases: dict[str, str] | None = None
) -> set[str]:
    root = tree
    if not isinstance(root, exp.Select | exp.SetOperation):
        raise QueryRejected(f"SELECT文以外({_kind(root, exp)})は実行できません")
    forbidden = tuple(getattr(exp, n) for n in _STATEMENTS if hasattr(exp, n))
    used: set[str] = set()
    for node in tree.walk():
        if isinstance(node, forbidden):
            raise QueryRejected(
                f"{_kind(node, exp)} は使えません。データの変更や外部アクセスを伴う操作は禁止です"
            )
        if isinstance(node, exp.Table):
            _check_table(node, exp, allowed, used, aliases or {})
        elif isinstance(node, exp.Func):
            for name in _func_names(node, exp):
                if _denied(name):
                    raise QueryRejected(
                        f"関数 {name} は使えません"
                        "(ファイル・システム情報へのアクセスや副作用のある関数は禁止です)"
                    )
    return used


def _limit_value(limit: Any, exp: Any) -> int | None:
    value = limit.expression if limit is not None else None
    extra = [k for k, v in limit.args.items() if k != "expression" and v] if limit else []
    if isinstance(value, exp.Literal) and value.is_int and not extra:
        return int(value.name)
    return None


def _enforce_limit(tree: Any, exp: Any, max_rows: int) -> tuple[Any, int]:
    limit = tree.args.get("limit")
    current = _limit_value(limit, exp) if limit is not None else None
    if current is not None and 0 <= current <= max_rows:
        return tree, current
    tree.set("limit", exp.Limit(expression=exp.Literal.number(max_rows)))
    return tree, max_rows


def _unwrap(tree: Any, exp: Any) -> Any:
    while isinstance(tree, exp.Subquery) and set(k for k, v in tree.args.items() if v) == {"this"}:
        tree = tree.this
    return tree


def file_aliases(files: Mapping[str, str]) -> dict[str, str]:
    """``{file name: table}`` of registered tables (``{"stores": "tables/stores.csv"}`` gives
    ``{"stores.csv": "stores"}``), lowercased; a file name two tables share names neither."""
    names: dict[str, list[str]] = {}
    for table, path in files.items():
        names.setdefault(PurePath(path).name.lower(), []).append(table.lower())
    return {f: tables[0] for f, tables in names.items() if len(tables) == 1 and f}


def check_sql(
    sql: str,
    *,
    allowed_tables: Collection[str],
    max_rows: int,
    table_files: Mapping[str, str] | None = None,
) -> CheckedSql:
    """Validate ``sql`` for a tool that may read ``allowed_tables``; raise ``QueryRejected``.
    ``table_files`` (table → its file) lets a query name a table by its file name."""
    if not isinstance(sql, str) or not sql.strip():
        raise QueryRejected("SQLが空です。SELECT文を1つ指定してください")
    if len(sql) > MAX_SQL_CHARS:
        raise QueryRejected(f"SQLが長すぎます({len(sql)}文字、上限 {MAX_SQL_CHARS}文字)")
    sqlglot = _deps.sqlglot()
    exp = sqlglot.exp
    _quiet_sqlglot()
    allowed = frozenset(t.lower() for t in allowed_tables)
    aliases = file_aliases(table_files or {})
    _check_characters(sql, sqlglot)
    tree = _unwrap(_parse(sql, sqlglot), exp)
    _inspect(tree, exp, allowed, aliases)
    tree, limit = _enforce_limit(tree, exp, max_rows)
    try:
        final = tree.sql(dialect="duckdb", comments=False)
    except Exception as e:  # sqlglot cannot render what it parsed: refuse rather than guess
        raise QueryRejected(f"SQLを安全な形に変換できません: {e}") from None
    # What runs is checked once more, so the executed text and the checked tree cannot diverge.
    used = _inspect(_unwrap(_parse(final, sqlglot), exp), exp, allowed)
    return CheckedSql(sql=final, tables=frozenset(used), limit=limit)

"""The Japanese tool description an LLM reads, generated from the registry.

Purpose, usage, rules (SELECT only, one statement, the row limit, the time limit, only these
tables, results cut when too large), every column
with its type, meaning and an example, and the example queries of each table. Nothing in it
depends on the data (no row counts, no value lists), so it does not change as the data grows.
"""

from __future__ import annotations

from tansaku.tables.registry import ColumnType, SandboxSettings, TableSpec

SQL_PARAMETER = "sql_query"
SQL_PARAMETER_DESCRIPTION = "実行するSQLクエリ(SELECT文1つ)"

BLOCKED = "INSERT/UPDATE/DELETE/CREATE/DROP/ALTER/COPY/ATTACH/INSTALL/LOAD/PRAGMA/SET/CALL/EXPORT"


def allowed_summary(tables: list[str] | tuple[str, ...]) -> str:
    """What is allowed, appended to every rejection so the agent can correct itself."""
    names = ", ".join(tables) or "(なし)"
    return (
        "使えるのは1つのSELECT文(WITH句・JOIN・UNION・集計・ウィンドウ関数・LIKE・JSON演算子も可)で、"
        f"FROM句には登録済みのテーブル({names})を名前で書いてください"
    )


def _column_line(name: str, type_: ColumnType, description: str, example: str) -> str:
    line = f"- {name} ({type_.value}): {description or '(説明なし)'}"
    if example:
        line += f"(例: {example})"
    return line


def _table_block(table: TableSpec) -> list[str]:
    head = f"テーブル名: {table.name}"
    if table.description:
        head += f"({table.description})"
    lines = [head, "カラム:"]
    if not table.columns:
        lines.append("- (列は宣言されていません。SELECT * で確認してください)")
    for c in table.columns:
        lines.append(_column_line(c.name, c.type, c.description, c.example))
    json_cols = [c.name for c in table.columns if c.type is ColumnType.JSON]
    if json_cols:
        first = json_cols[0]
        lines.append(
            f"- JSON形式の列({', '.join(json_cols)})は文字列として格納されています。"
            f"LIKE による部分一致か ->> 演算子(例: {first}->>'$.キー名')で検索できます。"
            "関数の引数の中では -> ではなく"
            f" json_extract_string({first}, '$.キー名') を使ってください。"
            "結果ではJSONとして返ります"
        )
    if any(c.type in (ColumnType.TEXT, ColumnType.JSON) for c in table.columns):
        lines.append(
            "- 文字列の空の値は空文字('')です(NULLではありません)。値の有無は列 != '' で判定します"
        )
    return lines


def tool_description(
    name: str, purpose: str, tables: tuple[TableSpec, ...], settings: SandboxSettings
) -> str:
    n = settings.max_rows
    example_table = tables[0].name if tables else "テーブル名"
    example_file = tables[0].path.name if tables else "ファイル名.csv"
    lines = [
        f"{name}: {purpose}".rstrip(),
        "",
        "【使用方法】",
        f"- SQLクエリ(SELECT文)を1つ {SQL_PARAMETER} に指定して検索します",
        f"- FROM句にはテーブル名をそのまま書いてください(例: FROM {example_table})。"
        f"登録済みのファイル名('{example_file}')もそのテーブルを指しますが、"
        "ほかのファイル名・パスや read_csv などのテーブル関数は使えません",
        "- WITH句・JOIN・UNION・GROUP BY・ウィンドウ関数・LIKE/ILIKE・JSON演算子(->>)が使えます",
        "",
        "【重要な制約】",
        f"- SELECT文のみ使用可能です({BLOCKED} などは拒否されます)",
        "- 1回の呼び出しで1文だけです(セミコロンで複数の文をつなげないでください)",
        f"- 検索結果は最大{n}件までに制限されます。"
        f"LIMIT句がない場合は自動的に LIMIT {n} が追加され、"
        f"{n}より大きいLIMITは{n}に切り詰められます",
        "- 日本語などの全角文字は文字列('...')か"
        '二重引用符で囲んだ識別子("...")の中にだけ書いてください',
        f"- 実行時間が{settings.timeout_seconds:g}秒を超えるクエリは中断されます",
        "- 該当する行がない場合は count が 0 になり、message に理由が入ります",
        "- 読めるのは下のテーブルだけです(システムカタログ・設定・ファイルは読めません)",
        "- 結果が大きすぎる場合(長い文字列・大きなリスト・多くの列)は一部が省略され、"
        "truncated と notice が付きます。必要な列だけを選ぶか、集計してから取り出してください",
        "",
        "【データスキーマ】",
    ]
    for i, table in enumerate(tables):
        if i:
            lines.append("")
        lines += _table_block(table)
    examples = [e for t in tables for e in t.examples]
    if examples:
        lines += ["", "【検索例】"]
        for i, e in enumerate(examples, start=1):
            lines.append(f"{i}. {e.question}:")
            lines += [f"   {part}" for part in e.sql.strip().splitlines()]
    return "\n".join(lines)

"""The tables config (``tables.toml``) written back as TOML text: what ``tansaku tables add``
and ``infer`` save. Paths under the config's folder are written relative to it."""

from __future__ import annotations

from pathlib import Path

from tansaku.files import toml_value
from tansaku.tables.registry import SandboxSettings, SqlToolConfig, TablesConfig, TableSpec


def _rel(path: Path, base: Path) -> str:
    try:
        return path.relative_to(base).as_posix()
    except ValueError:
        return str(path)


def tool_lines(tool: SqlToolConfig) -> list[str]:
    """One ``[[tools]]`` entry as TOML lines."""
    return [
        "[[tools]]",
        f"name = {toml_value(tool.name)}",
        f"purpose = {toml_value(tool.purpose)}",
        f"tables = {toml_value(tool.tables)}",
    ]


def table_lines(table: TableSpec, base_dir: Path) -> list[str]:
    """One ``[[tables]]`` entry (its columns and examples) as TOML lines; a path under
    ``base_dir`` is written relative to it."""
    lines = [
        "[[tables]]",
        f"name = {toml_value(table.name)}",
        f"path = {toml_value(_rel(table.path, base_dir.resolve()))}",
        f"description = {toml_value(table.description)}",
        f"no_rows_message = {toml_value(table.no_rows_message)}",
    ]
    for c in table.columns:
        lines += ["", "[[tables.columns]]", f"name = {toml_value(c.name)}"]
        if c.header:
            lines.append(f"header = {toml_value(c.header)}")
        lines += [
            f"type = {toml_value(c.type.value)}",
            f"description = {toml_value(c.description)}",
            f"example = {toml_value(c.example)}",
        ]
    for e in table.examples:
        lines += [
            "",
            "[[tables.examples]]",
            f"question = {toml_value(e.question)}",
            f"sql = {toml_value(e.sql)}",
        ]
    return lines


def dump_tables_config(config: TablesConfig, base_dir: Path) -> str:
    """TOML text for ``config``; paths under ``base_dir`` are written relative to it."""
    lines = ["# tansaku のテーブル設定 (docs/tables.md)", "", "[sandbox]"]
    for key in SandboxSettings.__dataclass_fields__:
        lines.append(f"{key} = {toml_value(getattr(config.sandbox, key))}")
    for tool in config.tools:
        lines += ["", *tool_lines(tool)]
    for t in config.tables:
        lines += ["", *table_lines(t, base_dir)]
    return "\n".join(lines) + "\n"


def write_tables_config(config: TablesConfig, path: Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dump_tables_config(config, path.parent), encoding="utf-8")
    return path

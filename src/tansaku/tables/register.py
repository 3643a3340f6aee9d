"""Adding one table (and optionally its SQL tool) to a workspace's ``tables.toml``.

The entry is appended to the file as TOML text, so what the user wrote there — comments, order,
other tables — stays as it was. Before the file is replaced (in one rename) the new table is
loaded from its file the way the sandbox will load it, and the whole new file is read back as a
registry: a name already taken, a file that cannot be loaded or an entry that would make the
registry invalid leaves ``tables.toml`` untouched.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from tansaku.errors import ConfigError
from tansaku.files import atomic_write
from tansaku.tables.config_toml import table_lines, tool_lines
from tansaku.tables.engine import probe_table
from tansaku.tables.registry import (
    SqlToolConfig,
    TablesConfig,
    TableSpec,
    load_tables_config,
    parse_tables_config,
)

NEW_FILE_HEAD = "# tansaku のテーブル設定 (docs/tables.md)\n"


class NameTaken(ConfigError):
    """A table or tool of that name is already registered."""


@dataclass(frozen=True)
class Added:
    config: TablesConfig
    """The registry after the addition."""
    rows: int
    """Rows the new table holds."""


def add_table(tables_file: Path, spec: TableSpec, *, tool: SqlToolConfig | None = None) -> Added:
    """Register ``spec`` (and ``tool``) in ``tables_file`` (created when absent). ``NameTaken``
    for a name already registered, ``LoadError`` when the file cannot be loaded as declared,
    ``ConfigError`` when the entry is invalid; the file is unchanged then."""
    tables_file = Path(tables_file)
    existing = load_tables_config(tables_file) if tables_file.is_file() else TablesConfig()
    if spec.name in existing.table_names:
        raise NameTaken(
            f"テーブル「{spec.name}」はすでに登録されています。"
            "別の名前を --name で指定するか、tables.toml の既存の項目を編集してください"
        )
    if tool is not None and tool.name in {t.name for t in existing.tools}:
        raise NameTaken(
            f"SQLツール「{tool.name}」はすでにあります。別の名前を --tool で指定してください"
        )
    rows = probe_table(spec)
    base = tables_file.parent.resolve()
    text = tables_file.read_text(encoding="utf-8") if tables_file.is_file() else NEW_FILE_HEAD
    lines = table_lines(spec, base)
    if tool is not None:
        lines += ["", *tool_lines(tool)]
    text = text.rstrip("\n") + "\n\n" + "\n".join(lines) + "\n"
    try:
        config = parse_tables_config(tomllib.loads(text), base)
    except tomllib.TOMLDecodeError as e:  # our own text: a bug, but never write a broken file
        raise ConfigError(f"tables.toml に追記できません: {e}") from None
    _replace(tables_file, text)
    return Added(config=config, rows=rows)


def _replace(path: Path, text: str) -> None:
    """``text`` as ``path``, keeping the file's permissions (0644 for a new one)."""
    atomic_write(path, text, mode=path.stat().st_mode & 0o777 if path.exists() else 0o644)

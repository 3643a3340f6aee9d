"""A CSV handed over by a person (the upload page) registered as a table, with the inferred
column types, descriptions and examples they corrected.

:func:`inferred_dict` is the entry :func:`tansaku.tables.infer.infer_table` suggests, as JSON
for a form; :func:`register_upload` copies the file into the workspace's ``tables/`` folder
under the table's name, applies the corrections and registers it (``tables.toml``, through
:func:`tansaku.tables.register.add_table`: a name taken or a file that does not load as declared
changes nothing and leaves no copy behind).
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from tansaku.errors import ConfigError
from tansaku.tables.infer import InferredTable, infer_table
from tansaku.tables.register import Added, NameTaken, add_table
from tansaku.tables.registry import ColumnType, SqlToolConfig, TableSpec, check_table_name
from tansaku.workspace import Workspace

SUFFIXES = (".csv", ".tsv")
TEXT_LIMIT = 500


def inferred_dict(inferred: InferredTable) -> dict[str, Any]:
    """The inferred entry as the upload page edits it."""
    spec = inferred.spec
    return {
        "name": spec.name,
        "rows": inferred.rows,
        "description": spec.description,
        "columns": [
            {
                "name": c.name,
                "header": c.source_name,
                "type": c.type.value,
                "description": c.description,
                "example": c.example,
            }
            for c in spec.columns
        ],
        "types": [t.value for t in ColumnType],
    }


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str) or len(value) > TEXT_LIMIT:
        raise ConfigError(f"{what}は{TEXT_LIMIT}文字までの文字列にしてください")
    return value.strip()


def _corrected(spec: TableSpec, entry: Mapping[str, Any]) -> TableSpec:
    """``spec`` with the description and the columns' type, description and example the
    person set (columns are matched by name; one the file does not have is an error)."""
    columns = {c.name: c for c in spec.columns}
    for given in entry.get("columns") or []:
        if not isinstance(given, Mapping) or given.get("name") not in columns:
            name = given.get("name") if isinstance(given, Mapping) else given
            raise ConfigError(f"列「{name}」はファイルにありません")
        col = columns[given["name"]]
        columns[col.name] = replace(
            col,
            type=ColumnType.from_str(given.get("type", col.type.value)),
            description=_text(given.get("description", col.description), "列の説明"),
            example=_text(given.get("example", col.example), "列の例"),
        )
    description = _text(entry.get("description", spec.description), "表の説明")
    return replace(spec, description=description, columns=tuple(columns.values()))


def register_upload(
    workspace: Workspace,
    src: Path,
    filename: str,
    entry: Mapping[str, Any],
    *,
    tool: bool = True,
) -> Added:
    """Register the uploaded ``src`` (named ``filename`` by its sender) as table
    ``entry["name"]`` with the corrections of ``entry``; ``tool``: also an SQL tool
    ``search_<name>`` that reads only it, so the agent can query it."""
    name = check_table_name(str(entry.get("name") or ""))
    suffix = Path(filename).suffix.lower()
    if suffix not in SUFFIXES:
        raise ConfigError(f"表として登録できるのは CSV と TSV です({', '.join(SUFFIXES)})")
    dest = workspace.tables_dir / f"{name}{suffix}"
    if dest.exists():
        raise NameTaken(f"テーブル「{name}」のファイルは既にあります。別の名前にしてください")
    workspace.tables_dir.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dest)
    try:
        spec = _corrected(infer_table(dest, name=name).spec, entry)
        config = None
        if tool:
            purpose = f"{spec.description or name} をSQLクエリで検索します。"
            config = SqlToolConfig(name=f"search_{name}", purpose=purpose, tables=(name,))
        return add_table(workspace.tables_file, spec, tool=config)
    except BaseException:
        dest.unlink(missing_ok=True)
        raise


__all__ = ["inferred_dict", "register_upload"]

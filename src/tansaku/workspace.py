"""The workspace: one folder holding collections, caches, tables and logs.

``TANSAKU_HOME`` selects it (default ``./.tansaku``). Layout::

    <home>/
      collections/<name>/config.toml   collection config (axes, fusion, ingest mapping)
      collections/<name>/CURRENT       the committed generation (see
      tansaku.backends.embedded.generations)
      collections/<name>/gens/<gen>/   shard/, units/ (qdrant-edge), state.json (BM25 stats)
      cache/embeddings.sqlite          (model, sha256(text)) -> vector
      tables.toml, tables/             registered CSV/Parquet tables (tansaku.tables)
      tables.reload.json               tables asked to reload by `tansaku tables reload`
      logs/                            search events and other JSON-line logs
      logs/sql-audit.jsonl             every query a SQL tool ran or refused (tansaku.tables)
"""

from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tansaku.errors import ConfigError

ENV_HOME = "TANSAKU_HOME"
DEFAULT_HOME = ".tansaku"
DEFAULT_TEAM = "default"

_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_\-]{0,63}$")


def validate_name(value: str, what: str = "コレクション名") -> str:
    """Collection and team names are folder names and payload values: keep them plain."""
    if not _NAME_RE.match(value or ""):
        raise ConfigError(
            f"{what}「{value}」は使えません。"
            "英数字で始まり、英数字・_・- のみ、64文字以内にしてください"
        )
    return value


@dataclass(frozen=True)
class Workspace:
    home: Path

    @classmethod
    def from_env(cls, home: str | Path | None = None) -> Workspace:
        """``home`` if given, else ``$TANSAKU_HOME``, else ``./.tansaku``."""
        raw = home if home is not None else os.environ.get(ENV_HOME) or DEFAULT_HOME
        return cls(Path(raw).expanduser().resolve())

    @property
    def collections_dir(self) -> Path:
        return self.home / "collections"

    def collection_dir(self, name: str) -> Path:
        return self.collections_dir / validate_name(name)

    @property
    def cache_dir(self) -> Path:
        return self.home / "cache"

    @property
    def logs_dir(self) -> Path:
        return self.home / "logs"

    @property
    def sql_audit_file(self) -> Path:
        """The SQL tools' audit log: a JSON line per query run or refused."""
        return self.logs_dir / "sql-audit.jsonl"

    @property
    def tables_file(self) -> Path:
        return self.home / "tables.toml"

    @property
    def tables_dir(self) -> Path:
        return self.home / "tables"

    def ensure(self) -> Workspace:
        for d in (self.collections_dir, self.cache_dir, self.logs_dir):
            d.mkdir(parents=True, exist_ok=True)
        return self

    def collection_names(self) -> list[str]:
        if not self.collections_dir.is_dir():
            return []
        return sorted(
            p.name for p in self.collections_dir.iterdir() if (p / "config.toml").is_file()
        )


SETTINGS_FILE = "tansaku.toml"


def settings_table(home: Path, name: str) -> Any:
    """The ``[name]`` table of the workspace's ``tansaku.toml`` as parsed (``{}`` without the
    file or the table), read at every call; the caller checks its shape and keys. Invalid TOML
    is a :class:`ConfigError` naming the file."""
    path = home / SETTINGS_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except (FileNotFoundError, NotADirectoryError):
        return {}
    try:
        return tomllib.loads(text).get(name, {})
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} の TOML が不正です: {exc}") from None

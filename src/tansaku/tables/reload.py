"""Reloading tables: what a reload reports, and the file through which another process asks
for one.

A running ``TableDatabase`` (a server, an MCP server, a chat) reloads a table before a query
when the table's file changed (``sources.py``), or when ``tansaku tables reload`` asked for it
by writing ``tables.reload.json`` beside ``tables.toml``::

    {"stores": "1764720000000000000-4242"}      # table → a token that changes at each request

Each process remembers the tokens it has seen and reloads a table whose token changed, so a
request reaches every running process once, whether or not the file's size or time changed.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from tansaku.files import atomic_write, read_json_object

REQUESTS_FILE = "tables.reload.json"
KEPT = "前に読み込んだ内容のまま使います"


@dataclass(frozen=True)
class TableReload:
    """One table's reload: its rows now, or why its old rows are still served."""

    name: str
    reloaded: bool
    rows: int | None = None
    error: str | None = None
    """Japanese: why the file could not be read (the old rows are kept)."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class ReloadReport:
    tables: tuple[TableReload, ...]

    @property
    def ok(self) -> bool:
        return all(t.reloaded for t in self.tables)

    @property
    def failed(self) -> tuple[TableReload, ...]:
        return tuple(t for t in self.tables if not t.reloaded)

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "tables": [t.to_dict() for t in self.tables]}


def kept_message(reason: str) -> str:
    """A load failure as a reload reports it: the reason, and that the old rows stay."""
    return f"{reason.rstrip('。. ')}。{KEPT}"


def requests_file(tables_toml: Path) -> Path:
    return tables_toml.with_name(REQUESTS_FILE)


def file_signature(path: Path) -> tuple[int, int, int] | None:
    """``(mtime_ns, size, inode)`` of ``path``, None when it cannot be read."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def _read(path: Path) -> dict[str, str]:
    return {str(k): str(v) for k, v in read_json_object(path).items()}


def request_reload(tables_toml: Path, names: Iterable[str]) -> Path:
    """Ask every process serving ``tables_toml`` to reload ``names`` before its next query.
    The file is replaced in one rename, so a reader never sees half of it."""
    path = requests_file(tables_toml)
    tokens = _read(path)
    token = f"{time.time_ns()}-{os.getpid()}"
    tokens.update({name: token for name in names})
    atomic_write(path, json.dumps(tokens, ensure_ascii=False, sort_keys=True))
    return path


class ReloadRequests:
    """The requests in ``tables.reload.json`` this process has not acted on. Asking costs one
    ``stat`` unless the file changed."""

    def __init__(self, tables_toml: Path | None) -> None:
        path = requests_file(tables_toml) if tables_toml is not None else None
        self.path = path
        self._signature = file_signature(path) if path is not None else None
        self._latest = _read(path) if path is not None and self._signature else {}
        self._seen = dict(self._latest)  # requests older than this process are done

    def pending(self) -> set[str]:
        """Tables asked for since they were last reloaded here."""
        path = self.path
        if path is None:
            return set()
        signature = file_signature(path)
        if signature != self._signature:
            self._signature = signature
            self._latest = _read(path) if signature else {}
        return {n for n, token in self._latest.items() if self._seen.get(n) != token}

    def done(self, names: Iterable[str]) -> None:
        for name in names:
            if name in self._latest:
                self._seen[name] = self._latest[name]

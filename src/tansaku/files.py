"""Writing files: atomically, so that no reader and no crash ever sees half of one, and the
TOML text of config files; reading back a small JSON state file."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any


def read_json_object(path: Path) -> dict[str, Any]:
    """The JSON object ``path`` holds; ``{}`` when it is absent, unreadable or not an object."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def atomic_write(path: Path, text: str, *, mode: int | None = None) -> None:
    """Write ``text`` via a temp file beside ``path`` (flushed and synced) and rename it over
    ``path``: a crash never leaves a half-written file. ``mode``: the file's permissions
    (default: ``mkstemp``'s 0600)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def toml_value(v: Any) -> str:
    """``v`` (a bool, number, string, list or dict) as a TOML value; a string as a literal
    string (no escapes, easy to read) when it can be one, else a basic string."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return repr(v)
    if isinstance(v, str):
        if "'" not in v and v.isprintable():
            return f"'{v}'"
        return json.dumps(v, ensure_ascii=False)  # a valid TOML basic string
    if isinstance(v, list | tuple):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{toml_key(k)} = {toml_value(x)}" for k, x in v.items()) + " }"
    raise ValueError(f"TOML に書けない値です: {v!r}")


def toml_key(k: str) -> str:
    """``k`` as a TOML key: bare when it can be, else quoted."""
    return k if k.replace("_", "").replace("-", "").isalnum() and k.isascii() else json.dumps(k)


def dump_toml(data: dict[str, Any]) -> str:
    """A small TOML writer for config dicts (scalars, lists, inline tables, nested tables)."""
    lines: list[str] = []
    tables: list[tuple[str, dict[str, Any]]] = []
    arrays: list[tuple[str, list[dict[str, Any]]]] = []
    for k, v in data.items():
        if isinstance(v, dict):
            tables.append((k, v))
        elif isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
            arrays.append((k, v))
        else:
            lines.append(f"{toml_key(k)} = {toml_value(v)}")

    def emit_table(prefix: str, table: dict[str, Any]) -> None:
        scalars = {k: v for k, v in table.items() if not isinstance(v, dict)}
        subs = {k: v for k, v in table.items() if isinstance(v, dict)}
        lines.append("")
        lines.append(f"[{prefix}]")
        for k, v in scalars.items():
            lines.append(f"{toml_key(k)} = {toml_value(v)}")
        for k, v in subs.items():
            emit_table(f"{prefix}.{toml_key(k)}", v)

    for k, items in arrays:
        for item in items:
            lines.append("")
            lines.append(f"[[{toml_key(k)}]]")
            for ik, iv in item.items():
                lines.append(f"{toml_key(ik)} = {toml_value(iv)}")
    for k, v in tables:
        emit_table(toml_key(k), v)
    return "\n".join(lines).lstrip("\n") + "\n"

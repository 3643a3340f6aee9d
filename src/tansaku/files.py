"""Writing a file so that no reader and no crash ever sees half of it."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


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

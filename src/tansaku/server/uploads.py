"""Upload folders of ingest jobs: ``<workspace>/server/uploads/<random>/``, one per
``POST /api/ingest``, removed when its job ends.

A server killed with ``kill -9`` (or a power cut) never ends its jobs, so their folders would
stay forever. Each folder therefore records its owner — the server process, ``host:pid`` — in
``.owner``; when a server starts, :func:`sweep` removes the folders whose owner is gone: a dead
process on this host, or (another host sharing the workspace) a folder untouched for a day. A
folder without an owner (a crash between creating it and writing the owner) is removed once it
is older than ``orphan_after``. Jobs never outlive their server (its workers stop with it), so
a folder of a gone owner belongs to no running job.

Every uploaded file is saved under its base name only (:func:`safe_filename`: no directories,
no hidden names) and within its size limit (:func:`save_upload`).
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import socket
import time
import uuid
from pathlib import Path

from fastapi import UploadFile

from tansaku.server.errors import ApiError

log = logging.getLogger("tansaku.server")
OWNER_FILE = ".owner"
OTHER_HOST_AFTER_S = 24 * 3600.0
ORPHAN_AFTER_S = 600.0
CHUNK = 1024 * 1024
_UNSAFE_NAME = re.compile(r"[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def uploads_dir(home: Path) -> Path:
    return home / "server" / "uploads"


def this_owner() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def new_folder(home: Path) -> Path:
    """A new upload folder owned by this process."""
    folder = uploads_dir(home) / uuid.uuid4().hex
    folder.mkdir(parents=True)
    (folder / OWNER_FILE).write_text(this_owner(), encoding="utf-8")
    return folder


def safe_filename(raw: str | None) -> str:
    """The base name of an uploaded file, or a 400: no folders, no control characters, not
    hidden, at most 200 characters."""
    name = (raw or "").replace("\\", "/").rsplit("/", 1)[-1].strip()
    if not name or name in (".", "..") or name.startswith(".") or _UNSAFE_NAME.search(name):
        raise ApiError(
            400, "invalid_filename", f"ファイル名「{_UNSAFE_NAME.sub('?', raw or '')}」は使えません"
        )
    if len(name) > 200:
        raise ApiError(400, "invalid_filename", "ファイル名が長すぎます(200文字まで)")
    return name


def too_large(name: str, limit: int) -> ApiError:
    return ApiError(
        413, "file_too_large", f"ファイル「{name}」が大きすぎます(上限 {limit:,} バイト)"
    )


def save_upload(upload: UploadFile, target: Path, limit: int) -> int:
    """``upload`` written to ``target`` in chunks (a 413 past ``limit`` bytes); its size."""
    size = 0
    with target.open("wb") as fh:
        while chunk := upload.file.read(CHUNK):
            size += len(chunk)
            if size > limit:
                raise too_large(target.name, limit)
            fh.write(chunk)
    return size


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: alive
        return True
    return True


def _owner_gone(folder: Path, now: float, orphan_after: float) -> bool:
    try:
        owner = (folder / OWNER_FILE).read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return now - folder.stat().st_mtime > orphan_after
    host, _, pid = owner.rpartition(":")
    if host == socket.gethostname() and pid.isdigit():
        return not _pid_alive(int(pid))
    return now - (folder / OWNER_FILE).stat().st_mtime > OTHER_HOST_AFTER_S


def sweep(home: Path, *, orphan_after: float = ORPHAN_AFTER_S) -> list[str]:
    """Remove the upload folders whose owner is gone; the names of those removed."""
    root = uploads_dir(home)
    if not root.is_dir():
        return []
    now = time.time()
    removed = []
    for folder in sorted(root.iterdir()):
        try:
            if folder.is_symlink() or not folder.is_dir():
                continue
            if _owner_gone(folder, now, orphan_after):
                shutil.rmtree(folder, ignore_errors=True)
                removed.append(folder.name)
        except OSError:  # vanished meanwhile, or unreadable: leave it to the next start
            continue
    if removed:
        log.info("removed %d upload folders of jobs that no longer run", len(removed))
    return removed

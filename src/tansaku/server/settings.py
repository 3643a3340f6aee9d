"""Server settings: where it listens, what a request may carry, who may call it.

Frozen; ``create_app`` reads them once. The limits are per request: a JSON body (search, ask,
SQL, feedback) and a multipart upload (ingest) have separate caps, and an upload also caps the
number of files and the size of each file.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from tansaku.workspace import DEFAULT_TEAM

MiB = 1024 * 1024


def is_loopback(host: str) -> bool:
    """``127.0.0.1``, ``::1``, ``localhost`` (and the rest of 127/8); ``0.0.0.0`` is not."""
    name = host.strip().strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True, kw_only=True)
class ServerSettings:
    host: str = "127.0.0.1"
    """The address the server is bound to: loopback allows the keyless demo mode."""
    port: int = 8000
    default_team: str = DEFAULT_TEAM
    """The team of keyless requests on loopback while no API key exists."""
    max_json_bytes: int = 1 * MiB
    """Largest body of a JSON request (413 beyond)."""
    max_upload_bytes: int = 64 * MiB
    """Largest multipart upload (all files of one ``POST /api/ingest``)."""
    max_upload_file_bytes: int = 32 * MiB
    max_upload_files: int = 200
    cors_origins: tuple[str, ...] = ()
    """Origins allowed to call the API from a browser; none by default (CORS off)."""
    allowed_hosts: tuple[str, ...] = ()
    """Host names a keyless server accepts besides loopback (``127.0.0.1``, ``localhost``,
    ``[::1]``), any port: ``tansaku serve --allow-host NAME``. Other ``Host`` headers are 421
    while the server is keyless (DNS rebinding); a server that requires keys accepts any."""
    admin_teams: tuple[str, ...] = ()
    """Teams whose keys are admin keys (``tansaku serve --admin-team``): they read
    ``/metrics`` (counters over every team) and ``/healthz``'s workspace-wide counts."""
    job_memory_mb: int | None = None
    """Address-space limit of a job's worker process in MiB (None: ``TANSAKU_JOB_MEMORY_MB``,
    else 8,192; 0: none)."""
    job_timeout_s: float | None = None
    """Wall-clock limit of a job's worker process (None: ``TANSAKU_JOB_TIMEOUT_S``, else 6 h;
    0: none)."""
    ingest_workers: int = 2
    """Threads running ingest jobs; jobs of one collection always run one after another."""
    search_workers: int | None = None
    """Searches computed at once (``tansaku.server.compute``; None: ``TANSAKU_SEARCH_WORKERS``,
    else the cores the process may use)."""
    search_processes: int | None = None
    """Processes the searches run in (``tansaku.server.search_processes``; None:
    ``TANSAKU_SEARCH_PROCESSES``, else 0: in the server's own process). Used only when the
    app opens the workspace itself (``create_app(path)``), as the children open it the same way."""
    event_flush_s: float | None = None
    """How long a search's appdb row may wait to be written with others
    (``tansaku.server.event_writer``; None: ``TANSAKU_EVENT_FLUSH_S``, else 0.5; 0: each row
    is written with its search)."""

    @property
    def loopback(self) -> bool:
        return is_loopback(self.host)

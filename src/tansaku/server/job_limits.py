"""What one job's worker process may use: address space (``RLIMIT_AS``) and wall-clock time.

A hostile or just enormous upload must not take the machine with it: the worker of every job
(ingest, Q/A generation) runs under an address-space limit set in the child before it opens the
workspace, and the server stops a worker that runs past its time limit (``SIGTERM``, killed
after a grace period; nothing half written is kept, as with a cancel). Either way the job fails
with a Japanese message naming the limit, and the collection stays at its last commit.

Limits come from ``ServerSettings.job_memory_mb`` / ``job_timeout_s``, else the environment
(``TANSAKU_JOB_MEMORY_MB``, ``TANSAKU_JOB_TIMEOUT_S``), else the defaults (8,192 MB, 6 hours);
0 turns a limit off. Jobs run in threads (``TANSAKU_JOB_PROCESSES=0``) have no limits.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

ENV_MEMORY = "TANSAKU_JOB_MEMORY_MB"
ENV_TIMEOUT = "TANSAKU_JOB_TIMEOUT_S"
DEFAULT_MEMORY_MB = 8192
DEFAULT_TIMEOUT_S = 6 * 3600.0
MiB = 1024 * 1024


@dataclass(frozen=True)
class JobLimits:
    memory_mb: int = DEFAULT_MEMORY_MB
    """Address space of a worker process in MiB (0: no limit)."""
    timeout_s: float = DEFAULT_TIMEOUT_S
    """Wall-clock seconds of a worker process (0: no limit)."""


def _env_number(name: str, default: float) -> float:
    raw = os.environ.get(name, "").strip()
    try:
        value = float(raw) if raw else default
    except ValueError:
        return default
    return value if value >= 0 else default


def job_limits(memory_mb: int | None = None, timeout_s: float | None = None) -> JobLimits:
    """The limits: the given values, else the environment's, else the defaults."""
    memory = memory_mb if memory_mb is not None else _env_number(ENV_MEMORY, DEFAULT_MEMORY_MB)
    timeout = timeout_s if timeout_s is not None else _env_number(ENV_TIMEOUT, DEFAULT_TIMEOUT_S)
    return JobLimits(memory_mb=int(memory), timeout_s=float(timeout))


def limit_memory(memory_mb: int) -> None:
    """In the worker: cap this process's address space (never above an existing hard limit)."""
    if memory_mb <= 0:
        return
    try:
        import resource
    except ImportError:  # not on this platform
        return
    try:
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        limit = memory_mb * MiB
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    except (ValueError, OSError):
        pass


def _what(kind: str) -> str:
    return "Q/A 生成" if kind == "qa" else "取り込み"


def memory_message(kind: str, collection: str, memory_mb: int) -> str:
    return (
        f"{_what(kind)}のジョブがメモリの上限({memory_mb:,} MB、{ENV_MEMORY})を超えたため"
        f"中止しました。コレクション「{collection}」は最後に確定した状態のままです。"
        "ファイルを分けるか、上限を上げてもう一度実行してください"
    )


def timeout_message(kind: str, collection: str, timeout_s: float) -> str:
    return (
        f"{_what(kind)}のジョブが制限時間({timeout_s:,.0f} 秒、{ENV_TIMEOUT})を超えたため"
        f"中止しました。コレクション「{collection}」は最後に確定した状態のままです。"
        "ファイルを分けるか、制限時間を延ばしてもう一度実行してください"
    )

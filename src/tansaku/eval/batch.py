"""The accuracy batch's latest figures, kept for monitoring: the design's ``recall_batch_gauge``.

``tansaku eval DATASET --record`` (a person runs the batch and hands its result over) keeps the
batch metrics of each evaluated configuration in ``<workspace>/logs/eval-batch.json``, one entry
per (dataset, configuration), the newest replacing the older; a running server exposes them on
``/metrics`` as the gauge ``tansaku_recall_batch{dataset, config, metric}`` (``recall@10``,
``p@10``, ``mrr@10``, ``ndcg@10``) with ``tansaku_recall_batch_timestamp_seconds`` — read from
the file at every scrape, so a new batch shows without a restart.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tansaku.files import atomic_write, read_json_object

if TYPE_CHECKING:
    from tansaku.eval.runner import EvalReport

FILE = "eval-batch.json"
BATCH_METRICS = ("recall@10", "p@10", "mrr@10", "ndcg@10")


def batch_file(logs_dir: Path) -> Path:
    return logs_dir / FILE


def read_batches(path: Path) -> dict[str, dict[str, dict[str, Any]]]:
    """dataset -> configuration -> {metric: value, ..., "recorded_at": epoch seconds}; an
    absent or unreadable file is no batch."""
    return {
        str(ds): {str(c): dict(v) for c, v in cfgs.items() if isinstance(v, dict)}
        for ds, cfgs in read_json_object(path).items()
        if isinstance(cfgs, dict)
    }


def record_batch(report: EvalReport, path: Path, *, now: float | None = None) -> dict[str, Any]:
    """Keep ``report``'s batch metrics in ``path`` (each of its configurations replaces the
    previous batch of the same dataset and configuration); returns what was recorded."""
    recorded_at = time.time() if now is None else now
    batches = read_batches(path)
    entry = batches.setdefault(report.dataset.name, {})
    for config in report.configs:
        values = {
            m: round(float(config.metrics[m]), 6) for m in BATCH_METRICS if m in config.metrics
        }
        entry[config.name] = values | {"recorded_at": recorded_at}
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, json.dumps(batches, ensure_ascii=False, indent=1, sort_keys=True))
    return {report.dataset.name: entry}


__all__ = ["BATCH_METRICS", "batch_file", "read_batches", "record_batch"]

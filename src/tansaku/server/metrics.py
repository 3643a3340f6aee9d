"""Prometheus metrics of one app, in a registry of its own (never the process-global one: two
apps in one process, as in the tests, count separately).

``tansaku_search_total``, ``tansaku_zero_hit_total``, ``tansaku_search_latency_seconds{mode}``,
``tansaku_feedback_total{rating,query_type}``, ``tansaku_ask_total{outcome}``,
``tansaku_ingest_chunks_total`` and ``tansaku_http_requests_total{route,status}`` — the route
label is the route's template (``/api/jobs/{job_id}``), never the raw path, so the number of
series stays bounded whatever clients send. ``tansaku_recall_batch{dataset,config,metric}`` and
``tansaku_recall_batch_timestamp_seconds{dataset,config}``: the accuracy batch recorded by
``tansaku eval --record`` (``tansaku.eval.batch``), read from its file at every scrape.
"""

from __future__ import annotations

from pathlib import Path

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from tansaku.search.types import SearchResult

LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
UNMATCHED_ROUTE = "(unmatched)"


def search_mode(result: SearchResult) -> str:
    """The latency label of a search: its axes' modes, sorted and joined (``bm25+dense``)."""
    modes = sorted({a.mode.value for a in result.plan.stage.axes})
    return "+".join(modes) or "none"


class Metrics:
    content_type = CONTENT_TYPE_LATEST

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.search_total = Counter("tansaku_search", "Searches run by the server", registry=r)
        self.zero_hit_total = Counter(
            "tansaku_zero_hit", "Searches that returned no hit", registry=r
        )
        self.search_latency = Histogram(
            "tansaku_search_latency_seconds",
            "Search latency by the modes of its axes",
            ["mode"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.feedback_total = Counter(
            "tansaku_feedback", "Feedback received", ["rating", "query_type"], registry=r
        )
        self.ask_total = Counter("tansaku_ask", "Agent turns by outcome", ["outcome"], registry=r)
        self.ingest_chunks_total = Counter(
            "tansaku_ingest_chunks", "Chunks written by ingest jobs", registry=r
        )
        self.http_requests_total = Counter(
            "tansaku_http_requests", "HTTP requests", ["route", "status"], registry=r
        )

    def observe_search(self, result: SearchResult, seconds: float) -> None:
        self.search_total.inc()
        if not result.hits:
            self.zero_hit_total.inc()
        self.search_latency.labels(mode=search_mode(result)).observe(seconds)

    def render(self) -> bytes:
        return generate_latest(self.registry)


def batch_gauges(path: Path) -> bytes:
    """The recorded accuracy batch as Prometheus text (nothing when none was recorded)."""
    from tansaku.eval.batch import BATCH_METRICS, read_batches

    batches = read_batches(path)
    if not batches:
        return b""
    registry = CollectorRegistry(auto_describe=True)
    value = Gauge(
        "tansaku_recall_batch",
        "Accuracy batch (tansaku eval --record): recall@10, p@10, mrr@10, ndcg@10",
        ["dataset", "config", "metric"],
        registry=registry,
    )
    stamp = Gauge(
        "tansaku_recall_batch_timestamp_seconds",
        "When the accuracy batch was recorded",
        ["dataset", "config"],
        registry=registry,
    )
    for dataset, configs in sorted(batches.items()):
        for config, figures in sorted(configs.items()):
            for metric in BATCH_METRICS:
                if isinstance(figures.get(metric), int | float):
                    value.labels(dataset, config, metric).set(float(figures[metric]))
            if isinstance(figures.get("recorded_at"), int | float):
                stamp.labels(dataset, config).set(float(figures["recorded_at"]))
    return generate_latest(registry)
